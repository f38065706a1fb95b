import fc from 'fast-check';
import { jest } from '@jest/globals';
import type { ServerDisruptionBudget } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import { MetalError } from '../../lib/errors.js';
import { Codes } from '../../contract/codes.js';
import { MemoryBudgetStore } from '../../contract/testing/memory-budget-store.js';
import { NOW } from '../testdata/load.js';
import { refKey, refOfKey, type BudgetRef } from '../../contract/budgets.js';
import { type GrantOptions, type GrantPlan } from './plan.js';
import { createGrantor, dryRunOnCopies, grantDecision, reserveGrants } from './reserve.js';
import { releaseGrants } from './release.js';
import { BudgetBatches } from './batch.js';
import { isConflictError, budgetConflict } from '../../contract/ledger/port.js';

const FLEET: BudgetRef = { kind: 'ServerDisruptionBudget', name: 'fleet' };
const RACKS: BudgetRef = { kind: 'ServerDisruptionBudget', name: 'racks' };
const TENANT: BudgetRef = { kind: 'ServerClaimDisruptionBudget', namespace: 'tenant-a', name: 'db' };

const sdb = (
  name: string,
  maxUnavailable: number | string,
  extra: Partial<ServerDisruptionBudget['spec']> = {},
): ServerDisruptionBudget => ({
  metadata: { name, generation: 1 },
  spec: { serverSelector: {}, maxUnavailable, ...extra },
  status: { observedGeneration: 1, grants: [] },
});
const scdb = (maxUnavailable: number): ServerClaimDisruptionBudget => ({
  metadata: { name: 'db', namespace: 'tenant-a', generation: 1 },
  spec: { claimSelector: {}, maxUnavailable },
  status: { observedGeneration: 1 },
});

const census = (expected: number, unavailable: string[] = []) => ({ expected, unavailable });
const ledger = (uid: string) => ({
  maintenanceUID: uid,
  maintenance: { namespace: 'ops', name: uid },
  server: `srv-of-${uid}`,
  grantedAt: NOW.toISOString(),
});

function planFor(i: number, refs: BudgetRef[] = [FLEET], expected = 100): GrantPlan {
  return {
    maintenance: { uid: `uid-${i}`, namespace: 'ops', name: `m-${i}` },
    server: `srv-${i}`,
    claim: { namespace: 'tenant-a', name: `claim-${i}` },
    reservations: refs.map((ref) => ({ ref, domain: '', census: census(expected) })),
    ledgerCap: 2000,
    finishedOnServer: [],
  };
}

// No real waiting in unit tests; the backoff schedule is asserted through the injected sleep.
const fast: GrantOptions = { sleep: () => Promise.resolve(), random: () => 0, clock: () => NOW };
const uids = (store: MemoryBudgetStore, ref: BudgetRef) =>
  (store.current(ref)?.status?.grants ?? []).map((g) => g.maintenanceUID).sort();

describe('refOfKey', () => {
  it('reads back what refKey wrote, for both kinds', () => {
    const refs: BudgetRef[] = [
      { kind: 'ServerDisruptionBudget', name: 'racks' },
      { kind: 'ServerClaimDisruptionBudget', namespace: 'tenant-a', name: 'db' },
    ];
    for (const ref of refs) expect(refOfKey(refKey(ref))).toEqual(ref);
  });

  it.each(['racks', 'Pod//racks', 'ServerDisruptionBudget//', 'ServerDisruptionBudget/a/b/c', ''])(
    'is undefined for %j, which no refKey yields',
    (key) => {
      expect(refOfKey(key)).toBeUndefined();
    },
  );
});

