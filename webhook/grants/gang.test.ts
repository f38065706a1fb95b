// Gang grants: every member's entry goes into each budget in one compare-and-swap write, room judged
// for all of them together (per domain), or none; a later refusal releases what the call wrote.
import fc from 'fast-check';
import { MemoryBudgetStore } from '../../contract/testing/memory-budget-store.js';
import { Codes } from '../../contract/codes.js';
import { budgetSteps, type GrantOptions, type GrantPlan } from './plan.js';
import { reserveGrants } from './reserve.js';
import { BudgetBatches } from './batch.js';
import { FLEET, RACKS, TENANT, sdb, scdb, planFor, fast, uids } from './testing/fixtures.js';

/** A gang of the plans `first..first+size-1`, asked for by the first member's write. */
function gangPlan(first: number, size: number, refs = [FLEET], expected = 100): GrantPlan {
  const [own, ...others] = Array.from({ length: size }, (_, i) => planFor(first + i, refs, expected));
  return { ...own!, members: others };
}

describe('budgetSteps', () => {
  it('gives each budget once, fleet budgets before tenant ones, with every member that reserves it', () => {
    const plan = gangPlan(1, 3, [TENANT, FLEET]);
    plan.members![1]!.reservations.push({
      ref: RACKS,
      domain: 'r1',
      census: { expected: 4, unavailable: [] },
    });
    const steps = budgetSteps(plan);
    expect(steps.map((s) => s.ref)).toEqual([FLEET, RACKS, TENANT]);
    expect(steps.map((s) => s.entries.map((e) => e.plan.maintenance.uid))).toEqual([
      ['uid-1', 'uid-2', 'uid-3'],
      ['uid-3'],
      ['uid-1', 'uid-2', 'uid-3'],
    ]);
  });

  it('keeps a lone plan as it is', () => {
    const steps = budgetSteps(planFor(1, [TENANT, FLEET]));
    expect(steps.map((s) => s.ref)).toEqual([TENANT, FLEET]);
  });
});

describe('reserveGrants for a gang', () => {
  it('writes every member into the budget in one write', async () => {
    const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', 3) }]);
    const result = await reserveGrants(store, gangPlan(1, 3), false, fast);
    expect(result).toMatchObject({ granted: true, written: [FLEET] });
    expect(uids(store, FLEET)).toEqual(['uid-1', 'uid-2', 'uid-3']);
    expect(store.writes).toBe(1);
  });

  it('writes none of them when the budget has room for fewer than the gang', async () => {
    const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', 2) }]);
    const result = await reserveGrants(store, gangPlan(1, 3), false, fast);
    expect(result).toMatchObject({ granted: false, denial: { code: Codes.BUDGET_EXHAUSTED } });
    expect(uids(store, FLEET)).toEqual([]);
    expect(store.writes).toBe(0);
  });

  it('judges room per domain: members in two racks fit one slot each, two in one rack do not', async () => {
    const racks = () =>
      new MemoryBudgetStore([{ ref: RACKS, budget: sdb('racks', 1, { topologyKey: 'rack' }) }]);
    const spread = gangPlan(1, 2, [RACKS], 4);
    spread.reservations[0]!.domain = 'r1';
    spread.members![0]!.reservations[0]!.domain = 'r2';
    const a = racks();
    expect((await reserveGrants(a, spread, false, fast)).granted).toBe(true);
    expect(uids(a, RACKS)).toEqual(['uid-1', 'uid-2']);

    const packed = gangPlan(1, 2, [RACKS], 4);
    for (const p of [packed, ...packed.members!]) p.reservations[0]!.domain = 'r1';
    const b = racks();
    expect((await reserveGrants(b, packed, false, fast)).granted).toBe(false);
    expect(uids(b, RACKS)).toEqual([]);
  });

  it('counts the members already held: they need no new room, and are renewed', async () => {
    const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', 2) }]);
    await reserveGrants(store, gangPlan(1, 2), false, fast);
    // The second member's own write: the first is still Approved in the cache, both entries are held.
    const [one, two] = [planFor(1), planFor(2)];
    const again = await reserveGrants(store, { ...two, members: [one] }, false, fast);
    expect(again).toMatchObject({ granted: true, written: [], alreadyHeld: [FLEET] });
    expect(uids(store, FLEET)).toEqual(['uid-1', 'uid-2']);
  });

  it('releases every member from the earlier budgets when a later one refuses', async () => {
    const store = new MemoryBudgetStore([
      { ref: FLEET, budget: sdb('fleet', 5) },
      { ref: TENANT, budget: scdb(1) },
    ]);
    const result = await reserveGrants(store, gangPlan(1, 2, [FLEET, TENANT]), false, fast);
    expect(result).toMatchObject({ granted: false, released: [FLEET], releaseFailed: [] });
    expect(uids(store, FLEET)).toEqual([]);
    expect(uids(store, TENANT)).toEqual([]);
  });

  it('answers a dry run for the whole gang without writing', async () => {
    const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', 1) }]);
    expect((await reserveGrants(store, gangPlan(1, 2), true, fast)).granted).toBe(false);
    expect((await reserveGrants(store, gangPlan(1, 1), true, fast)).granted).toBe(true);
    expect(store.writes).toBe(0);
  });
});

