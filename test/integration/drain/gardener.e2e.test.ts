// Behaviour 7's Gardener half (issue 27), against the real workload cluster and the real lifecycle
// binaries: a claim the IronCore MCM provider made is consumed by the Node of a Gardener MCM Machine
// (machine.sapcloud.io/v1alpha1, CRD written from the published API in fixtures/) whose
// spec.providerID names the claim; its status.node is the Node, whatever that Node's own providerID
// says. The Machines are read in the namespace the policy names, with exactly the documented role.
// And the GEP-31 in-place update handshake (policy mcm.inPlaceUpdate) against a stand-in for the
// shoot's MCM (e2e/peers/mcm-stand-in.ts): the drain controller selects the Node and waits, the
// stand-in cordons and drains it through the Eviction API (the budget holds), labels it
// ready-for-update, we approve; after the maintenance we report update-successful, the stand-in
// uncordons and clears its labels, and our annotation goes.
import { join } from 'node:path';
import { expect, it } from '@jest/globals';
import type { KubeObject } from '../../../api/schema/meta.js';
import { installCRDFiles, REPO_ROOT } from '../../../e2e/harness/control-plane.js';
import { waitFor } from '../../../e2e/harness/env.js';
import { applyManifest } from '../../../e2e/harness/processes.js';
import { podsOf } from '../../../e2e/harness/testing/workloads.js';
import { McmMachineType } from '../../../controllers/drain/views.js';
import { McmStandIn, MCM_LABELS } from '../../../e2e/peers/mcm-stand-in.js';
import {
  claimProviderID,
  IN_PLACE_UPDATE_FOR_ANNOTATION,
  IN_PLACE_UPDATE_UIDS_ANNOTATION,
} from '../../../contract/names.js';
import { GEP31_FAILED_REASON } from '../../../controllers/drain/gep31.js';
import { Core } from '../../../lib/kube/resources.js';
import {
  conditionOf,
  finish,
  HOLD_FOREVER,
  waitForGone,
  waitForMaintenance,
  waitForState,
} from '../lifecycle/harness.js';
import {
  DRAIN_SA,
  drainedThenApproved,
  drainPolicy,
  endedAndUncordoned,
  nodeOf,
  nodesOf,
  sampleRunning,
  SHOP,
  useDrainWorld,
  workloadOn,
} from './world.js';

/** Where the shoot's Machines are (in a real landscape: the shoot's namespace in the seed). */
const SHOOT_NS = 'shoot--tenant--prod';

const w = useDrainWorld(async ({ wc, lc, f }) => {
  const admin = wc.admin;
  await installCRDFiles(admin, [
    join(import.meta.dirname, 'fixtures', 'machines.machine.sapcloud.io.crd.yaml'),
  ]);
  await admin.resource(Core.Namespace).create({ metadata: { name: SHOOT_NS } });
  // The documented role for MCM Machines, bound in the Machines' namespace to the identity whose
  // kubeconfig the drain controller has (the workload cluster's own here).
  await applyManifest(admin, `${REPO_ROOT}/manifests/drain-controller/workload/mcm-rbac.yaml`);
  await admin.resource(Core.RoleBinding).create({
    metadata: { name: 'metal-drain-mcm', namespace: SHOOT_NS },
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'metal-maintenance-drain-mcm',
    },
    subjects: [{ kind: 'ServiceAccount', name: 'metal-drain', namespace: 'kube-system' }],
  } as never);
  await lc.setPolicy({ drain: drainPolicy(f.tenant, { mcm: { namespace: SHOOT_NS } }) } as never);
});

