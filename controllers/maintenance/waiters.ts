// Servers whose next maintenance was refused for lack of budget room. A backstop timer (BUDGET_RECHECK_MS,
// doubling per denial to BACKSTOP_MAX_MS, jittered) is the fallback; when a budget frees room (a
// grant released, or fewer servers unavailable) the controller wakes as many waiters as slots were freed, in
// queue order across the fleet (priority, class, age), instead of all of them: a thousand waiters retrying at
// every release would be a thundering herd against the webhook and the budget's compare-and-swap. Only
// waiters refused by that budget (or by one the denial did not name) are woken: a slot freed in the fleet
// budget must not go to a maintenance its tenant's budget still refuses, while the one the fleet budget
// refused sleeps.
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { compareQueueKeys, queueKey, type QueueKey } from '../../contract/lifecycle.js';
import { Codes } from '../../contract/codes.js';

interface Waiter {
  /** The queue key of the maintenance waiting (computed once: take() runs per release). */
  key: QueueKey;
  /** The budget that refused it (refKey); undefined when the denial did not say. */
  budget: string | undefined;
  /** The server's topology domain in that budget ("" without a topologyKey). */
  domain: string | undefined;
  /** Slots its attempt takes: 1, or its gang's size (a gang is granted whole). */
  need: number;
  /** Its gang (namespace/name): one woken member tries for all of them. */
  gang: string | undefined;
}

/** Which waiters a release may wake: those of `budget` (in `domain`, when known), and those nobody named. */
export interface WakeScope {
  budget?: string;
  domain?: string;
}

const inScope = (w: Waiter, { budget, domain }: WakeScope) =>
  budget === undefined ||
  w.budget === undefined ||
  (w.budget === budget && (domain === undefined || w.domain === undefined || w.domain === domain));

export class BudgetWaiters {
  readonly #waiting = new Map<string, Waiter>();
  /** Waiters in a gang: without any, a release's few slots are taken by a scan, not a sort. */
  #gangs = 0;

  /**
   * Records that `server` waits for room in `budget` (refKey; undefined: unknown), in the server's
   * `domain` of it, for maintenance `m`.
   */
  add(server: string, m: ServerMaintenance, budget?: string, domain?: string): void {
    const gang = m.spec.gang ? `${m.metadata.namespace ?? ''}/${m.spec.gang.name}` : undefined;
    this.remove(server);
    if (gang) this.#gangs++;
    this.#waiting.set(server, { key: queueKey(m), budget, domain, need: m.spec.gang?.size ?? 1, gang });
  }

