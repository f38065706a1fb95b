// Behaviour 4 of the drain controller (issue 27), PENDING: kill -9 of the drain controller mid-drain,
// 10 rounds: the drain resumes, only pods of the drained Node are ever evicted, and the Node is
// uncordoned in the end. It passes (10 rounds, ~70 s) about half the time; the other runs stall one
// round for the cause the round's error now prints: a kill -9 during an eviction the API server had
// already admitted leaves the pod Running but listed in the PDB's status.disruptedPods (the server
// counts the disruption, then the pod delete is cancelled with the dropped connection), so the budget
// allows nothing until kube-controller-manager's disruption controller expires the entry after 2 min.
// The drain controller sees and names the refusal correctly; it cannot finish the admitted eviction
// without pods/delete in the workload cluster, which the documented workload Role does not grant.
// Joins drain.e2e.test.ts once the round wait covers that expiry or the controller finishes such
// evictions. Run: METAL_TEST_PENDING=1 npx jest --selectProjects pending.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { SETUP_TIMEOUT_MS } from '../../../e2e/harness/dist.js';
import { waitFor } from '../../../e2e/harness/env.js';
import { type WorkloadCluster } from '../../../e2e/harness/workload-cluster.js';
import { podsOf, type Pdb } from '../../../e2e/harness/testing/workloads.js';
import { Core } from '../../../lib/kube/resources.js';
import { finish, waitForGone, waitForMaintenance, type Fleet, type Lifecycle } from '../lifecycle/harness.js';
import {
  nodeOf,
  nodesOf,
  SHOP,
  startDrainWorld,
  stopDrainWorld,
  workloadOn as placeWorkload,
  type DrainWorld,
} from './world.js';

let w: DrainWorld | undefined;
let wc: WorkloadCluster;
let lc: Lifecycle;
let f: Fleet;

beforeAll(async () => {
  w = await startDrainWorld();
  ({ wc, lc, f } = w);
}, SETUP_TIMEOUT_MS);

afterAll(() => stopDrainWorld(w), 90_000);

const nodes = () => nodesOf(wc);
const workloadOn = (name: string, node: string, replicas: number, pdb: Pdb['spec']) =>
  placeWorkload(wc, name, node, replicas, pdb);

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
      }).catch(async (e: Error) => {
        // What the drain saw and what the budget allowed, for the stall this file is pending on.
        const m = await lc.maintenances.get('drain-crash', lc.ns);
        const pdb = await wc.admin.resource<Pdb>(Core.PodDisruptionBudget).get('batch', SHOP);
        const pods = (await podsOf(wc.admin, SHOP, 'app=batch')).map(
          (p) =>
            `${p.metadata.name}@${p.spec?.nodeName}:${p.status?.phase}${p.metadata.deletionTimestamp ? '(leaving)' : ''}`,
        );
        throw new Error(
          `${e.message}; maintenance ${m.status?.state} drain ${JSON.stringify(m.status?.drain)}; pdb ${JSON.stringify(pdb.status)}; pods ${pods.join(' ')}`,
        );
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
