// Which budget updates free slots, and who is woken for them.
import { describe, expect, it } from '@jest/globals';
import { Codes } from '../../contract/codes.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import {
  BudgetWaiters,
  budgetRoom,
  keepsWokenSlot,
  passesOnWokenSlot,
  retryAfterDenial,
  BACKSTOP_MAX_MS,
  refusedAfterReservation,
  failedAfterReservation,
  slotsFreed,
  slotsFreedByDomain,
} from './waiters.js';
import { fullBudget, fullBudgetMessage } from './hold-back.js';
import { KubeApiError, type KubeStatus } from '../../lib/kube/errors.js';

const grants = (...uids: string[]) => uids.map((maintenanceUID) => ({ maintenanceUID }));
/** A budget whose status the budget controller computed over `seen` grants, now holding `held`. */
const budget = (allowed: number, seen: number, held: string[]) => ({
  status: { disruptionsAllowed: allowed, domains: [{ granted: seen }], grants: grants(...held) },
});

describe('slotsFreed', () => {
  it('counts one slot per release, whichever write arrives first', () => {
    // K=2, both granted: the status says 0 allowed over 2 grants.
    const full = budget(0, 2, ['a', 'b']);
    // The ledger release first, then the budget controller's recount (1 allowed over 1 grant).
    const released = budget(0, 2, ['b']);
    const recounted = budget(1, 1, ['b']);
    expect(slotsFreed(full, released)).toBe(1);
    expect(slotsFreed(released, recounted)).toBe(0);
    // The recount first cannot happen without the release, but a status write that only catches up
    // with earlier ledger writes frees nothing either.
    expect(budgetRoom(released)).toBe(budgetRoom(recounted));
  });

  it('counts a rise of disruptionsAllowed that no release explains (a server back from Error)', () => {
    expect(slotsFreed(budget(0, 2, ['a', 'b']), budget(1, 2, ['a', 'b']))).toBe(1);
  });

  it('wakes at most one waiter per release, also when other outages over-commit the budget', () => {
    // Two servers went into Error while two grants were held (disruptionsAllowed is clamped at 0, so
    // the deficit does not show): the release may wake one waiter, whom the webhook then refuses.
    expect(slotsFreed(budget(0, 2, ['a', 'b']), budget(0, 2, ['b']))).toBe(1);
  });

  it('frees nothing on a new grant or its recount', () => {
    const one = budget(1, 1, ['a']);
    const granted = budget(1, 1, ['a', 'b']);
    expect(slotsFreed(one, granted)).toBe(0);
    expect(slotsFreed(granted, budget(0, 2, ['a', 'b']))).toBe(0);
  });

  it('counts released grants of a budget the budget controller has not computed yet', () => {
    expect(slotsFreed({ status: { grants: grants('a', 'b') } }, { status: { grants: grants('b') } })).toBe(1);
  });
});

describe('slotsFreedByDomain', () => {
  /** A per-rack budget as the budget controller computed it over `seen` grants per rack, holding `held`. */
  const racks = (
    allowed: Record<string, number>,
    seen: Record<string, number>,
    held: [string, string][],
    paused = false,
  ) => ({
    spec: { paused },
    status: {
      disruptionsAllowed: paused ? 0 : Object.values(allowed).reduce((a, b) => a + b, 0),
      domains: Object.keys(allowed).map((name) => ({ name, allowed: allowed[name], granted: seen[name] })),
      grants: held.map(([maintenanceUID, domain]) => ({ maintenanceUID, domain })),
    },
  });

  it('puts a released slot in the rack it was released in', () => {
    const full = racks({ a: 0, b: 0 }, { a: 1, b: 1 }, [
      ['m1', 'a'],
      ['m2', 'b'],
    ]);
    const releasedA = racks({ a: 0, b: 0 }, { a: 1, b: 1 }, [['m2', 'b']]);
    expect(slotsFreedByDomain(full, releasedA)).toEqual([{ domain: 'a', freed: 1 }]);
    // The budget controller's recount after it frees nothing more.
    expect(slotsFreedByDomain(releasedA, racks({ a: 1, b: 0 }, { a: 0, b: 1 }, [['m2', 'b']]))).toEqual([]);
  });

  it('frees without a domain what the domains do not explain: a budget unpaused', () => {
    const paused = racks({ a: 1, b: 1 }, { a: 0, b: 0 }, [], true);
    const unpaused = racks({ a: 1, b: 1 }, { a: 0, b: 0 }, []);
    expect(slotsFreedByDomain(paused, unpaused)).toEqual([{ freed: 2 }]);
  });

  it('is the whole-budget count for a budget without topology (one domain "")', () => {
    const one = (allowed: number, seen: number, held: string[]) =>
      racks(
        { '': allowed },
        { '': seen },
        held.map((u) => [u, ''] as [string, string]),
      );
    expect(slotsFreedByDomain(one(0, 2, ['a', 'b']), one(0, 2, ['b']))).toEqual([{ domain: '', freed: 1 }]);
    expect(slotsFreedByDomain(one(1, 1, ['a']), one(1, 1, ['a', 'b']))).toEqual([]);
  });
});

