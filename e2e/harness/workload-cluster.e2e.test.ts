// The workload-cluster harness behaves like a real cluster where a drain depends on it: the
// disruption controller keeps PodDisruptionBudget status, the Eviction API answers 429 while a budget
// allows no disruption, the ReplicaSet controller replaces an evicted pod, the scheduler puts the
// replacement on a schedulable Node, and kwok runs it. Nothing is left running afterwards.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { Core } from '../../lib/kube/resources.js';
import type { KubeApiError } from '../../lib/kube/errors.js';
import { isTooManyRequests } from '../../lib/kube/errors.js';
import { waitFor } from './env.js';
import { startWorkloadCluster, type WorkloadCluster } from './workload-cluster.js';
import { deploymentObject, evict, podsOf, type Pdb, type Pod } from './testing/workloads.js';

let wc: WorkloadCluster;
const NS = 'default';
const NODES = ['w1', 'w2', 'w3', 'w4'];

beforeAll(async () => {
  wc = await startWorkloadCluster();
  await wc.addNodes(NODES.map((name) => ({ name })));
}, 300_000);

afterAll(async () => {
  await wc?.stop();
}, 60_000);

it('keeps PDB status, refuses an eviction with 429 while the budget is spent, and reschedules', async () => {
  const { admin } = wc;
  await admin.resource(Core.Deployment).create(deploymentObject(NS, 'web', 3));
  const pdbs = admin.resource<Pdb>(Core.PodDisruptionBudget);
  await pdbs.create({
    metadata: { name: 'web', namespace: NS },
    spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } },
  });
  const budget = (want: number) =>
    waitFor(`PDB web with disruptionsAllowed=${want}`, async () => {
      const p = await pdbs.get('web', NS);
      return p.status?.expectedPods === 3 && p.status.disruptionsAllowed === want && p;
    });
  const before = await budget(1);
  expect(before.status?.currentHealthy).toBe(3);
  const running = await waitFor('3 running web pods', async () => {
    const pods = (await podsOf(admin, NS, 'app=web')).filter((p) => p.status?.phase === 'Running');
    return pods.length === 3 && pods;
  });

  // The first eviction spends the budget; the second, before a replacement is ready, is refused. Every
  // Node is cordoned meanwhile: kwok starts a replacement within milliseconds, and a ready one would give
  // the budget back before the second eviction arrives.
  const [first, second] = running as [Pod, Pod];
  const nodes = admin.resource(Core.Node);
  for (const n of NODES) await nodes.patch(n, { spec: { unschedulable: true } });
  await evict(admin, first);
  let refused: unknown;
  try {
    await evict(admin, second);
  } catch (e) {
    refused = e;
  }
  for (const n of NODES.filter((n) => n !== first.spec!.nodeName)) {
    await nodes.patch(n, { spec: { unschedulable: false } });
  }
  expect(isTooManyRequests(refused)).toBe(true);
  const status = (refused as KubeApiError).status;
  expect(status.message).toMatch(/violate the pod's disruption budget/);
  // The cause names the budget and its arithmetic (what the drain controller reports as a blocker).
  expect(status.details?.causes?.map((c) => c.message)).toEqual([
    expect.stringMatching(/disruption budget web needs 2 healthy pods and has 2 currently/),
  ]);

  // The ReplicaSet replaces the evicted pod on another (schedulable) Node; the budget recovers.
  const after = await waitFor('a replacement pod running elsewhere', async () => {
    const pods = (await podsOf(admin, NS, 'app=web')).filter(
      (p) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp,
    );
    const names = pods.map((p) => p.metadata.name);
    return pods.length === 3 && !names.includes(first.metadata.name) && pods;
  });
  const before3 = new Set(running.map((p) => p.metadata.name));
  const moved = after.filter((p) => !before3.has(p.metadata.name));
  expect(moved).toHaveLength(1);
  expect(moved[0]!.spec?.nodeName).not.toBe(first.spec?.nodeName);
  await budget(1);
  await evict(admin, second);
});

it('stops every process and removes its directory', async () => {
  const pids = wc.pids();
  expect(pids).toHaveLength(5);
  await wc.stop();
  expect(existsSync(wc.dir)).toBe(false);
  // A process that exited may linger as a zombie until its parent (init, for the setsid'd ones) reaps it.
  const running = (pid: number) => {
    try {
      return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return false;
    }
  };
  expect(pids.filter(running)).toEqual([]);
  // A second stop is harmless (afterAll calls it too).
  await wc.stop();
});
