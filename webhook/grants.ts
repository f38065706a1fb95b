// Atomic budget grants, the way the API server grants pod evictions against a PodDisruptionBudget:
// read the budget, check room, write the grant into status.grants with a resourceVersion precondition,
// and on conflict read again and re-decide. Budgets are reserved in the plan's fixed order; when a later
// one refuses, the grants this call wrote to earlier ones are released. The only I/O is the BudgetStore
// port, so the algorithm runs the same against the API server and against the in-memory store in tests.
import type { ServerDisruptionBudget } from '../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import { errorMessage, isMetalError } from '../lib/errors.js';
import { Codes, type Code } from './codes.js';
import { allow, deny, type Decision } from './decision.js';
import { checkRoom, describeBudget, ledgerEntry } from './rules/eviction.js';
import type { BudgetCensus } from './world.js';

export type BudgetKind = 'ServerDisruptionBudget' | 'ServerClaimDisruptionBudget';
export type AnyBudget = ServerDisruptionBudget | ServerClaimDisruptionBudget;

export interface BudgetRef {
  kind: BudgetKind;
  /** Set for ServerClaimDisruptionBudget (namespaced); unset for the cluster-scoped kind. */
  namespace?: string;
  name: string;
}

/**
 * The budgets as the API server holds them. The wiring step implements it with GET and PUT on
 * `.../status`; `replaceStatus` must send metadata.resourceVersion as a precondition and throw on 409.
 */
export interface BudgetStore {
  /** The budget with its current resourceVersion, or undefined when it does not exist. */
  get(ref: BudgetRef): Promise<AnyBudget | undefined>;
  /**
   * The newest copy known without a request (a watch cache, the last write), possibly stale; undefined
   * when none. A grant tries it first: the compare-and-swap write fails on a stale copy, so what it
   * writes is still decided on the current ledger, and the read is saved whenever the copy is current.
   */
  peek?(ref: BudgetRef): AnyBudget | undefined;
  /**
   * Writes status if metadata.resourceVersion is still current; returns the stored budget. Throws a
   * conflict (budgetConflict(), or any error with statusCode/code 409) when it is not.
   */
  replaceStatus(ref: BudgetRef, budget: AnyBudget): Promise<AnyBudget>;
}

export interface BudgetReservation {
  ref: BudgetRef;
  /** Topology domain the grant counts against ("" without a topologyKey). */
  domain: string;
  /** From the caches at decision time: expected servers and those unavailable for other reasons. */
  census: BudgetCensus;
}

export interface GrantPlan {
  maintenance: { uid: string; namespace: string; name: string };
  server: string;
  claim?: { namespace: string; name: string };
  /** In reservation order. */
  reservations: BudgetReservation[];
  ledgerCap: number;
  /** uids of maintenances on this server that are finished: their leftover grants do not hold it. */
  finishedOnServer: readonly string[];
}

export interface BudgetDenial {
  code: Code;
  message: string;
  retryAfterSeconds: number;
  ref?: BudgetRef;
  allowed?: number;
  inUse?: number;
}

export interface GrantStats {
  /** Store reads (one per attempt). */
  attempts: number;
  /** Writes refused for a stale resourceVersion. */
  conflicts: number;
  /** Backoffs taken before trying again. */
  retries: number;
}

export type GrantResult =
  | ({ granted: true; dryRun: boolean; written: BudgetRef[]; alreadyHeld: BudgetRef[] } & GrantStats)
  | ({
      granted: false;
      dryRun: boolean;
      denial: BudgetDenial;
      released: BudgetRef[];
      releaseFailed: BudgetRef[];
    } & GrantStats);

export interface GrantOptions {
  /** Attempts per budget, like the API server's 20 for evictions. */
  maxAttempts?: number;
  /** Backoff before attempt n+1: min(capMs, baseMs * 2^n), jittered by up to +jitter. */
  baseDelayMs?: number;
  capDelayMs?: number;
  jitter?: number;
  /**
   * Total time one call may spend, across budgets, before it gives up with a retry-later denial. The API
   * server's eviction loop waits up to 20 × 500 ms; an admission call must answer well inside the webhook
   * timeout, so ours is shorter.
   */
  deadlineMs?: number;
  clock?: () => Date;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** Told about each conflict and retry, for metrics. */
  onConflict?: (ref: BudgetRef) => void;
  onRetry?: (ref: BudgetRef, attempt: number) => void;
}

