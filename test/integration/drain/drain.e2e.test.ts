// Behaviours 1-3 of the drain controller (issue 27) against a real workload cluster
// (e2e/harness/workload-cluster.ts) and the real lifecycle controllers and webhook:
// 1. a Deployment under a PDB (maxUnavailable 1) leaves the claim's Node one pod at a time, then the
//    drain controller approves, the maintenance runs, and the Node is uncordoned afterwards;
// 2. a PDB that can never be satisfied: the blocking pod and its budget are named within 30 s, and at
//    drainTimeout the policy's choice (Fail) shows, with no approval;
// 3. a Node an admin cordoned before the maintenance is still cordoned after it;
// 4. (kill -9 mid-drain: drain-crash.e2e.test.ts)
// (6 and 7: consumers.e2e.test.ts)
// 5. the workload cluster's API unreachable: a visible condition, and the deadline path still works.
import { expect, it } from '@jest/globals';
import { waitFor } from '../../../e2e/harness/env.js';
import { podsOf, type Pdb } from '../../../e2e/harness/testing/workloads.js';
import { CORDONED_FOR_ANNOTATION } from '../../../contract/names.js';
import { MAINTENANCE_SCHEDULED } from '../../../controllers/drain/scheduled.js';
import { rfc3339 } from '../../../contract/time.js';
import { conditionOf, finish, waitForGone, waitForMaintenance } from '../lifecycle/harness.js';
import {
  DRAIN_SA,
  drainedThenApproved,
  endedAndUncordoned,
  nodeOf,
  nodesOf,
  sampleRunning,
  SHOP,
  useDrainWorld,
  workloadOn as placeWorkload,
} from './world.js';

const w = useDrainWorld();

const nodes = () => nodesOf(w.wc);
const workloadOn = (name: string, node: string, replicas: number, pdb: Pdb['spec']) =>
  placeWorkload(w.wc, name, node, replicas, pdb);

it('drains a Node one pod at a time under its PDB, approves, and uncordons after the maintenance', async () => {
  const { wc, lc, f } = w;
  await workloadOn('api', nodeOf(0), 3, { maxUnavailable: 1, selector: { matchLabels: { app: 'api' } } });
  await wc.addNodes([
    { name: 'spare-a', labels: { 'fits-api': 'yes' } },
    { name: 'spare-b', labels: { 'fits-api': 'yes' } },
  ]);

  const sampler = sampleRunning(wc, 'api', 3);
  try {
    const m = await lc.maintenance('drain-web', f.servers[0]!);
    // Early notice in the workload cluster: the Node's condition names what is announced to its claim.
    const scheduled = await waitFor('MaintenanceScheduled on node-0', async () => {
      const n = await nodes().get(nodeOf(0));
      return n.status?.conditions?.find((c) => c.type === MAINTENANCE_SCHEDULED);
    });
    expect(scheduled).toMatchObject({ status: 'True', reason: m.spec.class ?? 'Planned' });
    expect(scheduled.message).toContain(`ServerMaintenance ${lc.ns}/drain-web`);
    // The approval follows in the same pass, right after the status write.
    const { drained } = await drainedThenApproved(lc, 'drain-web', 60_000);
    expect(drained.status?.drain).toMatchObject({ node: nodeOf(0), cordoned: 'ByUs', podsLeft: 0 });
    expect(conditionOf(drained, 'Drained')).toMatchObject({ status: 'True', reason: 'Drained' });
    const node = await nodes().get(nodeOf(0));
    expect(node.spec?.unschedulable).toBe(true);
    expect(node.metadata.annotations?.[CORDONED_FOR_ANNOTATION]).toBe(`${f.tenant}/${f.claims[0]!.name}`);
  } finally {
    sampler.stop();
  }
  // maxUnavailable 1 of 3: never fewer than 2 api pods running at once.
  expect(sampler.fewest()).toBeGreaterThanOrEqual(2);
  const pods = await podsOf(wc.admin, SHOP, 'app=api');
  expect(pods.every((p) => p.spec?.nodeName !== nodeOf(0))).toBe(true);

  const after = await endedAndUncordoned(w, 'drain-web', nodeOf(0));
  await waitFor('MaintenanceScheduled removed from node-0', async () => {
    const n = await nodes().get(nodeOf(0));
    return !n.status?.conditions?.some((c) => c.type === MAINTENANCE_SCHEDULED);
  });
  expect(after.metadata.annotations?.[CORDONED_FOR_ANNOTATION]).toBeUndefined();
  await waitFor('our approval released from the claim', async () => {
    const c = await lc.claims.get(f.claims[0]!.name, f.tenant);
    return (c.spec.maintenance?.approvals ?? []).length === 0;
  });
}, 180_000);