describe('gangs racing for one budget (every interleaving fast-check finds)', () => {
  it('room for one gang: never two gangs holding part of it, and one gang wins whole', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.integer({ min: 2, max: 4 }),
        fc.integer({ min: 2, max: 4 }),
        fc.array(fc.boolean(), { minLength: 2, maxLength: 6 }),
        async (s, size, gangs, replicaOf) => {
          // Room for exactly one gang; the others must leave nothing behind.
          const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', size) }], {
            yieldBetween: () => s.schedule(Promise.resolve()),
          });
          const opts: GrantOptions = { ...fast, sleep: () => s.schedule(Promise.resolve()) };
          const replicas = [new BudgetBatches(store), new BudgetBatches(store)];
          // Each gang asks through one of its members' writes, some twice (two members at once).
          const asks = replicaOf.map((second, i) => {
            const g = i % gangs;
            return reserveGrants(store, gangPlan(g * 10, size), false, opts, replicas[second ? 1 : 0]);
          });
          const results = await s.waitFor(Promise.all(asks));
          const held = uids(store, FLEET);
          const gangOf = (uid: string) => Math.floor(Number(uid.slice(4)) / 10);
          const holding = new Set(held.map(gangOf));
          expect(holding.size).toBe(1);
          expect(held).toHaveLength(size);
          const winners = new Set(replicaOf.flatMap((_, i) => (results[i]!.granted ? [i % gangs] : [])));
          expect([...winners]).toEqual([...holding]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('two budgets, room for one gang in the second: the loser holds nothing in either', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), async (s) => {
        const store = new MemoryBudgetStore(
          [
            { ref: FLEET, budget: sdb('fleet', 4) },
            { ref: RACKS, budget: sdb('racks', 2) },
          ],
          { yieldBetween: () => s.schedule(Promise.resolve()) },
        );
        const opts: GrantOptions = { ...fast, sleep: () => s.schedule(Promise.resolve()) };
        const asks = [0, 1].map((g) =>
          reserveGrants(store, gangPlan(g * 10, 2, [FLEET, RACKS]), false, opts),
        );
        const results = await s.waitFor(Promise.all(asks));
        expect(results.filter((r) => r.granted)).toHaveLength(1);
        const winner = results[0]!.granted ? ['uid-0', 'uid-1'] : ['uid-10', 'uid-11'];
        expect(uids(store, FLEET)).toEqual(winner);
        expect(uids(store, RACKS)).toEqual(winner);
      }),
      { numRuns: 150 },
    );
  });
});