describe('reserveGrants', () => {
  it('writes one ledger entry per budget, in plan order, with the grant details', async () => {
    const store = new MemoryBudgetStore([
      { ref: FLEET, budget: sdb('fleet', 5) },
      { ref: TENANT, budget: scdb(1) },
    ]);
    const result = await reserveGrants(store, planFor(1, [FLEET, TENANT]), false, fast);
    expect(result).toMatchObject({ granted: true, written: [FLEET, TENANT], alreadyHeld: [], conflicts: 0 });
    expect(store.current(TENANT)?.status?.grants).toEqual([
      {
        maintenanceUID: 'uid-1',
        maintenance: { namespace: 'ops', name: 'm-1' },
        server: 'srv-1',
        claim: { namespace: 'tenant-a', name: 'claim-1' },
        grantedAt: NOW.toISOString(),
      },
    ]);
    expect(store.writes).toBe(2);
  });

  it('records the topology domain on the entry', async () => {
    const store = new MemoryBudgetStore([{ ref: RACKS, budget: sdb('racks', 1, { topologyKey: 'rack' }) }]);
    const plan = planFor(1, [RACKS]);
    plan.reservations[0]!.domain = 'r7';
    await reserveGrants(store, plan, false, fast);
    expect(store.current(RACKS)?.status?.grants?.[0]?.domain).toBe('r7');
  });

  it('is idempotent: a second call finds its grant and renews it in place, adding no entry', async () => {
    const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', 1) }]);
    await reserveGrants(store, planFor(1), false, fast);
    const later = new Date(NOW.getTime() + 60_000);
    const again = await reserveGrants(store, planFor(1), false, { ...fast, clock: () => later });
    expect(again).toMatchObject({ granted: true, written: [], alreadyHeld: [FLEET] });
    expect(uids(store, FLEET)).toEqual(['uid-1']);
    expect(store.current(FLEET)!.status!.grants![0]!.grantedAt).toBe(later.toISOString());
    expect(store.writes).toBe(2);
  });

  it('grants afresh when the budget controller expires the held entry while it is being renewed', async () => {
    let expireNext = false;
    const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', 1) }], {
      beforeReplace: (ref, s) => {
        if (!expireNext) return;
        expireNext = false;
        // The TTL expiry lands first: the entry is gone and the resourceVersion moved on.
        const b = structuredClone(s.current(ref)!);
        b.status = { ...b.status, grants: [] };
        s.put(ref, b);
      },
    });
    await reserveGrants(store, planFor(1), false, fast);
    expireNext = true;
    const later = new Date(NOW.getTime() + 60_000);
    const again = await reserveGrants(store, planFor(1), false, { ...fast, clock: () => later });
    expect(again).toMatchObject({ granted: true, written: [FLEET], conflicts: 1 });
    expect(uids(store, FLEET)).toEqual(['uid-1']);
    expect(store.current(FLEET)!.status!.grants![0]!.grantedAt).toBe(later.toISOString());
  });

  it('releases earlier reservations when a later budget refuses, and says which budget and why', async () => {
    const full = scdb(1);
    full.status!.grants = [
      {
        maintenanceUID: 'uid-9',
        maintenance: { namespace: 'ops', name: 'm-9' },
        server: 'srv-9',
        grantedAt: NOW.toISOString(),
      },
    ];
    const store = new MemoryBudgetStore([
      { ref: FLEET, budget: sdb('fleet', 5) },
      { ref: TENANT, budget: full },
    ]);
    const result = await reserveGrants(store, planFor(1, [FLEET, TENANT]), false, fast);
    expect(result).toMatchObject({ granted: false, released: [FLEET], releaseFailed: [] });
    if (result.granted) return;
    expect(result.denial).toMatchObject({
      code: Codes.BUDGET_EXHAUSTED,
      ref: TENANT,
      allowed: 1,
      inUse: 1,
      retryAfterSeconds: 30,
    });
    expect(result.denial.message).toContain('ServerClaimDisruptionBudget tenant-a/db');
    expect(uids(store, FLEET)).toEqual([]);
  });

  it('releases a renewed grant too when a later budget refuses (it would only hold a slot)', async () => {
    const store = new MemoryBudgetStore([
      { ref: FLEET, budget: sdb('fleet', 5) },
      { ref: TENANT, budget: scdb(0) },
    ]);
    await reserveGrants(store, planFor(1, [FLEET]), false, fast);
    const result = await reserveGrants(store, planFor(1, [FLEET, TENANT]), false, fast);
    expect(result).toMatchObject({ granted: false, released: [FLEET] });
    expect(uids(store, FLEET)).toEqual([]);
  });

  it('re-reads and retries after a conflict, with a growing, capped, jittered backoff', async () => {
    let bumps = 3;
    const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', 5) }], {
      beforeReplace: (ref, s) => {
        if (bumps-- > 0) s.put(ref, s.current(ref)!); // another writer got there first
      },
    });
    const sleeps: number[] = [];
    const onConflict = jest.fn();
    const result = await reserveGrants(store, planFor(1), false, {
      ...fast,
      random: () => 1,
      baseDelayMs: 10,
      capDelayMs: 30,
      jitter: 0.5,
      sleep: (ms) => (sleeps.push(ms), Promise.resolve()),
      onConflict,
    });
    expect(result).toMatchObject({ granted: true, conflicts: 3, retries: 3, attempts: 4 });
    expect(sleeps).toEqual([15, 30, 45]);
    expect(onConflict).toHaveBeenCalledTimes(3);
  });

  it('re-decides after a conflict: a concurrent writer that took the last slot wins', async () => {
    let first = true;
    const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', 1) }], {
      beforeReplace: async (ref, s) => {
        if (!first) return;
        first = false;
        await reserveGrants(s, planFor(2), false, fast);
      },
    });
    const result = await reserveGrants(store, planFor(1), false, fast);
    expect(result).toMatchObject({ granted: false, conflicts: 1, denial: { code: Codes.BUDGET_EXHAUSTED } });
    expect(uids(store, FLEET)).toEqual(['uid-2']);
  });

  it('gives up after maxAttempts conflicts with a retry-later denial', async () => {
    const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', 5) }], {
      beforeReplace: (ref, s) => void s.put(ref, s.current(ref)!),
    });
    const result = await reserveGrants(store, planFor(1), false, fast);
    expect(result).toMatchObject({
      granted: false,
      attempts: 20,
      conflicts: 20,
      denial: { code: Codes.BUDGET_CONFLICT, retryAfterSeconds: 1 },
    });
  });

  it('gives up when its time is spent, even with attempts left', async () => {
    let t = NOW.getTime();
    const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', 5) }], {
      beforeReplace: (ref, s) => void s.put(ref, s.current(ref)!),
    });
    const result = await reserveGrants(store, planFor(1), false, {
      ...fast,
      deadlineMs: 100,
      clock: () => new Date((t += 30)),
    });
    expect(result.granted).toBe(false);
    expect(result.attempts).toBeLessThan(6);
  });

  it('fails closed, and releases, when the store errors with something other than a conflict', async () => {
    const store = new MemoryBudgetStore(
      [
        { ref: FLEET, budget: sdb('fleet', 5) },
        { ref: TENANT, budget: scdb(1) },
      ],
      {
        beforeReplace: (ref) => {
          if (ref.kind === 'ServerClaimDisruptionBudget')
            throw Object.assign(new Error('etcd timeout'), { statusCode: 504 });
        },
      },
    );
    const result = await reserveGrants(store, planFor(1, [FLEET, TENANT]), false, fast);
    expect(result).toMatchObject({
      granted: false,
      released: [FLEET],
      denial: { code: Codes.BUDGET_UNAVAILABLE, retryAfterSeconds: 10 },
    });
    expect(uids(store, FLEET)).toEqual([]);
    const broken = {
      get: () => Promise.reject(new Error('connection refused')),
      replaceStatus: () => Promise.reject(new Error('unreachable')),
    };
    expect(await reserveGrants(broken, planFor(1), false, fast)).toMatchObject({
      granted: false,
      denial: { code: Codes.BUDGET_UNAVAILABLE },
    });
  });

  it('skips a budget deleted since the cache saw it', async () => {
    const store = new MemoryBudgetStore([]);
    expect(await reserveGrants(store, planFor(1), false, fast)).toMatchObject({
      granted: true,
      written: [],
      alreadyHeld: [],
    });
  });

  it('decides without writing on a dry run', async () => {
    const store = new MemoryBudgetStore([
      { ref: FLEET, budget: sdb('fleet', 1) },
      { ref: TENANT, budget: scdb(0) },
    ]);
    const ok = await reserveGrants(store, planFor(1, [FLEET]), true, fast);
    expect(ok).toMatchObject({ granted: true, dryRun: true });
    const no = await reserveGrants(store, planFor(1, [FLEET, TENANT]), true, fast);
    expect(no).toMatchObject({ granted: false, dryRun: true, denial: { ref: TENANT } });
    expect(store.writes).toBe(0);
  });

  it('refuses a stale budget with the Eviction API retry hint', async () => {
    const stale = sdb('fleet', 5);
    stale.metadata.generation = 2;
    const store = new MemoryBudgetStore([{ ref: FLEET, budget: stale }]);
    expect(await reserveGrants(store, planFor(1), false, fast)).toMatchObject({
      granted: false,
      denial: { code: Codes.BUDGET_STALE, retryAfterSeconds: 10 },
    });
  });

  it('turns a result into an admission decision', async () => {
    const store = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', 0) }]);
    const d = grantDecision(await createGrantor(store, fast)(planFor(1), { dryRun: false }), ['w']);
    expect(d).toMatchObject({
      allowed: false,
      code: Codes.BUDGET_EXHAUSTED,
      status: 429,
      retryAfterSeconds: 30,
      warnings: ['w'],
      // Which budget, as a key the maintenance controller waits on (see BUDGET_CAUSE).
      causes: [{ reason: 'DisruptionBudget', field: 'ServerDisruptionBudget//fleet' }],
    });
    expect(d.message).toMatch(/fleet: 0 unavailable, 0 allowed .*retry in 30s/);
  });
});

