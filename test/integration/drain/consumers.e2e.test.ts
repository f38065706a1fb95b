// Behaviours 6 and 7 of the drain controller (issue 27): the other ways a claim's consumer is found
// and takes part, against the real workload cluster and the real lifecycle binaries.
// 7. A claim a Cluster API provider made (claim → IroncoreMetalMachine → Machine, with Cluster API's
//    own CRDs from the published sigs.k8s.io/cluster-api module): its Node is the Machine's
//    status.nodeRef, reached with the Cluster's `<cluster>-kubeconfig` Secret, and the namespace's
//    MachineDrainRules decide its pods (Skip stays, Drain by order: a later group only once the
//    earlier one is gone).
// 6. The CCM's label relay (a stand-in, e2e/peers/ccm-stand-in.ts) beside the typed path on the same
//    claim: the Node's maintenance-approved arrives while the drain is still under way, and still the
//    maintenance starts only once the Node is drained, with exactly one approval of its uid.
import { join } from 'node:path';
import { expect, it } from '@jest/globals';
import type { KubeObject } from '../../../api/schema/meta.js';
import { installCRDFiles } from '../../../e2e/harness/control-plane.js';
import { waitFor } from '../../../e2e/harness/env.js';
import { preparedDir } from '../../../e2e/harness/k8s-tools.js';
import { podsOf } from '../../../e2e/harness/testing/workloads.js';
import { CcmStandIn } from '../../../e2e/peers/ccm-stand-in.js';
import { CAPI_INFRA_GROUP } from '../../../controllers/drain/capi.js';
import { ClusterType, DrainRuleType, MachineType } from '../../../controllers/drain/capi-source.js';
import { Core, type ResourceType } from '../../../lib/kube/resources.js';
import { LEGACY_APPROVED_LABEL, LEGACY_NEEDED_LABEL } from '../../../contract/legacy-labels.js';
import { conditionOf, finish, waitForGone, waitForMaintenance } from '../lifecycle/harness.js';
import {
  DRAIN_SA,
  drainedThenApproved,
  endedAndUncordoned,
  nodeOf,
  nodesOf,
  SHOP,
  useDrainWorld,
  workloadOn,
} from './world.js';

const InfraMachineType: ResourceType = {
  group: CAPI_INFRA_GROUP,
  version: 'v1alpha1',
  kind: 'IroncoreMetalMachine',
  plural: 'ironcoremetalmachines',
  namespaced: true,
};

const w = useDrainWorld(async ({ lc }) => {
  const crds = preparedDir('capi-crds.sh');
  await installCRDFiles(lc.admin, [
    ...['clusters', 'machines', 'machinedrainrules'].map((k) => join(crds, `cluster.x-k8s.io_${k}.yaml`)),
    join(import.meta.dirname, 'fixtures', 'ironcoremetalmachines.crd.yaml'),
  ]);
});

const ownerRef = (o: KubeObject, controller = true) => ({
  apiVersion: o.apiVersion!,
  kind: o.kind!,
  name: o.metadata.name!,
  uid: o.metadata.uid!,
  controller,
});

/** Claim `index` as a Cluster API provider leaves it: owned by an IroncoreMetalMachine of Machine `name`. */
async function capiMachineFor(index: number, name: string, nodeName: string): Promise<void> {
  const { lc, f } = w;
  const ns = f.tenant;
  const admin = lc.admin;
  await admin.resource(Core.Secret).create({
    metadata: { name: `${name}-cluster-kubeconfig`, namespace: ns },
    data: { value: Buffer.from(w.workloadKubeconfig).toString('base64') },
  } as never);
  await admin.resource(ClusterType).create({
    metadata: { name: `${name}-cluster`, namespace: ns, labels: { env: 'prod' } },
    spec: { paused: false },
  } as never);
  const machine = await admin.resource<KubeObject>(MachineType).create({
    metadata: { name, namespace: ns, labels: { pool: 'a' } },
    spec: {
      clusterName: `${name}-cluster`,
      bootstrap: { dataSecretName: `${name}-bootstrap` },
      infrastructureRef: { apiGroup: InfraMachineType.group, kind: InfraMachineType.kind, name },
    },
  } as never);
  await admin
    .resource(MachineType)
    .patch(name, { status: { nodeRef: { name: nodeName } } }, { namespace: ns, subresource: 'status' });
  const infra = await admin.resource<KubeObject>(InfraMachineType).create({
    metadata: { name, namespace: ns, ownerReferences: [ownerRef(machine)] },
    spec: {},
  } as never);
  await lc.claims.patch(
    f.claims[index]!.name,
    { metadata: { ownerReferences: [ownerRef(infra)] } },
    { namespace: ns },
  );
}

