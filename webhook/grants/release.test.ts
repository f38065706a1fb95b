// Grant reservations batched per budget, their release, and what counts as a write conflict.
import { MetalError } from '../../lib/errors.js';
import { Codes } from '../../contract/codes.js';
import { MemoryBudgetStore } from '../../contract/testing/memory-budget-store.js';
import { createGrantor, reserveGrants } from './reserve.js';
import { releaseGrants } from './release.js';
import { isConflictError, budgetConflict } from '../../contract/ledger/port.js';
import { FLEET, TENANT, sdb, ledger, planFor, fast, uids } from './testing/fixtures.js';

describe('reservations batched per budget (one grantor)', () => {
  // Every store call takes a macrotask, so calls made meanwhile queue up behind the write in flight.
  const slow = () => new Promise<void>((resolve) => setTimeout(resolve, 5));

  it('writes the calls that arrive during a write together, in one write', async () => {
    const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', 5) }], { yieldBetween: slow });
    const grant = createGrantor(store, fast);
    const results = await Promise.all([1, 2, 3].map((i) => grant(planFor(i), { dryRun: false })));
    expect(results.map((r) => r.granted)).toEqual([true, true, true]);
    expect(uids(store, FLEET)).toEqual(['uid-1', 'uid-2', 'uid-3']);
    expect(store.writes).toBe(2); // the first alone, then the two that queued behind it
    expect(store.conflicts).toBe(0);
  });

  it('admits in arrival order up to the limit and refuses the rest, on a fresh read', async () => {
    const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', 2) }], { yieldBetween: slow });
    const grant = createGrantor(store, fast);
    const results = await Promise.all([1, 2, 3, 4].map((i) => grant(planFor(i), { dryRun: false })));
    expect(results.map((r) => r.granted)).toEqual([true, true, false, false]);
    expect(results[3]).toMatchObject({ denial: { code: Codes.BUDGET_EXHAUSTED, ref: FLEET } });
    expect(uids(store, FLEET)).toEqual(['uid-1', 'uid-2']);
  });

  it('judges the whole batch again after losing its write to another writer', async () => {
    const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', 2) }], { yieldBetween: slow });
    let outside = true;
    store.hooks.beforeReplace = (ref, st) => {
      if (!outside) return;
      outside = false; // another replica takes a slot just before our first write
      st.put(ref, { ...sdb('fleet', 2), status: { observedGeneration: 1, grants: [ledger('uid-9')] } });
    };
    const grant = createGrantor(store, fast);
    const results = await Promise.all([1, 2].map((i) => grant(planFor(i), { dryRun: false })));
    expect(results.map((r) => r.granted)).toEqual([true, false]);
    expect(results[0]).toMatchObject({ conflicts: 1 });
    expect(uids(store, FLEET)).toEqual(['uid-1', 'uid-9']);
  });

  it('renews a held grant in the same write as the new ones', async () => {
    const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', 3) }], { yieldBetween: slow });
    await reserveGrants(store, planFor(1), false, fast);
    const grant = createGrantor(store, fast);
    const results = await Promise.all([0, 1, 2].map((i) => grant(planFor(i), { dryRun: false })));
    expect(results).toMatchObject([
      { granted: true, written: [FLEET] },
      { granted: true, alreadyHeld: [FLEET] },
      { granted: true, written: [FLEET] },
    ]);
    expect(uids(store, FLEET)).toEqual(['uid-0', 'uid-1', 'uid-2']);
  });
});

describe('releaseGrants', () => {
  it('removes only this maintenance’s entry and tolerates missing ones', async () => {
    const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', 5) }]);
    await reserveGrants(store, planFor(1), false, fast);
    await reserveGrants(store, planFor(2), false, fast);
    expect(await releaseGrants(store, [FLEET, TENANT], 'uid-1', fast)).toEqual({
      released: [TENANT, FLEET],
      failed: [],
    });
    expect(uids(store, FLEET)).toEqual(['uid-2']);
  });

  it('reports budgets it could not release', async () => {
    const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', 5) }]);
    await reserveGrants(store, planFor(1), false, fast);
    store.hooks.beforeReplace = () => {
      throw new Error('forbidden');
    };
    expect(await releaseGrants(store, [FLEET], 'uid-1', fast)).toEqual({ released: [], failed: [FLEET] });
  });
});

describe('isConflictError', () => {
  it.each([
    [budgetConflict('x'), true],
    [{ statusCode: 409 }, true],
    [{ code: 409 }, true],
    [{ status: 409 }, true],
    [new MetalError('METAL_ERR_OTHER', 'x'), false],
    [{ statusCode: 500 }, false],
    [null, false],
    ['409', false],
  ])('%j -> %s', (e, expected) => {
    expect(isConflictError(e)).toBe(expected);
  });
});