describe('reserveGrants with a copy known without a request (peek)', () => {
  /** The memory store, plus a cached copy of each budget that the test moves on by hand. */
  function withCache(budgets: { ref: BudgetRef; budget: ServerDisruptionBudget }[]) {
    const store = new MemoryBudgetStore(budgets);
    const copies = new Map<string, ServerDisruptionBudget>();
    const refresh = (ref: BudgetRef) => copies.set(ref.name, store.current(ref) as ServerDisruptionBudget);
    for (const { ref } of budgets) refresh(ref);
    const cached = Object.assign(store, { peek: (ref: BudgetRef) => copies.get(ref.name) });
    return { store: cached, refresh };
  }

  it('grants on a current copy without reading the budget', async () => {
    const { store } = withCache([{ ref: FLEET, budget: sdb('fleet', 2) }]);
    const result = await reserveGrants(store, planFor(1), false, fast);
    expect(result).toMatchObject({ granted: true, conflicts: 0 });
    expect(store.reads).toBe(0);
    expect(uids(store, FLEET)).toEqual(['uid-1']);
  });

  it('loses the write on a stale copy, then decides on a fresh read: never more than the limit', async () => {
    const { store } = withCache([{ ref: FLEET, budget: sdb('fleet', 1) }]);
    // Another replica takes the only slot; this replica's copy has not seen it.
    const fresh = store.current(FLEET)!;
    store.put(FLEET, { ...fresh, status: { ...fresh.status, grants: [ledger('uid-9')] } });
    const result = await reserveGrants(store, planFor(1), false, fast);
    expect(result).toMatchObject({ granted: false, conflicts: 1, denial: { code: Codes.BUDGET_EXHAUSTED } });
    expect(store.reads).toBe(1);
    expect(uids(store, FLEET)).toEqual(['uid-9']);
  });

  it('does not refuse on a stale copy: a full copy is checked against a fresh read first', async () => {
    const full = sdb('fleet', 1);
    full.status = { ...full.status, grants: [ledger('uid-9')] };
    const { store, refresh } = withCache([{ ref: FLEET, budget: full }]);
    refresh(FLEET);
    store.put(FLEET, sdb('fleet', 1)); // uid-9 released; the copy still shows it
    const result = await reserveGrants(store, planFor(1), false, fast);
    expect(result).toMatchObject({ granted: true });
    expect(store.reads).toBe(1);
  });

  it('answers a dry run the copy admits without a read, and without a promise', async () => {
    const { store } = withCache([{ ref: FLEET, budget: sdb('fleet', 1) }]);
    expect(dryRunOnCopies(store, planFor(1))).toMatchObject({
      granted: true,
      dryRun: true,
      written: [FLEET],
    });
    expect(await reserveGrants(store, planFor(1), true, fast)).toMatchObject({ granted: true });
    expect(store.reads).toBe(0);
    expect(store.writes).toBe(0);
  });

  it('confirms a dry run the copy refuses on a fresh read', async () => {
    const { store, refresh } = withCache([{ ref: FLEET, budget: sdb('fleet', 1) }]);
    store.put(FLEET, { ...sdb('fleet', 1), status: { observedGeneration: 1, grants: [ledger('uid-9')] } });
    refresh(FLEET);
    store.put(FLEET, sdb('fleet', 1)); // uid-9 released; the copy still shows it
    expect(dryRunOnCopies(store, planFor(1))).toBeUndefined();
    expect(await reserveGrants(store, planFor(1), true, fast)).toMatchObject({ granted: true, dryRun: true });
    expect(store.reads).toBe(1);
    expect(store.writes).toBe(0);
  });

  it('leaves a dry run to a read when a copy is missing or the store keeps none', () => {
    const { store } = withCache([{ ref: FLEET, budget: sdb('fleet', 1) }]);
    expect(dryRunOnCopies(store, planFor(1, [FLEET, TENANT]))).toBeUndefined();
    const uncached = new MemoryBudgetStore([{ ref: FLEET, budget: sdb('fleet', 1) }]);
    expect(dryRunOnCopies(uncached, planFor(1))).toBeUndefined();
    expect(createGrantor(uncached).dryRunOnCopies?.(planFor(1))).toBeUndefined();
  });
});

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