  remove(server: string): void {
    if (this.#waiting.get(server)?.gang) this.#gangs--;
    this.#waiting.delete(server);
  }

  has(server: string): boolean {
    return this.#waiting.has(server);
  }

  get size(): number {
    return this.#waiting.size;
  }

  /** The first `n` servers in queue order of their maintenance among those in `scope`; they leave the set. */
  take(n: number, scope: WakeScope = {}, room?: number): string[] {
    if (n <= 0 || this.#waiting.size === 0) return [];
    const eligible = (w: Waiter) => inScope(w, scope);
    const taken: string[] = [];
    if (this.#gangs > 0) return this.#takeFitting(n, eligible, Math.max(n, room ?? n));
    // A release frees one or two slots: a scan per slot is O(waiters), where a sort was O(w log w).
    if (n <= 4) {
      for (let i = 0; i < n; i++) {
        let first: [string, Waiter] | undefined;
        for (const e of this.#waiting)
          if (eligible(e[1]) && (!first || compareQueueKeys(e[1].key, first[1].key) < 0)) first = e;
        if (!first) break;
        this.remove(first[0]);
        taken.push(first[0]);
      }
      return taken;
    }
    const order = [...this.#waiting]
      .filter(([, w]) => eligible(w))
      .sort(([, a], [, b]) => compareQueueKeys(a.key, b.key))
      .slice(0, n);
    for (const [server] of order) {
      this.remove(server);
      taken.push(server);
    }
    return taken;
  }

  /**
   * In queue order, the waiters whose need fits the slots left: a gang is woken only when its whole
   * need fits the budget's room (woken for less, it would be held back and the slot lost until its
   * timer), so a gang whose room came one release at a time is woken by the release that completes
   * it; single waiters take no more than the `n` slots freed. One member
   * per gang is woken, and its gang's other waiters leave the set: its grant covers them all, and the
   * controller then looks at their servers at once.
   */
  #takeFitting(n: number, eligible: (w: Waiter) => boolean, room: number): string[] {
    const order = [...this.#waiting]
      .filter(([, w]) => eligible(w))
      .sort(([, a], [, b]) => compareQueueKeys(a.key, b.key));
    const taken: string[] = [];
    const gangsTaken = new Set<string>();
    let [left, roomLeft] = [n, room];
    for (const [server, w] of order) {
      if (left <= 0 || roomLeft <= 0) break;
      if (w.gang && gangsTaken.has(w.gang)) continue;
      if (w.need > (w.gang ? roomLeft : left)) continue;
      left -= w.need;
      roomLeft -= w.need;
      taken.push(server);
      if (w.gang) gangsTaken.add(w.gang);
    }
    for (const server of taken) this.remove(server);
    for (const [server, w] of [...this.#waiting]) if (w.gang && gangsTaken.has(w.gang)) this.remove(server);
    return taken;
  }

  /** How many servers wait in `scope`. */
  waitingFor(scope: WakeScope): number {
    let n = 0;
    for (const w of this.#waiting.values()) if (inScope(w, scope)) n++;
    return n;
  }
}

/** Denials that end when a grant leaves a ledger (or allowed rises): the budget update wakes the waiter. */
const ENDED_BY_RELEASE = new Set(['BudgetExhausted', 'BudgetLedgerFull']);

/**
 * How long a maintenance denied for budget room waits before it asks again on its own. The release that
 * frees a slot wakes the first waiters at once (BudgetWaiters), and a holder leaving the server ends
 * every wait on it, so this is only the backstop, for a slot that opens without an event this
 * controller sees (a BMC outage ending, a budget's count moving): 15 s after the first denial, doubling
 * to BACKSTOP_MAX_MS, jittered. Conflicts, stale and paused budgets keep the webhook's hint.
 */
const BUDGET_RECHECK_MS = 15_000;
/** No backstop timer is longer (issue 31: a wait that any event ends never rests on a 10-minute timer). */
export const BACKSTOP_MAX_MS = 60_000;

/**
 * A waiter woken by a release and still denied for room most likely asked before the webhook's caches
 * saw the release (the released server still counted as in maintenance): the slot is free, and nobody
 * else was woken for it. It asks again after 0.25, 0.5, 1, 2 and 4 s before falling back to the long
 * wait: the webhook's caches are behind by a fraction of a second, a little more when a wave of
 * maintenances ends together. With a single retry after 1 s, such a wave lost slots: their waiters went
 * back to the long wait, and the slots stood empty until the waiters' timers fired, up to a minute
 * later.
 */
const WOKEN_RETRY_MS = 250;
const WOKEN_RETRIES = 5;

/** Denials about a budget (its room, its state, its ledger): the maintenance waits for that budget. */
export const BUDGET_DENIALS = new Set([
  'BudgetExhausted',
  'BudgetPaused',
  'BudgetStale',
  'BudgetConflict',
  'BudgetLedgerFull',
]);

type Refusal = { reason: string; budget?: string | undefined };
const sameBudget = (wokenBy: string, denial: Refusal) =>
  denial.budget === undefined || denial.budget === wokenBy;

/**
 * Whether a waiter woken by a release of `wokenBy` (refKey) and refused again for room keeps asking on
 * the short schedule: only when that same budget refused it (the webhook's caches had not seen the
 * release yet).
 */
export function keepsWokenSlot(wokenBy: string, denial: Refusal): boolean {
  return ENDED_BY_RELEASE.has(denial.reason) && sameBudget(wokenBy, denial);
}

/**
 * Whether a woken waiter's refusal shows it has no use for the slot it was woken for, so that the next
 * waiter of `wokenBy` should have it now: another budget refused it, or something other than a budget
 * (its server busy, no approval yet, outside its window). A refusal by the same budget keeps the slot:
 * the waiter asks again soon (room not seen yet, or a lost compare-and-swap), and a second waiter for
 * it would only add to the contention.
 */
export function passesOnWokenSlot(wokenBy: string, denial: Refusal): boolean {
  return !BUDGET_DENIALS.has(denial.reason) || !sameBudget(wokenBy, denial);
}

/** Where a maintenance stands in its waiting: refusals since a release woke it, budget denials in a row. */
export interface WaitState {
  /** Refusals since a release woke it; undefined when it was not woken (or gave the slot up). */
  woken: number | undefined;
  budgetDenials: number;
}

/**
 * How long a denied maintenance waits before it asks again on its own, and its waiting state after this
 * denial. A denial that no release ends keeps the webhook's hint (at least 1 s, 30 s without one) up
 * to BACKSTOP_MAX_MS; past it, BACKSTOP_MAX_MS jittered 75-100 %.
 */
export function retryAfterDenial(
  denial: { reason: string; retryAfterMs: number | undefined },
  state: WaitState,
  random: () => number = Math.random,
): WaitState & { ms: number } {
  const hint = Math.max(1000, denial.retryAfterMs ?? 30_000);
  // 75-100 %: the waiters refused together in a burst do not all look again in the same second, and
  // none waits longer than the cap.
  const jitter = 0.75 + 0.25 * random();
  // A hint within the cap names when the wait ends (a notBefore, a window opening, a conflict's short
  // retry): kept exactly. A longer one (a window opening hours away) is a backstop like any other: at
  // most 60 s, jittered, so a policy or clock change, or a missed wake-up, costs a minute, not
  // --max-backoff (issue 31).
  if (!ENDED_BY_RELEASE.has(denial.reason))
    return {
      ms: hint <= BACKSTOP_MAX_MS ? hint : Math.round(BACKSTOP_MAX_MS * jitter),
      woken: undefined,
      budgetDenials: 0,
    };
  const { woken } = state;
  if (woken !== undefined && woken < WOKEN_RETRIES)
    return { ms: WOKEN_RETRY_MS * 2 ** woken, woken: woken + 1, budgetDenials: state.budgetDenials };
  const n = state.budgetDenials + 1;
  const base = Math.min(BACKSTOP_MAX_MS, Math.max(hint, BUDGET_RECHECK_MS * 2 ** Math.min(n - 1, 4)));
  return { ms: Math.round(base * jitter), woken: undefined, budgetDenials: n };
}

type LedgerLike = {
  status?: {
    grants?: { maintenanceUID: string }[];
    disruptionsAllowed?: number;
    domains?: { granted?: number }[];
  };
};

/**
 * The room a budget has now, as far as one object tells: `disruptionsAllowed` as the budget controller
 * last computed it, less the grants written since and plus those released since (the ledger's length
 * against the `granted` counts that computation saw). One release then frees exactly one slot, whether
 * the ledger write or the budget controller's status write reaches us first: counting both the release
 * and the rise of disruptionsAllowed woke two waiters per freed slot, and one of them was always refused.
 */
export function budgetRoom(b: LedgerLike): number | undefined {
  const domains = b.status?.domains;
  if (!domains) return undefined;
  const seen = domains.reduce((n, d) => n + (d.granted ?? 0), 0);
  return (b.status?.disruptionsAllowed ?? 0) - ((b.status?.grants?.length ?? 0) - seen);
}

/**
 * How many slots a budget update freed: the rise of its room (see budgetRoom), from at least 0; for a
 * budget the budget controller has not computed yet, the grants that left the ledger.
 */
export function slotsFreed(before: LedgerLike, after: LedgerLike): number {
  const was = budgetRoom(before);
  const is = budgetRoom(after);
  if (was !== undefined && is !== undefined) return Math.max(0, is - Math.max(0, was));
  const now = new Set((after.status?.grants ?? []).map((g) => g.maintenanceUID));
  return (before.status?.grants ?? []).filter((g) => !now.has(g.maintenanceUID)).length;
}

type DomainLedgerLike = {
  spec?: { paused?: boolean };
  status?: {
    disruptionsAllowed?: number;
    grants?: { maintenanceUID: string; domain?: string }[];
    domains?: { name: string; granted?: number; allowed?: number }[];
  };
};

/** Room per topology domain, as budgetRoom counts it for the whole budget; undefined without domains. */
function roomByDomain(b: DomainLedgerLike): Map<string, number> | undefined {
  const domains = b.status?.domains;
  if (!domains || b.spec?.paused === true) return undefined;
  const held = new Map<string, number>();
  for (const g of b.status?.grants ?? []) held.set(g.domain ?? '', (held.get(g.domain ?? '') ?? 0) + 1);
  return new Map(
    domains.map((d) => [d.name, (d.allowed ?? 0) - ((held.get(d.name) ?? 0) - (d.granted ?? 0))]),
  );
}

/**
 * Where a budget update freed its slots (slotsFreed): per topology domain, so that a release in rack A
 * wakes a waiter in rack A, not the first waiter of the budget, who may wait in rack B. Slots the
 * domains do not explain (a budget unpaused, one not computed yet) come without a domain.
 */
export function slotsFreedByDomain(
  before: DomainLedgerLike,
  after: DomainLedgerLike,
): { domain?: string; freed: number }[] {
  const total = slotsFreed(before, after);
  if (total <= 0) return [];
  const was = roomByDomain(before);
  const is = roomByDomain(after);
  const out: { domain?: string; freed: number }[] = [];
  let left = total;
  if (was && is)
    for (const [domain, room] of is) {
      const freed = Math.min(left, Math.max(0, room - Math.max(0, was.get(domain) ?? 0)));
      if (freed > 0) out.push({ domain, freed });
      left -= freed;
    }
  if (left > 0) out.push({ freed: left });
  return out;
}

type Ledger = {
  status?: { grants?: { maintenanceUID: string; server: string; grantedAt?: string; domain?: string }[] };
};

/** Servers whose ledger entries a budget update added, removed or changed (grantedAt, domain). */
export function changedGrantServers(before: Ledger | undefined, after: Ledger | undefined): Set<string> {
  const key = (g: NonNullable<NonNullable<Ledger['status']>['grants']>[number]) =>
    `${g.maintenanceUID}|${g.server}|${g.grantedAt ?? ''}|${g.domain ?? ''}`;
  const was = new Map((before?.status?.grants ?? []).map((g) => [key(g), g.server]));
  const changed = new Set<string>();
  for (const g of after?.status?.grants ?? []) if (!was.delete(key(g))) changed.add(g.server);
  for (const server of was.values()) changed.add(server);
  return changed;
}

/**
 * Codes of the eviction rule, the admission step that reserves budget room: it refuses before it
 * reserves, or undoes its own reservation when a later budget of the same review refuses.
 */
const RESERVING_RULE_CODES: ReadonlySet<string> = new Set([
  Codes.GANG_INCOMPLETE,
  Codes.APPROVAL_MISSING,
  Codes.NOT_BEFORE,
  Codes.DEFERRED,
  Codes.OUTSIDE_WINDOW,
  Codes.SERVER_BUSY,
  Codes.CLAIM_NOT_FOUND,
  Codes.BUDGET_EXHAUSTED,
  Codes.BUDGET_PAUSED,
  Codes.BUDGET_STALE,
  Codes.BUDGET_LEDGER_FULL,
  Codes.BUDGET_CONFLICT,
  Codes.BUDGET_UNAVAILABLE,
]);

/**
 * Whether a refused InMaintenance write may leave a grant behind: another step refused it (the API
 * server runs validating webhooks in parallel), after the eviction rule may have reserved room.
 */
export function refusedAfterReservation(code: string): boolean {
  return !RESERVING_RULE_CODES.has(code);
}

/**
 * Whether an InMaintenance write that failed without a denial surely was not stored, after the eviction
 * webhook may have reserved room for it: the API server answered that calling a webhook failed (a replica
 * killed mid-reservation, or too slow: failurePolicy Fail rejects the write), or the write lost its
 * compare-and-swap after admission (the object changed meanwhile, e.g. it was deleted). A client-side
 * timeout or a lost connection may have stored it: those are left to the next attempt and the TTL.
 */
export function failedAfterReservation(e: { statusCode: number; reason: string; message: string }): boolean {
  if (e.statusCode === 409 && e.reason === 'Conflict') return true;
  return e.statusCode >= 500 && /failed calling webhook/i.test(e.message);
}