describe('fullBudget', () => {
  /** K=2 over 6 servers; `unavailable` and `granted` as the budget controller last counted, `held` grants now. */
  const fleet = (over: { unavailable: number; granted: number; held: number; paused?: boolean }) => ({
    metadata: { name: 'fleet' },
    spec: {
      serverSelector: { matchLabels: { pool: 'a' } },
      maxUnavailable: 2,
      ...(over.paused ? { paused: true } : {}),
    },
    status: {
      domains: [{ name: '', expected: 6, unavailable: over.unavailable, granted: over.granted }],
      grants: Array.from({ length: over.held }, (_, i) => ({ maintenanceUID: `u${i}` })),
    },
  });
  const racks = {
    metadata: { name: 'racks' },
    spec: { serverSelector: {}, topologyKey: 'rack', maxUnavailable: '50%' },
    status: {
      domains: [
        { name: 'r1', expected: 2, unavailable: 1, granted: 1 },
        { name: 'r2', expected: 2, unavailable: 0, granted: 0 },
      ],
      grants: [{ maintenanceUID: 'x', domain: 'r1' }],
    },
  };
  const pool = { pool: 'a' };

  it('names a budget selecting the server whose cached ledger has no room in its domain', () => {
    const full = fullBudget([fleet({ unavailable: 2, granted: 2, held: 2 })], pool, 'me');
    expect(full).toMatchObject({ name: 'fleet', inUse: 2, allowed: 2, expected: 6 });
    expect(fullBudgetMessage(full!)).toContain('ServerDisruptionBudget fleet: 2 unavailable, 2 allowed');
    expect(fullBudget([racks], { rack: 'r1' }, 'me')).toMatchObject({ name: 'racks', domain: 'r1' });
    const paused = fullBudget([fleet({ unavailable: 0, granted: 0, held: 0, paused: true })], pool, 'me');
    expect(fullBudgetMessage(paused!)).toContain('is paused');
  });

  it('counts grants written since the budget controller counted, and releases since', () => {
    expect(fullBudget([fleet({ unavailable: 1, granted: 1, held: 2 })], pool, 'me')?.inUse).toBe(2);
    expect(fullBudget([fleet({ unavailable: 2, granted: 2, held: 1 })], pool, 'me')).toBeUndefined();
  });

  it('lets the webhook decide otherwise: room, another domain, not selected, not counted, its own grant', () => {
    expect(fullBudget([fleet({ unavailable: 1, granted: 1, held: 1 })], pool, 'me')).toBeUndefined();
    expect(fullBudget([racks], { rack: 'r2' }, 'me')).toBeUndefined();
    expect(fullBudget([fleet({ unavailable: 2, granted: 2, held: 2 })], { pool: 'b' }, 'me')).toBeUndefined();
    expect(fullBudget([{ metadata: { name: 'new' }, spec: {} }], {}, 'me')).toBeUndefined();
    // It holds a grant there already: the webhook renews it.
    expect(fullBudget([fleet({ unavailable: 2, granted: 2, held: 2 })], pool, 'u1')).toBeUndefined();
  });
});