it('names a pod blocked by an unsatisfiable PDB within 30 s, then fails visibly at drainTimeout', async () => {
  const { lc, f } = w;
  await workloadOn('solo', nodeOf(1), 1, { minAvailable: 1, selector: { matchLabels: { app: 'solo' } } });
  const m = await lc.maintenance('drain-solo', f.servers[1]!);
  const created = Date.parse(m.metadata.creationTimestamp!);
  const blocked = await waitForMaintenance(
    lc,
    'drain-solo',
    'a named blocker',
    (x) => (x.status?.drain?.blockers?.length ?? 0) > 0,
    {
      timeoutMs: 30_000,
    },
  );
  expect(Date.now() - created).toBeLessThan(30_000);
  const blocker = blocked.status!.drain!.blockers![0]!;
  expect(blocker.pod).toMatch(/^shop\/solo-/);
  expect(blocker.budget).toBe('shop/solo');
  expect(blocker.message).toMatch(/disruption budget solo needs 1 healthy pods and has 1 currently/);
  expect(conditionOf(blocked, 'Drained')).toMatchObject({ status: 'False', reason: 'Blocked' });
  // While it drains, a deferral on the claim says what blocks (the tenant sees it there too).
  const deferral = await waitFor('the deferral on the claim', async () => {
    const c = await lc.claims.get(f.claims[1]!.name, f.tenant);
    return c.spec.maintenance?.deferrals?.[0];
  });
  expect(deferral.reason).toContain('shop/solo');
  expect(deferral.requestedBy).toBe(DRAIN_SA);

  const timedOut = await waitForMaintenance(
    lc,
    'drain-solo',
    'TimedOut',
    (x) => x.status?.drain?.phase === 'TimedOut',
    {
      timeoutMs: 45_000,
    },
  );
  expect(conditionOf(timedOut, 'Drained')).toMatchObject({ status: 'False', reason: 'DrainTimeout' });
  expect(conditionOf(timedOut, 'Drained')?.message).toContain('not approved');
  expect(timedOut.status?.state).toBe('Announced');
  const after = await lc.claims.get(f.claims[1]!.name, f.tenant);
  expect(after.spec.maintenance?.approvals ?? []).toEqual([]);
  await lc.maintenances.delete('drain-solo', { namespace: lc.ns });
  await waitForGone(lc, 'drain-solo');
  await waitFor('node-1 uncordoned', async () => !(await nodes().get(nodeOf(1))).spec?.unschedulable);
}, 120_000);

it("keeps an admin's cordon after the maintenance", async () => {
  const { lc, f } = w;
  const m = await lc.maintenance('drain-admin', f.servers[2]!);
  const drained = await waitForMaintenance(
    lc,
    'drain-admin',
    'drained',
    (x) => x.status?.drain?.phase === 'Drained',
    {
      timeoutMs: 30_000,
    },
  );
  expect(drained.status?.drain?.cordoned).toBe('ByOthers');
  expect(m.metadata.uid).toBeDefined();
  await waitForMaintenance(lc, 'drain-admin', 'InMaintenance', (x) => x.status?.state === 'InMaintenance');
  await finish(lc, 'drain-admin');
  await waitForGone(lc, 'drain-admin');
  // Give the drain controller its pass after the announcement went away, then look.
  await waitFor('our approval released from the claim', async () => {
    const c = await lc.claims.get(f.claims[2]!.name, f.tenant);
    return (c.spec.maintenance?.approvals ?? []).length === 0;
  });
  const node = await nodes().get(nodeOf(2));
  expect(node.spec?.unschedulable).toBe(true);
  expect(node.metadata.annotations?.[CORDONED_FOR_ANNOTATION]).toBeUndefined();
}, 90_000);

it('shows an unreachable workload cluster and still proceeds at the deadline', async () => {
  const { wc, lc, f } = w;
  await wc.stopApiserver();
  try {
    const deadline = rfc3339(Date.now() + 20_000);
    await lc.maintenance('drain-dark', f.servers[4]!, { approval: { deadline } });
    const dark = await waitForMaintenance(
      lc,
      'drain-dark',
      'WorkloadUnreachable',
      (x) => conditionOf(x, 'Drained')?.reason === 'WorkloadUnreachable',
      { timeoutMs: 20_000 },
    );
    expect(dark.status?.drain?.phase).toBe('Unreachable');
    expect(conditionOf(dark, 'Drained')?.message).toMatch(/unreachable|ECONNREFUSED/i);
    const started = await waitForMaintenance(
      lc,
      'drain-dark',
      'InMaintenance',
      (x) => x.status?.state === 'InMaintenance',
      {
        timeoutMs: 45_000,
      },
    );
    expect(started.status?.approval?.source).toBe('Deadline');
    await finish(lc, 'drain-dark');
    await waitForGone(lc, 'drain-dark');
  } finally {
    await wc.startApiserver();
  }
}, 120_000);