it('finds a Cluster API Machine’s Node and drains it by its MachineDrainRules', async () => {
  const { wc, lc, f } = w;
  // The Machine's Node has no providerID naming the claim: only the CAPI chain leads to it.
  const node = 'capi-worker';
  await wc.addNodes([{ name: node }]);
  await capiMachineFor(0, 'worker-0', node);
  const rule = (name: string, spec: Record<string, unknown>) =>
    lc.admin.resource(DrainRuleType).create({ metadata: { name, namespace: f.tenant }, spec } as never);
  await rule('a-skip-logs', {
    drain: { behavior: 'Skip' },
    machines: [
      { selector: { matchLabels: { pool: 'a' } }, clusterSelector: { matchLabels: { env: 'prod' } } },
    ],
    pods: [{ selector: { matchLabels: { app: 'logs' } } }],
  });
  await rule('b-db-last', {
    drain: { behavior: 'Drain', order: 10 },
    pods: [{ selector: { matchLabels: { app: 'db' } } }],
  });
  const one = { maxUnavailable: 1 };
  await workloadOn(wc, 'web', node, 2, { ...one, selector: { matchLabels: { app: 'web' } } });
  await workloadOn(wc, 'db', node, 1, { ...one, selector: { matchLabels: { app: 'db' } } });
  await workloadOn(wc, 'logs', node, 1, { ...one, selector: { matchLabels: { app: 'logs' } } });
  await wc.addNodes([{ name: 'capi-spare', labels: { 'fits-web': 'yes', 'fits-db': 'yes' } }]);

  // Order 10 only after every order-0 pod is gone: never a db pod leaving while a web pod is still here.
  const violations: string[] = [];
  const sampler = setInterval(() => {
    void podsOf(wc.admin, SHOP, '').then((pods) => {
      const here = pods.filter((p) => p.spec?.nodeName === node);
      const web = here.filter((p) => p.metadata.labels?.app === 'web');
      const db = here.filter((p) => p.metadata.labels?.app === 'db' && !p.metadata.deletionTimestamp);
      if (web.length > 0 && db.length === 0)
        violations.push(`${web.length} web pod(s) left, db already leaving`);
    });
  }, 50);
  try {
    await lc.maintenance('capi-drain', f.servers[0]!);
    const { drained } = await drainedThenApproved(lc, 'capi-drain');
    expect(drained.status?.drain).toMatchObject({ node, cordoned: 'ByUs', podsLeft: 0 });
    expect(drained.status?.drain?.via).toContain(`Machine ${f.tenant}/worker-0`);
  } finally {
    clearInterval(sampler);
  }
  expect(violations).toEqual([]);
  const pods = await podsOf(wc.admin, SHOP, '');
  const on = (app: string) => pods.filter((p) => p.metadata.labels?.app === app).map((p) => p.spec?.nodeName);
  expect(on('web')).toEqual(['capi-spare', 'capi-spare']);
  expect(on('db')).toEqual(['capi-spare']);
  // Skip: the rule keeps the logs pod where it is, and the drain still counts as done.
  expect(on('logs')).toEqual([node]);

  await endedAndUncordoned(w, 'capi-drain', node);
}, 240_000);

it('keeps the CCM label relay working beside the typed path: one approval, after the drain', async () => {
  const { wc, lc, f } = w;
  const ccm = new CcmStandIn(lc.admin, wc.admin, f.tenant);
  await ccm.start();
  let sampler: NodeJS.Timeout | undefined;
  try {
    const node = nodeOf(1);
    const claimName = f.claims[1]!.name;
    await workloadOn(wc, 'shop', node, 2, { maxUnavailable: 1, selector: { matchLabels: { app: 'shop' } } });
    await wc.addNodes([{ name: 'ccm-spare', labels: { 'fits-shop': 'yes' } }]);
    const m = await lc.maintenance('ccm-side', f.servers[1]!);
    const uid = m.metadata.uid!;
    // One approval of one uid, whichever path wrote it: never two entries for it on the claim.
    let most = 0;
    sampler = setInterval(() => {
      void lc.claims.get(claimName, f.tenant).then((c) => {
        const n = (c.spec.maintenance?.approvals ?? []).filter((a) => a.maintenanceUID === uid).length;
        most = Math.max(most, n);
      });
    }, 50);
    // The relay: the claim's maintenance-needed reaches the Node, and whoever watches Nodes (here the
    // test, as a node-maintenance tool would) approves there while our drain is under way (our
    // deferral holds the claim).
    await waitFor('maintenance-needed mirrored onto the Node', async () => {
      const n = await nodesOf(wc).get(node);
      return n.metadata.labels?.[LEGACY_NEEDED_LABEL] === 'true';
    });
    await waitFor('the drain controller deferring while it drains', async () => {
      const c = await lc.claims.get(claimName, f.tenant);
      return c.spec.maintenance?.deferrals?.some(
        (d) => d.maintenanceUID === uid && d.requestedBy === DRAIN_SA,
      );
    });
    await nodesOf(wc).patch(node, { metadata: { labels: { [LEGACY_APPROVED_LABEL]: 'true' } } });
    await waitFor('the CCM approving the claim', async () => {
      const c = await lc.claims.get(claimName, f.tenant);
      return c.metadata.labels?.[LEGACY_APPROVED_LABEL] === 'true';
    });

    const running = await waitForMaintenance(
      lc,
      'ccm-side',
      'InMaintenance',
      (x) => x.status?.state === 'InMaintenance',
      {
        timeoutMs: 90_000,
      },
    );
    // The label's approval did not jump the drain: by the time the server is taken, the Node is empty.
    expect(conditionOf(running, 'Drained')).toMatchObject({ status: 'True' });
    const left = (await podsOf(wc.admin, SHOP, 'app=shop')).filter((p) => p.spec?.nodeName === node);
    expect(left).toEqual([]);
    clearInterval(sampler);
    expect(most).toBe(1);
    expect(running.status?.approval?.source).toBe('Owner');
    expect(ccm.writes.claimApproved).toBeGreaterThanOrEqual(1);

    await finish(lc, 'ccm-side');
    await waitForGone(lc, 'ccm-side');
    await waitFor('the relay cleared on both sides', async () => {
      const c = await lc.claims.get(claimName, f.tenant);
      const n = await nodesOf(wc).get(node);
      return (
        c.metadata.labels?.[LEGACY_NEEDED_LABEL] === undefined &&
        c.metadata.labels?.[LEGACY_APPROVED_LABEL] === undefined &&
        n.metadata.labels?.[LEGACY_NEEDED_LABEL] === undefined &&
        !n.spec?.unschedulable
      );
    });
  } finally {
    clearInterval(sampler);
    await ccm.stop();
  }
}, 240_000);