describe('retryAfterDenial', () => {
  const exhausted = { reason: 'BudgetExhausted', retryAfterMs: 30_000 };
  const middle = () => 0.5; // no jitter

  it('keeps a woken waiter on the slot it was woken for: 0.25 to 4 s, then the long wait', () => {
    let state = { woken: 0 as number | undefined, budgetDenials: 0 };
    const waits: number[] = [];
    for (let i = 0; i < 7; i++) {
      const next = retryAfterDenial(exhausted, state, middle);
      waits.push(next.ms);
      state = next;
    }
    // After the short retries, the backstop: 15 s then 30 s (jitter 75-100 %, here 87.5 %).
    expect(waits).toEqual([250, 500, 1000, 2000, 4000, 26_250, 26_250]);
    expect(state).toEqual({ ms: 26_250, woken: undefined, budgetDenials: 2 });
  });

  it('gives a waiter nobody woke the backstop, doubling per denial to 60 s at most, jittered', () => {
    const none = { reason: 'BudgetExhausted', retryAfterMs: undefined };
    const at = (budgetDenials: number, r: () => number) =>
      retryAfterDenial(none, { woken: undefined, budgetDenials }, r).ms;
    // Without a hint the first wait is the webhook's default 30 s, never less than that.
    expect([0, 1, 2, 3, 50].map((n) => at(n, () => 1))).toEqual([30_000, 30_000, 60_000, 60_000, 60_000]);
    expect(at(0, () => 0)).toBe(22_500);
    for (let n = 0; n < 60; n++) expect(at(n, Math.random)).toBeLessThanOrEqual(BACKSTOP_MAX_MS);
    // A hint above the cap does not lengthen the backstop: a release or a holder's exit comes first.
    expect(
      retryAfterDenial(
        { ...exhausted, retryAfterMs: 600_000 },
        { woken: undefined, budgetDenials: 0 },
        () => 1,
      ).ms,
    ).toBe(60_000);
  });

  it("keeps the webhook's hint for a denial no release ends, and forgets the wake and the count", () => {
    const conflict = retryAfterDenial(
      { reason: 'BudgetConflict', retryAfterMs: 2_000 },
      { woken: 1, budgetDenials: 4 },
    );
    expect(conflict).toEqual({ ms: 2_000, woken: undefined, budgetDenials: 0 });
    const busy = retryAfterDenial(
      { reason: 'ServerBusy', retryAfterMs: undefined },
      { woken: undefined, budgetDenials: 0 },
    );
    expect(busy.ms).toBe(30_000);
    expect(
      retryAfterDenial({ reason: 'BudgetPaused', retryAfterMs: 10 }, { woken: undefined, budgetDenials: 0 })
        .ms,
    ).toBe(1000);
  });

  it('caps a window or notBefore hint past 60 s at a jittered backstop of at most 60 s', () => {
    const none = { woken: undefined, budgetDenials: 0 };
    for (const reason of ['OutsideWindow', 'NotBefore']) {
      const far = { reason, retryAfterMs: 6 * 3600_000 }; // a window opening six hours away
      expect(retryAfterDenial(far, none, () => 1).ms).toBe(60_000);
      expect(retryAfterDenial(far, none, () => 0).ms).toBe(45_000);
      for (let i = 0; i < 50; i++)
        expect(retryAfterDenial(far, none).ms).toBeLessThanOrEqual(BACKSTOP_MAX_MS);
      // Within the cap the hint names the moment the wait ends: kept exactly.
      expect(retryAfterDenial({ reason, retryAfterMs: 42_000 }, none, () => 0).ms).toBe(42_000);
    }
  });
});

describe('BudgetWaiters', () => {
  const FLEET = 'ServerDisruptionBudget//fleet';
  const TENANT = 'ServerClaimDisruptionBudget/t1/db';
  /** A maintenance created `minute` minutes into the day: earlier is first in queue order. */
  const m = (name: string, minute: number) =>
    ({
      metadata: {
        name,
        namespace: 'ns',
        creationTimestamp: `2026-11-30T00:${String(minute).padStart(2, '0')}:00Z`,
      },
      spec: { serverRef: { name } },
    }) as unknown as ServerMaintenance;

  const waiters = () => {
    const w = new BudgetWaiters();
    w.add('s1', m('s1', 1), TENANT);
    w.add('s2', m('s2', 2), FLEET);
    w.add('s3', m('s3', 3));
    w.add('s4', m('s4', 4), FLEET);
    return w;
  };

  it('wakes, in queue order, only those the released budget refused and those whose denial named none', () => {
    const w = waiters();
    expect(w.take(1, { budget: FLEET })).toEqual(['s2']); // s1, first in the queue, waits for its tenant's budget
    expect(w.take(5, { budget: FLEET })).toEqual(['s3', 's4']);
    expect(w.take(1, { budget: FLEET })).toEqual([]);
    expect(w.take(1, { budget: TENANT })).toEqual(['s1']);
  });

  it('takes the same ones through the sort used for many slots as through the scan used for few', () => {
    expect(waiters().take(5, { budget: FLEET })).toEqual(['s2', 's3', 's4']);
    expect(waiters().take(2, { budget: FLEET })).toEqual(['s2', 's3']);
    expect(waiters().take(10)).toEqual(['s1', 's2', 's3', 's4']);
  });

  it('wakes, for a slot freed in one rack of a per-rack budget, a waiter in that rack', () => {
    const RACKS = 'ServerDisruptionBudget//racks';
    const w = new BudgetWaiters();
    w.add('b1', m('b1', 1), RACKS, 'rack-b');
    w.add('a1', m('a1', 2), RACKS, 'rack-a');
    w.add('x1', m('x1', 3)); // its denial named no budget: any release may be its
    expect(w.take(1, { budget: RACKS, domain: 'rack-a' })).toEqual(['a1']);
    expect(w.take(1, { budget: RACKS, domain: 'rack-a' })).toEqual(['x1']);
    expect(w.take(1, { budget: RACKS, domain: 'rack-a' })).toEqual([]);
    expect(w.take(1, { budget: RACKS })).toEqual(['b1']); // a slot no domain explains: any of the budget's
  });

  it('counts who waits for a budget (a deleted budget wakes all of them)', () => {
    const w = waiters();
    expect(w.waitingFor({ budget: FLEET })).toBe(3);
    expect(w.waitingFor({ budget: TENANT })).toBe(2);
    w.add('s3', m('s3', 3), TENANT); // refused again, this time naming its budget
    expect(w.waitingFor({ budget: FLEET })).toBe(2);
    expect(w.size).toBe(4);
  });
});

