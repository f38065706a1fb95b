// Behaviour 4 of the drain controller (issue 27), PENDING: kill -9 of the drain controller mid-drain,
// 10 rounds: the drain resumes, only pods of the drained Node are ever evicted, and the Node is
// uncordoned in the end. It passed once (10 rounds, 68 s) and then stalled twice on a loaded machine:
// after a restart the new leader evicted once and then nothing for 30 s (no error logged). Waiting for
// that to be understood (suspect: the first pass after a restart and the workqueue's requeue); joins
// drain.e2e.test.ts with the fix. Run: METAL_TEST_PENDING=1 npx jest --selectProjects pending.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { SETUP_TIMEOUT_MS } from '../../../e2e/harness/dist.js';
import { waitFor } from '../../../e2e/harness/env.js';
import { type WorkloadCluster } from '../../../e2e/harness/workload-cluster.js';
import { podsOf, type Pdb } from '../../../e2e/harness/testing/workloads.js';
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