it('finds a Gardener MCM Machine’s Node by spec.providerID and status.node, and drains it', async () => {
  const { wc, lc, f } = w;
  const claim = f.claims[3]!;
  const node = 'mcm-worker';
  await wc.addNodes([{ name: node }]);
  // The MCM provider's Machine, before its Node joined: no status.node yet.
  await wc.admin.resource<KubeObject>(McmMachineType).create({
    metadata: { name: 'prod-worker-z1-abc12', namespace: SHOOT_NS },
    spec: {
      providerID: claimProviderID(claim.namespace, claim.name),
      class: { kind: 'MachineClass', name: 'x' },
    },
  } as never);
  await workloadOn(wc, 'api', node, 2, { maxUnavailable: 1, selector: { matchLabels: { app: 'api' } } });
  await wc.addNodes([{ name: 'mcm-spare', labels: { 'fits-api': 'yes' } }]);

  await lc.maintenance('mcm-drain', f.servers[3]!);
  const waiting = await waitForMaintenance(
    lc,
    'mcm-drain',
    'NodeNotFound naming the Machine',
    (x) => x.status?.drain?.phase === 'NodeNotFound',
    { timeoutMs: 30_000 },
  );
  expect(conditionOf(waiting, 'Drained')).toMatchObject({
    status: 'False',
    reason: 'NodeNotFound',
    message: `MCM Machine ${SHOOT_NS}/prod-worker-z1-abc12 has no status.node yet`,
  });

  await wc.admin
    .resource(McmMachineType)
    .patch('prod-worker-z1-abc12', { status: { node } }, { namespace: SHOOT_NS, subresource: 'status' });
  const { drained } = await drainedThenApproved(lc, 'mcm-drain');
  expect(drained.status?.drain).toMatchObject({ node, cordoned: 'ByUs', podsLeft: 0 });
  expect(drained.status?.drain?.via).toBe(`MCM Machine ${SHOOT_NS}/prod-worker-z1-abc12 status.node`);
  const pods = await podsOf(wc.admin, SHOP, 'app=api');
  expect(pods.map((p) => p.spec?.nodeName)).toEqual(['mcm-spare', 'mcm-spare']);
  // The Node whose providerID names the claim is not the consumer here: it was never cordoned.
  expect((await nodesOf(wc).get(nodeOf(3))).spec?.unschedulable).toBeFalsy();

  await endedAndUncordoned(w, 'mcm-drain', node);
}, 240_000);

it('hands a Gardener Node to its MCM (GEP-31 labels), approves once MCM says ready-for-update', async () => {
  const { wc, lc, f } = w;
  await lc.setPolicy({
    drain: drainPolicy(f.tenant, { mcm: { namespace: SHOOT_NS, inPlaceUpdate: true } }),
  } as never);
  const claim = f.claims[4]!;
  const node = 'ip-worker';
  await wc.addNodes([{ name: node }]);
  await wc.admin.resource<KubeObject>(McmMachineType).create({
    metadata: { name: 'prod-worker-z1-ip001', namespace: SHOOT_NS, labels: { node } },
    spec: { providerID: claimProviderID(claim.namespace, claim.name) },
  } as never);
  const replicas = 3;
  await workloadOn(wc, 'cart', node, replicas, {
    maxUnavailable: 1,
    selector: { matchLabels: { app: 'cart' } },
  });
  await wc.addNodes([{ name: 'ip-spare', labels: { 'fits-cart': 'yes' } }]);
  const mcm = new McmStandIn(wc.admin);
  // The budget holds throughout: never fewer than replicas - 1 cart pods running.
  const sampler = sampleRunning(wc, 'cart', replicas);
  try {
    await lc.maintenance('in-place', f.servers[4]!);
    // Without MCM nothing moves: selected, deferred, waiting; no pod of ours evicted, no cordon of ours.
    const waiting = await waitForMaintenance(
      lc,
      'in-place',
      'waiting for MCM',
      (x) => x.status?.drain?.phase === 'Draining',
      { timeoutMs: 30_000 },
    );
    expect(conditionOf(waiting, 'Drained')?.message).toContain(
      `GEP-31: Node ${node} selected-for-update; waiting for the shoot's MCM`,
    );
    const selected = await nodesOf(wc).get(node);
    expect(selected.metadata.labels).toMatchObject({
      [MCM_LABELS.candidate]: 'true',
      [MCM_LABELS.selected]: 'true',
    });
    expect(selected.metadata.annotations?.[IN_PLACE_UPDATE_FOR_ANNOTATION]).toBe(
      `${claim.namespace}/${claim.name}`,
    );
    await new Promise((r) => setTimeout(r, 5000));
    expect((await nodesOf(wc).get(node)).spec?.unschedulable).toBeFalsy();
    const still = (await podsOf(wc.admin, SHOP, 'app=cart')).filter((p) => p.spec?.nodeName === node);
    expect(still).toHaveLength(replicas);
    expect((await lc.maintenances.get('in-place', lc.ns)).status?.state).not.toBe('InMaintenance');
    const c = await lc.claims.get(claim.name, claim.namespace);
    expect(c.spec.maintenance?.deferrals?.some((d) => d.requestedBy === DRAIN_SA)).toBe(true);

    await mcm.start();
    const { drained } = await drainedThenApproved(lc, 'in-place');
    expect(conditionOf(drained, 'Drained')?.message).toContain('ready-for-update');
    // MCM evicted each pod once; the drain controller evicted none of them.
    expect(mcm.counts.evicted.size).toBe(replicas);
    expect([...mcm.counts.evicted.values()].every((n) => n === 1)).toBe(true);
    expect((await nodesOf(wc).get(node)).spec?.unschedulable).toBe(true);

    await finish(lc, 'in-place');
    await waitForGone(lc, 'in-place');
    await waitFor(
      'MCM finished the update and our marks are gone',
      async () => {
        const n = await nodesOf(wc).get(node);
        const left = Object.keys(n.metadata.labels ?? {}).filter((l) =>
          l.startsWith('node.machine.sapcloud.io/'),
        );
        return (
          left.length === 0 &&
          !n.spec?.unschedulable &&
          n.metadata.annotations?.[IN_PLACE_UPDATE_FOR_ANNOTATION] === undefined
        );
      },
      { timeoutMs: 60_000 },
    );
    expect(mcm.counts.finished).toBeGreaterThanOrEqual(1);
  } finally {
    sampler.stop();
    await mcm.stop();
  }
  expect(sampler.fewest()).toBeGreaterThanOrEqual(replicas - 1);
}, 240_000);