describe('passesOnWokenSlot', () => {
  const FLEET = 'ServerDisruptionBudget//fleet';
  it('passes the slot on when another budget, or no budget at all, refused the woken waiter', () => {
    expect(
      passesOnWokenSlot(FLEET, { reason: 'BudgetExhausted', budget: 'ServerClaimDisruptionBudget/t/db' }),
    ).toBe(true);
    expect(passesOnWokenSlot(FLEET, { reason: 'ServerBusy' })).toBe(true);
    expect(passesOnWokenSlot(FLEET, { reason: 'AwaitingApproval' })).toBe(true);
  });
  it('keeps it when the budget that woke it refused it: room not seen yet, or a lost compare-and-swap', () => {
    expect(passesOnWokenSlot(FLEET, { reason: 'BudgetExhausted', budget: FLEET })).toBe(false);
    expect(passesOnWokenSlot(FLEET, { reason: 'BudgetConflict', budget: FLEET })).toBe(false);
    expect(passesOnWokenSlot(FLEET, { reason: 'BudgetExhausted' })).toBe(false);
  });
});

describe('keepsWokenSlot', () => {
  const FLEET = 'ServerDisruptionBudget//fleet';
  it('keeps the slot only when the budget that woke it refuses it again for room', () => {
    expect(keepsWokenSlot(FLEET, { reason: 'BudgetExhausted', budget: FLEET })).toBe(true);
    expect(keepsWokenSlot(FLEET, { reason: 'BudgetExhausted' })).toBe(true); // the denial named none
    expect(
      keepsWokenSlot(FLEET, { reason: 'BudgetExhausted', budget: 'ServerClaimDisruptionBudget/t/db' }),
    ).toBe(false);
    expect(keepsWokenSlot(FLEET, { reason: 'ServerBusy' })).toBe(false);
    expect(keepsWokenSlot(FLEET, { reason: 'BudgetConflict', budget: FLEET })).toBe(false);
  });
});

describe('refusedAfterReservation', () => {
  it("is true for refusals of other admission steps, false for the reserving rule's own", () => {
    for (const code of [Codes.OBJECT_INVALID, Codes.INTERNAL, Codes.FORBIDDEN_WRITER, Codes.NO_POLICY])
      expect(refusedAfterReservation(code)).toBe(true);
    for (const code of [
      Codes.BUDGET_EXHAUSTED,
      Codes.SERVER_BUSY,
      Codes.APPROVAL_MISSING,
      Codes.OUTSIDE_WINDOW,
    ])
      expect(refusedAfterReservation(code)).toBe(false);
  });
});

describe('failedAfterReservation', () => {
  const err = (method: string, code: number, status: KubeStatus) =>
    new KubeApiError(method, '/apis/x/servermaintenances/m/status', code, status);
  it('is true for writes the API server surely did not store: a failed webhook call, a lost conflict', () => {
    // What kube-apiserver answers when a webhook replica dies mid-call (failurePolicy Fail).
    const killed = err('PATCH', 500, {
      reason: 'InternalError',
      message:
        'Internal error occurred: failed calling webhook "eviction.maintenance.metal.ironcore.dev": ' +
        'failed to call webhook: Post "https://10.0.0.1:9443/validate": EOF',
    });
    const conflict = err('PUT', 409, {
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on servermaintenances "m": the object has been modified',
    });
    expect(failedAfterReservation(killed)).toBe(true);
    expect(failedAfterReservation(conflict)).toBe(true);
  });

  it('is false where the write may have been stored or no webhook ran: a timeout, other errors', () => {
    const timeout = err('PATCH', 504, {
      reason: 'Timeout',
      message: 'the server was unable to return a response',
    });
    const gone = err('PATCH', 404, { reason: 'NotFound', message: 'servermaintenances "m" not found' });
    const exists = err('POST', 409, { reason: 'AlreadyExists', message: 'already exists' });
    for (const e of [timeout, gone, exists]) expect(failedAfterReservation(e)).toBe(false);
  });
});
