// Grant reservations on the budgets ledger: keys, reserving, and reserving on a copy known without a request.
import { jest } from '@jest/globals';
import type { ServerDisruptionBudget } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import { Codes } from '../../contract/codes.js';
import { MemoryBudgetStore } from '../../contract/testing/memory-budget-store.js';
import { NOW } from '../testdata/load.js';
import { refKey, refOfKey, type BudgetRef } from '../../contract/budgets.js';
import { createGrantor, dryRunOnCopies, grantDecision, reserveGrants } from './reserve.js';
import { FLEET, RACKS, TENANT, sdb, scdb, ledger, planFor, fast, uids } from './testing/fixtures.js';

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