it('reports update-failed, with the reason, when the maintenance the Node was handed over for fails', async () => {
  // The same Node and Machine as the test before (policy inPlaceUpdate still set): a new update of it.
  const { wc, lc, f } = w;
  const node = 'ip-worker';
  const mcm = new McmStandIn(wc.admin);
  await mcm.start();
  try {
    // Held by nobody but its maxDuration: 4 s after it starts, the maintenance controller fails it.
    const m = await lc.maintenance('in-place-fails', f.servers[4]!, { maxDuration: '4s' }, HOLD_FOREVER);
    await waitForMaintenance(
      lc,
      'in-place-fails',
      'InMaintenance',
      (x) => x.status?.state === 'InMaintenance',
      {
        timeoutMs: 90_000,
      },
    );
    const ready = await nodesOf(wc).get(node);
    expect(ready.metadata.labels?.[MCM_LABELS.ready]).toBe('true');
    expect(ready.metadata.annotations?.[IN_PLACE_UPDATE_UIDS_ANNOTATION]).toBe(m.metadata.uid);
    const failed = await waitForState(lc, 'in-place-fails', 'Failed', { timeoutMs: 40_000 });
    expect(conditionOf(failed, 'Failed')?.reason).toBe('MaxDurationExceeded');
    const reported = await waitFor(
      'update-failed on the Node',
      async () => {
        const n = await nodesOf(wc).get(node);
        return n.metadata.labels?.[MCM_LABELS.failed] === 'true' && n;
      },
      { timeoutMs: 30_000 },
    );
    expect(reported.metadata.annotations?.[GEP31_FAILED_REASON]).toContain(
      `ServerMaintenance ${lc.ns}/in-place-fails failed: MaxDurationExceeded`,
    );
    // Never both results: the stand-in's step 7 (uncordon, clear) is for update-successful only.
    await new Promise((r) => setTimeout(r, 3000));
    const after = await nodesOf(wc).get(node);
    expect(after.metadata.labels?.[MCM_LABELS.successful]).toBeUndefined();
    expect(after.spec?.unschedulable).toBe(true);
  } finally {
    await mcm.stop();
  }
  await finish(lc, 'in-place-fails');
  await waitForGone(lc, 'in-place-fails');
}, 240_000);
