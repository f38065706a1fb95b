// Behaviours 5 and 6: maintenances of one server run in priority order and never two at once, even
// when created at the same instant (upstream #775); with a budget of 3 and two servers already
// unavailable for other reasons, exactly one new maintenance starts and the rest wait with reason
// BudgetExhausted.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SETUP_TIMEOUT_MS } from '../../../e2e/harness/dist.js';
import { waitFor } from '../../../e2e/harness/env.js';
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import {
  HOLD_FOREVER,
  caseBudget,
  conditionOf,
  finish,
  getMaintenance,
  metricsOf,
  sample,
  overlaps,
  peakInMaintenance,
  startLifecycle,
  startOrder,
  stateOf,
  waitForGone,
  waitForMaintenance,
  waitForState,
  type Lifecycle,
} from './harness.js';
import { setTimeout as sleep } from 'node:timers/promises';

let lc: Lifecycle;
beforeAll(async () => {
  lc = await startLifecycle({ actorHoldMs: 800 });
}, SETUP_TIMEOUT_MS);
afterAll(async () => {
  await lc?.stop();
}, 60_000);

type Spec = Partial<ServerMaintenance['spec']>;

/**
 * The `holders` start (held until finished); then the `waiters` are created, in this order, and refused
 * for room. Once both wait for a release (past the 2 s re-check of a first refusal, their next look is
 * a minute away), `released` is finished and gone.
 */
async function holdThenRelease(
  holders: [name: string, server: string][],
  waiters: [name: string, server: string, spec?: Spec][],
  released: string,
): Promise<void> {
  for (const [name, server] of holders) await lc.maintenance(name, server, {}, HOLD_FOREVER);
  for (const [name] of holders) await waitForState(lc, name, 'InMaintenance');
  for (const [name, server, spec] of waiters) await lc.maintenance(name, server, spec ?? {}, HOLD_FOREVER);
  for (const [name] of waiters)
    await waitForMaintenance(
      lc,
      name,
      'BudgetExhausted',
      (m) => conditionOf(m, 'Admitted')?.reason === 'BudgetExhausted',
    );
  await sleep(5000);
  await finish(lc, released);
  await waitForGone(lc, released);
}

async function finishAll(names: string[]): Promise<void> {
  for (const n of names) await finish(lc, n);
  for (const n of names) await waitForGone(lc, n);
}

describe('the queue of one server', () => {
  it('runs higher priority first, then the more urgent class', async () => {
    const f = await lc.fleet('prio', { servers: 1 });
    const server = f.servers[0]!;
    await lc.maintenance('prio-first', server, {}, HOLD_FOREVER);
    await waitForState(lc, 'prio-first', 'InMaintenance');
    await Promise.all([
      lc.maintenance('prio-low', server, { priority: 0, class: 'Planned' }),
      lc.maintenance('prio-high', server, { priority: 10 }),
      lc.maintenance('prio-mid', server, { priority: 5 }),
      lc.maintenance('prio-low-urgent', server, { priority: 0, class: 'Urgent' }),
    ]);
    await waitFor('queue positions', async () => {
      const pos = await Promise.all(
        ['prio-high', 'prio-mid', 'prio-low-urgent', 'prio-low'].map(
          async (n) => (await getMaintenance(lc, n))?.status?.queuePosition,
        ),
      );
      return JSON.stringify(pos) === JSON.stringify([1, 2, 3, 4]);
    });
    // Once approved (not required: unclaimed), what keeps them waiting is the holder.
    const waiting = await waitForMaintenance(
      lc,
      'prio-high',
      'ServerBusy',
      (m) => conditionOf(m, 'Admitted')?.reason === 'ServerBusy',
    );
    expect(stateOf(waiting)).toBe('Approved');
    // The projection follows in the same reconcile, after the maintenances' statuses.
    const s = await waitFor('the projection counts the queue', async () => {
      const now = await lc.servers.get(server);
      return now.status?.maintenance?.pending === 4 ? now : undefined;
    });
    expect(s.status?.maintenance).toMatchObject({
      state: 'InMaintenance',
      activeMaintenanceRef: { name: 'prio-first' },
    });

    await finish(lc, 'prio-first');
    // The simulated actor finishes each 0.8 s after it is Ready.
    for (const n of ['prio-high', 'prio-mid', 'prio-low-urgent', 'prio-low']) await waitForGone(lc, n);
    const names = new Set(['prio-high', 'prio-mid', 'prio-low-urgent', 'prio-low']);
    expect(startOrder(lc.history, names)).toEqual(['prio-high', 'prio-mid', 'prio-low-urgent', 'prio-low']);
    expect(overlaps(lc.history)).toEqual([]);
  }, 90_000);

  it('never has two maintenances InMaintenance on one server, even when created at the same instant', async () => {
    const f = await lc.fleet('burst', { servers: 2 });
    const names = Array.from({ length: 8 }, (_, i) => `burst-${i}`);
    await Promise.all(names.map((n, i) => lc.maintenance(n, f.servers[i % 2]!)));
    for (const n of names) await waitForGone(lc, n, { timeoutMs: 90_000 });
    const ran = startOrder(lc.history, new Set(names));
    expect(ran.sort()).toEqual([...names].sort());
    expect(overlaps(lc.history)).toEqual([]);
  }, 120_000);
});