export type GrantFunction = ((plan: GrantPlan, options: { dryRun: boolean }) => Promise<GrantResult>) & {
  /** A dry run decided synchronously on cached copies, when they suffice (see dryRunOnCopies). */
  dryRunOnCopies?: (plan: GrantPlan) => GrantResult | undefined;
};

const DEFAULT_OPTIONS: Required<Omit<GrantOptions, 'onConflict' | 'onRetry'>> = {
  maxAttempts: 20,
  baseDelayMs: 5,
  capDelayMs: 200,
  jitter: 0.5,
  deadlineMs: 4000,
  clock: () => new Date(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
};

/** Whether an error from the store means "resourceVersion was stale" (409 Conflict). */
export function isConflictError(e: unknown): boolean {
  if (isMetalError(e, Codes.BUDGET_CONFLICT)) return true;
  if (typeof e !== 'object' || e === null) return false;
  const x = e as { statusCode?: unknown; code?: unknown; status?: unknown };
  return x.statusCode === 409 || x.code === 409 || x.status === 409;
}

export function refKey(ref: BudgetRef): string {
  return `${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;
}

class Run {
  readonly attemptsCount: GrantStats = { attempts: 0, conflicts: 0, retries: 0 };
  readonly o: Required<Omit<GrantOptions, 'onConflict' | 'onRetry'>> &
    Pick<GrantOptions, 'onConflict' | 'onRetry'>;
  readonly startedAt: number;

  constructor(options: GrantOptions) {
    this.o = { ...DEFAULT_OPTIONS, ...options };
    this.startedAt = this.o.clock().getTime();
  }

  expired(): boolean {
    return this.o.clock().getTime() - this.startedAt > this.o.deadlineMs;
  }

  async backoff(ref: BudgetRef, attempt: number): Promise<void> {
    this.attemptsCount.retries++;
    this.o.onRetry?.(ref, attempt);
    const base = Math.min(this.o.capDelayMs, this.o.baseDelayMs * 2 ** attempt);
    await this.o.sleep(base * (1 + this.o.jitter * this.o.random()));
  }
}

type StepOutcome =
  { kind: 'written' } | { kind: 'held' } | { kind: 'gone' } | { kind: 'denied'; denial: BudgetDenial };

const conflictDenial = (r: BudgetReservation, attempts: number): BudgetDenial => ({
  code: Codes.BUDGET_CONFLICT,
  message: `${describeBudget(r)} kept changing under us (${attempts} attempts)`,
  retryAfterSeconds: 1,
  ref: r.ref,
});

const storeDenial = (r: BudgetReservation, e: unknown): BudgetDenial => ({
  code: Codes.BUDGET_UNAVAILABLE,
  message: `${describeBudget(r)} could not be read or written: ${errorMessage(e)}`,
  retryAfterSeconds: 10,
  ref: r.ref,
});

/** The budget with this maintenance's ledger entry renewed (grantedAt = now). */
function withRenewedGrant(budget: AnyBudget, uid: string, now: Date): AnyBudget {
  const next = structuredClone(budget);
  next.status = {
    ...next.status,
    grants: (next.status?.grants ?? []).map((g) =>
      g.maintenanceUID === uid ? { ...g, grantedAt: now.toISOString() } : g,
    ),
  };
  return next;
}

/** The budget with a new ledger entry for this maintenance. */
function withNewGrant(budget: AnyBudget, plan: GrantPlan, r: BudgetReservation, now: Date): AnyBudget {
  const next = structuredClone(budget);
  next.status = { ...next.status, grants: [...(next.status?.grants ?? []), ledgerEntry(plan, r, now)] };
  return next;
}

/** One compare-and-swap write: 'conflict' means re-read and try again (after backoff). */
async function casWrite(
  store: BudgetStore,
  r: BudgetReservation,
  next: AnyBudget,
  run: Run,
  attempt: number,
): Promise<'ok' | 'conflict' | StepOutcome> {
  try {
    await store.replaceStatus(r.ref, next);
    return 'ok';
  } catch (e) {
    if (!isConflictError(e)) return { kind: 'denied', denial: storeDenial(r, e) };
    run.attemptsCount.conflicts++;
    run.o.onConflict?.(r.ref);
    await run.backoff(r.ref, attempt);
    return 'conflict';
  }
}

/** A fresh read of the budget, or the denial its failure becomes. */
async function readBudget(
  store: BudgetStore,
  r: BudgetReservation,
): Promise<{ budget: AnyBudget | undefined } | { denied: StepOutcome }> {
  try {
    return { budget: await store.get(r.ref) };
  } catch (e) {
    return { denied: { kind: 'denied', denial: storeDenial(r, e) } };
  }
}

/** What one budget's ledger says about this plan's reservation in it. */
function roomIn(budget: AnyBudget, plan: GrantPlan, r: BudgetReservation, finished: ReadonlySet<string>) {
  return checkRoom({
    budget,
    reservation: r,
    server: plan.server,
    maintenanceUID: plan.maintenance.uid,
    ledgerCap: plan.ledgerCap,
    finishedOnServer: finished,
  });
}

/**
 * Writes this maintenance's ledger entry into a budget that has room for it. A held grant is renewed
 * by compare-and-swap rather than trusted as read: the budget controller may be expiring it by TTL
 * right now, and its removal is a CAS too, so exactly one of the two writes wins and the loser re-reads
 * (an expired entry is then granted afresh).
 */
async function takeRoom(
  store: BudgetStore,
  plan: GrantPlan,
  r: BudgetReservation,
  budget: AnyBudget,
  held: boolean,
  run: Run,
  attempt: number,
): Promise<StepOutcome | 'conflict'> {
  const now = run.o.clock();
  const next = held
    ? withRenewedGrant(budget, plan.maintenance.uid, now)
    : withNewGrant(budget, plan, r, now);
  const outcome = await casWrite(store, r, next, run, attempt);
  return outcome === 'ok' ? { kind: held ? 'held' : 'written' } : outcome;
}

/** Reserves (or, in a dry run, only checks) room in one budget. */
async function reserveOne(
  store: BudgetStore,
  plan: GrantPlan,
  r: BudgetReservation,
  run: Run,
  dryRun: boolean,
  finished: ReadonlySet<string>,
): Promise<StepOutcome> {
  // The first look may use a copy known without a request; anything it would refuse, or a write it
  // loses, is decided again on a fresh read.
  let peeked = store.peek?.(r.ref);
  for (let attempt = 0; attempt < run.o.maxAttempts; attempt++) {
    if (attempt > 0 && run.expired()) break;
    run.attemptsCount.attempts++;
    const fresh = !peeked;
    const read = peeked ? { budget: peeked } : await readBudget(store, r);
    peeked = undefined;
    if ('denied' in read) return read.denied;
    const budget = read.budget;
    // Deleted since the cache saw it: it selects nothing any more.
    if (!budget) return { kind: 'gone' };
    const room = roomIn(budget, plan, r, finished);
    if (room.kind === 'denied') {
      if (!fresh) continue; // refused on a copy that may be stale: read it and decide again
      const { kind: _k, ...denial } = room;
      return { kind: 'denied', denial: { ...denial, ref: r.ref } };
    }
    const held = room.kind === 'present';
    if (dryRun) return { kind: held ? 'held' : 'written' };
    const outcome = await takeRoom(store, plan, r, budget, held, run, attempt);
    if (outcome !== 'conflict') return outcome;
  }
  return { kind: 'denied', denial: conflictDenial(r, run.o.maxAttempts) };
}

/** Removes this maintenance's grant from one budget, retrying on conflict. True when it is gone. */
async function releaseOne(store: BudgetStore, ref: BudgetRef, uid: string, run: Run): Promise<boolean> {
  for (let attempt = 0; attempt < run.o.maxAttempts; attempt++) {
    try {
      const budget = await store.get(ref);
      const grants = budget?.status?.grants ?? [];
      if (!budget || !grants.some((g) => g.maintenanceUID === uid)) return true;
      const next = structuredClone(budget);
      next.status = { ...next.status, grants: grants.filter((g) => g.maintenanceUID !== uid) };
      await store.replaceStatus(ref, next);
      return true;
    } catch (e) {
      if (!isConflictError(e)) return false;
      run.attemptsCount.conflicts++;
      run.o.onConflict?.(ref);
      await run.backoff(ref, attempt);
    }
  }
  return false;
}

/** Releases this maintenance's grants on the given budgets (used on failure, and by controllers). */
export async function releaseGrants(
  store: BudgetStore,
  refs: readonly BudgetRef[],
  uid: string,
  options: GrantOptions = {},
) {
  const run = new Run(options);
  const released: BudgetRef[] = [];
  const failed: BudgetRef[] = [];
  // Reverse order: undo the latest reservation first.
  for (const ref of [...refs].reverse())
    ((await releaseOne(store, ref, uid, run)) ? released : failed).push(ref);
  return { released, failed };
}

/**
 * Takes room in every budget of the plan, or in none: grants written or renewed by this call are
 * released when a later budget refuses (a release that fails is left to the budget controller's TTL).
 * Idempotent: a budget whose ledger already holds this maintenance uid counts as reserved; its entry's
 * grantedAt is renewed by compare-and-swap, so a concurrent TTL expiry cannot leave an admitted
 * maintenance without a ledger entry. Dry run: checks room, writes nothing.
 */
export async function reserveGrants(
  store: BudgetStore,
  plan: GrantPlan,
  dryRun: boolean,
  options: GrantOptions = {},
): Promise<GrantResult> {
  const run = new Run(options);
  const written: BudgetRef[] = [];
  const alreadyHeld: BudgetRef[] = [];
  const finished = new Set(plan.finishedOnServer);
  for (const r of plan.reservations) {
    const outcome = await reserveOne(store, plan, r, run, dryRun, finished);
    if (outcome.kind === 'denied') {
      // Renewed grants go too: this maintenance is not InMaintenance (else no eviction review would
      // ask), so a grant kept for it would only hold a slot others could use.
      const undo = dryRun
        ? { released: [], failed: [] }
        : await releaseGrants(store, [...alreadyHeld, ...written], plan.maintenance.uid, options);
      return {
        granted: false,
        dryRun,
        denial: outcome.denial,
        released: undo.released,
        releaseFailed: undo.failed,
        ...run.attemptsCount,
      };
    }
    if (outcome.kind === 'written') written.push(r.ref);
    if (outcome.kind === 'held') alreadyHeld.push(r.ref);
  }
  return { granted: true, dryRun, written, alreadyHeld, ...run.attemptsCount };
}

/**
 * A dry run answered from the copies the store knows without a request, when every budget's copy admits
 * it; undefined when a copy is missing or refuses, and a fresh read must decide (as reserveGrants does).
 * A dry run reserves nothing, so its answer is as fresh as the watch cache, like a GET's: a question
 * answered, never a grant given. Synchronous, so the webhook answers it without a promise.
 */
export function dryRunOnCopies(store: BudgetStore, plan: GrantPlan): GrantResult | undefined {
  if (!store.peek) return undefined;
  const finished = new Set(plan.finishedOnServer);
  const written: BudgetRef[] = [];
  const alreadyHeld: BudgetRef[] = [];
  for (const r of plan.reservations) {
    const budget = store.peek(r.ref);
    if (!budget) return undefined;
    const room = roomIn(budget, plan, r, finished);
    if (room.kind === 'denied') return undefined;
    (room.kind === 'present' ? alreadyHeld : written).push(r.ref);
  }
  const looks = { attempts: plan.reservations.length, conflicts: 0, retries: 0 };
  return { granted: true, dryRun: true, written, alreadyHeld, ...looks };
}

/** A GrantFunction bound to a store and options, for the server's dependency injection. */
export function createGrantor(store: BudgetStore, options: GrantOptions = {}): GrantFunction {
  return Object.assign(
    (plan: GrantPlan, { dryRun }: { dryRun: boolean }) => reserveGrants(store, plan, dryRun, options),
    { dryRunOnCopies: (plan: GrantPlan) => dryRunOnCopies(store, plan) },
  );
}

/** The admission decision for a grant result. */
export function grantDecision(result: GrantResult, warnings: string[] = []): Decision {
  if (result.granted) return allow(warnings);
  const d = result.denial;
  return deny(d.code, d.message, { warnings, retryAfterSeconds: d.retryAfterSeconds });
}
