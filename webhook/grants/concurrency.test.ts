// Grants under concurrency: every interleaving fast-check finds keeps each budget within its limit.
import fc from 'fast-check';
import { MemoryBudgetStore } from '../../contract/testing/memory-budget-store.js';
import { type GrantOptions } from './plan.js';
import { reserveGrants } from './reserve.js';
import { BudgetBatches } from './batch.js';
import { FLEET, RACKS, TENANT, sdb, scdb, census, planFor, fast, uids } from './testing/fixtures.js';

describe('grants under concurrency (in-memory store, every interleaving fast-check finds)', () => {
  it('never grants more than maxUnavailable, whatever the interleaving', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 10 }),
        async (s, k, n) => {
          const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', k) }], {
            yieldBetween: () => s.schedule(Promise.resolve()),
          });
          const opts: GrantOptions = { ...fast, sleep: () => s.schedule(Promise.resolve()) };
          const runs = Array.from({ length: n }, (_, i) => reserveGrants(store, planFor(i), false, opts));
          const results = await s.waitFor(Promise.all(runs));
          const granted = results.filter((r) => r.granted).length;
          expect(granted).toBe(Math.min(k, n));
          expect(uids(store, FLEET)).toHaveLength(Math.min(k, n));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('across several budgets, losers leave nothing behind and winners hold every budget', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.integer({ min: 2, max: 6 }), async (s, n) => {
        const store = new MemoryBudgetStore(
          [
            { ref: FLEET, budget: sdb('fleet', 3) },
            { ref: RACKS, budget: sdb('racks', 2) },
            { ref: TENANT, budget: scdb(1) },
          ],
          { yieldBetween: () => s.schedule(Promise.resolve()) },
        );
        const opts: GrantOptions = { ...fast, sleep: () => s.schedule(Promise.resolve()) };
        const runs = Array.from({ length: n }, (_, i) =>
          reserveGrants(store, planFor(i, [FLEET, RACKS, TENANT]), false, opts),
        );
        const results = await s.waitFor(Promise.all(runs));
        const winners = results.flatMap((r, i) => (r.granted ? [`uid-${i}`] : []));
        expect(winners).toHaveLength(1);
        for (const ref of [FLEET, RACKS, TENANT]) expect(uids(store, ref)).toEqual(winners);
      }),
      { numRuns: 150 },
    );
  });

  it('never grants more than maxUnavailable with two replicas each batching its own calls', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 10 }),
        async (s, k, replicaOf) => {
          const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', k) }], {
            yieldBetween: () => s.schedule(Promise.resolve()),
          });
          const opts: GrantOptions = { ...fast, sleep: () => s.schedule(Promise.resolve()) };
          const replicas = [new BudgetBatches(store), new BudgetBatches(store)];
          const runs = replicaOf.map((second, i) =>
            reserveGrants(store, planFor(i), false, opts, replicas[second ? 1 : 0]),
          );
          const results = await s.waitFor(Promise.all(runs));
          const n = replicaOf.length;
          expect(results.filter((r) => r.granted)).toHaveLength(Math.min(k, n));
          expect(uids(store, FLEET)).toHaveLength(Math.min(k, n));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('counts every contender against the limit also when some servers are already unavailable', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.integer({ min: 0, max: 3 }), async (s, down) => {
        const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', 3) }], {
          yieldBetween: () => s.schedule(Promise.resolve()),
        });
        const unavailable = Array.from({ length: down }, (_, i) => `down-${i}`);
        const opts: GrantOptions = { ...fast, sleep: () => s.schedule(Promise.resolve()) };
        const runs = Array.from({ length: 6 }, (_, i) => {
          const plan = planFor(i);
          plan.reservations[0]!.census = census(20, unavailable);
          return reserveGrants(store, plan, false, opts);
        });
        const results = await s.waitFor(Promise.all(runs));
        expect(results.filter((r) => r.granted)).toHaveLength(Math.max(0, 3 - down));
      }),
      { numRuns: 100 },
    );
  });
});
