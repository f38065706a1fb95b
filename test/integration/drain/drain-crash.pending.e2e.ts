// Behaviour 4 of the drain controller (issue 27), PENDING: kill -9 of the drain controller mid-drain,
// 10 rounds: the drain resumes, only pods of the drained Node are ever evicted, and the Node is
// uncordoned in the end. It passed once (10 rounds, 68 s) and then stalled twice on a loaded machine:
// after a restart the new leader evicted once and then nothing for 30 s (no error logged). Waiting for
// that to be understood (suspect: the first pass after a restart and the workqueue's requeue); joins
// drain.e2e.test.ts with the fix. Run: METAL_TEST_PENDING=1 npx jest --selectProjects pending.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { Core } from '../../../lib/kube/resources.js';
import { applyManifest, tokenKubeconfig } from '../../../e2e/harness/processes.js';
import { REPO_ROOT } from '../../../e2e/harness/control-plane.js';
import { waitFor } from '../../../e2e/harness/env.js';
import {
  startWorkloadCluster,
  type Node,
  type WorkloadCluster,
} from '../../../e2e/harness/workload-cluster.js';
import { deploymentObject, podsOf, type Pdb } from '../../../e2e/harness/testing/workloads.js';
import { claimProviderID } from '../../../contract/names.js';
import {
  finish,
  startLifecycle,
  waitForGone,
  waitForMaintenance,
  type Fleet,
  type Lifecycle,
} from '../lifecycle/harness.js';

const SHOP = 'shop';

let wc: WorkloadCluster;
let lc: Lifecycle;
let f: Fleet;

const nodeOf = (i: number) => `node-${i}`;

beforeAll(async () => {
  wc = await startWorkloadCluster();
  lc = await startLifecycle({ actorHoldMs: 1000, extra: ['drain-controller'] });
  f = await lc.fleet('drain', { servers: 5, claims: 'consumer' });
  // The workload cluster's side: exactly the documented Role, and its kubeconfig in a Secret the
  // policy names; the drain controller may read that Secret through a RoleBinding in the tenant.
  await applyManifest(wc.admin, `${REPO_ROOT}/manifests/drain-controller/workload/rbac.yaml`);
  const { kubeconfig } = await tokenKubeconfig(wc.admin, 'kube-system', 'metal-drain');
  await lc.admin.resource(Core.Secret).create({
    metadata: { name: 'workload-kubeconfig', namespace: f.tenant },
    data: { kubeconfig: readFileSync(kubeconfig).toString('base64') },
  } as never);
  await lc.admin.resource(Core.RoleBinding).create({
    metadata: { name: 'drain-credentials', namespace: f.tenant },
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'metal-maintenance-drain-credentials',
    },
    subjects: [{ kind: 'ServiceAccount', name: 'drain-controller', namespace: 'metal-maintenance-system' }],
  } as never);
  await lc.setPolicy({
    drain: {
      leadTime: '0s',
      timeout: '20s',
      onTimeout: 'Fail',
      emptyDirData: 'Block',
      unmanagedPods: 'Block',
      clusters: [{ namespace: f.tenant, secretName: 'workload-kubeconfig', secretKey: 'kubeconfig' }],
    },
  } as never);
  await wc.admin.resource(Core.Namespace).create({ metadata: { name: SHOP } });
  // Claim i is consumed by node-i; node-2 was cordoned by an admin before anything of ours ran.
  await wc.addNodes(
    f.claims.map((c, i) => ({
      name: nodeOf(i),
      providerID: claimProviderID(c.namespace, c.name),
      labels: { pool: 'main' },
      unschedulable: i === 2,
    })),
  );
}, 300_000);

afterAll(async () => {
  await lc?.stop();
  await wc?.stop();
}, 90_000);

const nodes = () => wc.admin.resource<Node>(Core.Node);

/**
 * A Deployment whose pods need the Node label `fits-<name>`: they start on `node` (the only Node with
 * it); spare Nodes added with the label later are where evicted pods land.
 */
async function workloadOn(name: string, node: string, replicas: number, pdb: Pdb['spec']): Promise<void> {
  const fits = `fits-${name}`;
  await nodes().patch(node, { metadata: { labels: { [fits]: 'yes' } } });
  await wc.admin
    .resource(Core.Deployment)
    .create(deploymentObject(SHOP, name, replicas, { nodeSelector: { [fits]: 'yes' } }));
  await wc.admin
    .resource<Pdb>(Core.PodDisruptionBudget)
    .create({ metadata: { name, namespace: SHOP }, spec: pdb });
  await waitFor(`${replicas} ${name} pods running on ${node}`, async () => {
    const pods = (await podsOf(wc.admin, SHOP, `app=${name}`)).filter((p) => p.status?.phase === 'Running');
    return pods.length === replicas && pods.every((p) => p.spec?.nodeName === node);
  });
}

it('resumes after kill -9 mid-drain (10 rounds), evicting only pods of the drained Node, and uncordons', async () => {
  const replicas = 12;
  await workloadOn('batch', nodeOf(3), replicas, {
    maxUnavailable: 1,
    selector: { matchLabels: { app: 'batch' } },
  });
  await wc.addNodes([{ name: 'spare-c', labels: { 'fits-batch': 'yes' } }]);
  const seen = new Map<string, string>();
  const deleted = new Set<string>();
  const watch = setInterval(() => {
    void podsOf(wc.admin, SHOP, 'app=batch').then((pods) => {
      for (const p of pods) {
        seen.set(p.metadata.name!, p.spec?.nodeName ?? '');
        if (p.metadata.deletionTimestamp) deleted.add(p.metadata.name!);
      }
      for (const name of seen.keys()) if (!pods.some((p) => p.metadata.name === name)) deleted.add(name);
    });
  }, 50);
  const onNode = async () =>
    (await podsOf(wc.admin, SHOP, 'app=batch')).filter((p) => p.spec?.nodeName === nodeOf(3)).length;
  try {
    await lc.maintenance('drain-crash', f.servers[3]!);
    for (let round = 0; round < 10; round++) {
      const before = await onNode();
      if (before === 0) break;
      await waitFor(`round ${round}: a pod leaves node-3`, async () => (await onNode()) < before, {
        timeoutMs: 30_000,
      });
      await lc.kill('drain-controller');
      await lc.start('drain-controller');
    }
    await waitForMaintenance(lc, 'drain-crash', 'drained', (x) => x.status?.drain?.phase === 'Drained', {
      timeoutMs: 60_000,
    });
  } finally {
    clearInterval(watch);
  }
  // Only pods that ran on node-3 were evicted: none of their replacements was touched.
  const wrong = [...deleted].filter((name) => seen.get(name) !== nodeOf(3));
  expect(wrong).toEqual([]);
  expect([...deleted].length).toBe(replicas);
  await waitForMaintenance(lc, 'drain-crash', 'InMaintenance', (x) => x.status?.state === 'InMaintenance');
  await finish(lc, 'drain-crash');
  await waitForGone(lc, 'drain-crash');
  await waitFor('node-3 uncordoned', async () => !(await nodes().get(nodeOf(3))).spec?.unschedulable);
}, 240_000);