describe('budgets count every kind of unavailability', () => {
  it('with K=3 and two servers already unavailable, starts exactly one and holds the rest with BudgetExhausted', async () => {
    const f = await lc.fleet('budget', { servers: 6 });
    const [broken, cordoned, ...free] = f.servers as [string, string, ...string[]];
    await lc.servers.patch(broken, { status: { state: 'Error' } }, { subresource: 'status' });
    await lc.servers.patch(cordoned, { spec: { unclaimable: true } });
    const budget = await caseBudget(lc, f, 3);
    await waitFor('budget counts the two unavailable servers', async () => {
      const b = await lc.sdbs.get(budget.metadata.name!);
      return b.status?.unavailable === 2 && b.status.disruptionsAllowed === 1 && b.status.expected === 6;
    });
    const names = free.map((_, i) => `budget-${i}`);
    await Promise.all(names.map((n, i) => lc.maintenance(n, free[i]!, {}, HOLD_FOREVER)));
    await waitFor('one started, the rest denied', async () => {
      const ms = await Promise.all(names.map((n) => getMaintenance(lc, n)));
      const running = ms.filter((m) => stateOf(m) === 'InMaintenance').length;
      const exhausted = ms.filter((m) => conditionOf(m, 'Admitted')?.reason === 'BudgetExhausted').length;
      return running === 1 && exhausted === names.length - 1;
    });
    // It stays that way: the waiting ones retry on their hint and on budget changes, and are refused.
    await sleep(5000);
    const ms = await Promise.all(names.map((n) => getMaintenance(lc, n)));
    expect(ms.filter((m) => stateOf(m) === 'InMaintenance')).toHaveLength(1);
    for (const m of ms.filter((x) => stateOf(x) !== 'InMaintenance')) {
      expect(stateOf(m)).toBe('Approved');
      expect(conditionOf(m, 'Admitted')).toMatchObject({ status: 'False', reason: 'BudgetExhausted' });
      expect(conditionOf(m, 'Admitted')?.message).toContain('3 unavailable, 3 allowed');
    }
    const b = await lc.sdbs.get(budget.metadata.name!);
    expect(b.status).toMatchObject({ expected: 6, unavailable: 3, disruptionsAllowed: 0 });
    expect(b.status?.grants).toHaveLength(1);
    // The same, as metrics: decisions denied by reason, maintenances by state, budget usage.
    const mm = await metricsOf(lc, 'maintenance-controller');
    expect(
      sample(mm, 'metal_maintenance_decisions_denied_total', { reason: 'BudgetExhausted' }),
    ).toBeGreaterThanOrEqual(3);
    expect(sample(mm, 'metal_maintenances', { state: 'InMaintenance' })).toBeGreaterThanOrEqual(1);
    const bm = await metricsOf(lc, 'budget-controller');
    const labels = { kind: 'ServerDisruptionBudget', budget: budget.metadata.name! };
    expect(sample(bm, 'metal_budget_unavailable', labels)).toBe(3);
    expect(sample(bm, 'metal_budget_disruptions_allowed', labels)).toBe(0);
    // And as the budget controller's log: the domain ran out of room once, at warn (pino level 40).
    const ofBudget = (decision: string) => (l: Record<string, unknown>) =>
      l.decision === decision && l.budget === `ServerDisruptionBudget ${budget.metadata.name!}`;
    const budgetLogs = lc.controllers['budget-controller'];
    await budgetLogs.waitForLog(ofBudget('BudgetExhausted'));
    expect(budgetLogs.logs.filter(ofBudget('BudgetExhausted'))).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'budget exhausted: no more disruptions allowed in domain',
        unavailable: 3,
      }),
    ]);

    // Room comes back when the running one is done: the next one starts.
    const first = ms.find((m) => stateOf(m) === 'InMaintenance')!.metadata.name!;
    await finish(lc, first);
    await waitForGone(lc, first);
    const second = await waitFor('the next one starts', async () => {
      const now = await Promise.all(names.filter((n) => n !== first).map((n) => getMaintenance(lc, n)));
      return now.find((m) => stateOf(m) === 'InMaintenance');
    });
    expect(second.metadata.name).not.toBe(first);
    for (const n of names) await finish(lc, n);
    for (const n of names) await waitForGone(lc, n);
    // A slot freed and taken again within one status interval never shows as room; with all done it does.
    await budgetLogs.waitForLog(ofBudget('BudgetRoom'), 10_000);
  }, 90_000);

  it('gives a slot a budget frees to a maintenance that budget refused, not to one another budget still refuses', async () => {
    // Budget A (1 of the a-servers) and budget B (2 of all four). wake-a2 is first in the queue but
    // waits for A; wake-b2 waits for B. B's slot must go to wake-b2 at once: before, the release woke
    // wake-a2 (refused again by A), and wake-b2 waited for its own timer, a minute later.
    const group = { 'lifecycle.metal.ironcore.dev/wake-group': 'both' };
    const fa = await lc.fleet('wake-a', { servers: 2, serverLabels: group });
    const fb = await lc.fleet('wake-b', { servers: 2, serverLabels: group });
    const [a1, a2] = fa.servers as [string, string];
    const [b1, b2] = fb.servers as [string, string];
    await caseBudget(lc, fa, 1, { name: `${fa.name}-a` });
    await caseBudget(lc, fa, 2, { name: `${fa.name}-b`, matchLabels: group });
    await holdThenRelease(
      [
        ['wake-a1', a1],
        ['wake-b1', b1],
      ],
      [
        ['wake-a2', a2],
        ['wake-b2', b2],
      ],
      'wake-b1',
    );
    const freedAt = Date.now();
    await waitForState(lc, 'wake-b2', 'InMaintenance', { timeoutMs: 20_000 });
    expect(Date.now() - freedAt).toBeLessThan(20_000);
    // A is still full: wake-a2 waits on, and nothing ever ran past either budget.
    const a2m = await getMaintenance(lc, 'wake-a2');
    expect(stateOf(a2m)).toBe('Approved');
    expect(conditionOf(a2m, 'Admitted')?.reason).toBe('BudgetExhausted');
    const mine = new Set([a1, a2, b1, b2]);
    expect(overlaps(lc.history)).toEqual([]);
    expect(peakInMaintenance(lc.history, mine)).toBeLessThanOrEqual(2);
    await finishAll(['wake-a1', 'wake-a2', 'wake-b2']);
  }, 120_000);

  it('gives a slot freed in one rack of a per-rack budget to a maintenance waiting in that rack', async () => {
    // One per rack. rack-b2 is first in the queue (priority) but waits for rack b; rack-a2 waits for
    // rack a. A slot freed in rack a must go to rack-a2 at once, not to rack-b2 (refused again) while
    // rack-a2 sleeps out its minute.
    const RACK = 'lifecycle.metal.ironcore.dev/rack';
    const group = { 'lifecycle.metal.ironcore.dev/rack-group': 'both' };
    const fa = await lc.fleet('rack-a', { servers: 2, serverLabels: { ...group, [RACK]: 'a' } });
    const fb = await lc.fleet('rack-b', { servers: 2, serverLabels: { ...group, [RACK]: 'b' } });
    const [a1, a2] = fa.servers as [string, string];
    const [b1, b2] = fb.servers as [string, string];
    await caseBudget(lc, fa, 1, { name: `${fa.name}-racks`, matchLabels: group, topologyKey: RACK });
    await holdThenRelease(
      [
        ['rack-a1', a1],
        ['rack-b1', b1],
      ],
      [
        ['rack-b2', b2, { priority: 10 }],
        ['rack-a2', a2],
      ],
      'rack-a1',
    );
    await waitForState(lc, 'rack-a2', 'InMaintenance', { timeoutMs: 20_000 });
    const b2m = await getMaintenance(lc, 'rack-b2');
    expect(stateOf(b2m)).toBe('Approved');
    expect(conditionOf(b2m, 'Admitted')?.message).toContain('(domain "b")');
    expect(overlaps(lc.history)).toEqual([]);
    await finishAll(['rack-b1', 'rack-a2', 'rack-b2']);
  }, 120_000);
});
