// Atomic budget grants, the way the API server grants pod evictions against a PodDisruptionBudget:
// read the budget, check room, write the grant into status.grants with a resourceVersion precondition,
// and on conflict read again and re-decide. Budgets are reserved in the plan's fixed order; when a later
// one refuses, the grants this call wrote to earlier ones are released. The only I/O is the BudgetStore
// port, so the algorithm runs the same against the API server and against the in-memory store in tests.
import { refKey, type AnyBudget, type BudgetRef } from '../contract/budgets.js';
import { Batcher } from '../lib/batcher.js';
import { errorMessage, isMetalError } from '../lib/errors.js';
import { withoutGrants } from '../lib/ledger.js';
import { Codes, type Code } from '../contract/codes.js';
import { allow, BUDGET_CAUSE, deny, type Decision } from '../contract/denial.js';
import { describeBudget } from '../contract/budgets.js';
import { checkRoom, ledgerEntry } from './rules/eviction.js';
import type { BudgetCensus } from './world.js';

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
  /** Looks at a budget, a cached copy or a store read (one per attempt). */
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
  message: `${describeBudget(r.ref, r.domain)} kept changing under us (${attempts} attempts)`,
  retryAfterSeconds: 1,
  ref: r.ref,
});

const storeDenial = (r: BudgetReservation, e: unknown): BudgetDenial => ({
  code: Codes.BUDGET_UNAVAILABLE,
  message: `${describeBudget(r.ref, r.domain)} could not be read or written: ${errorMessage(e)}`,
  retryAfterSeconds: 10,
  ref: r.ref,
});

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

/** A verdict of checkRoom as the step it is: refused, already held, or to be written. */
function stepFor(room: ReturnType<typeof checkRoom>, r: BudgetReservation): StepOutcome {
  if (room.kind !== 'denied') return { kind: room.kind === 'present' ? 'held' : 'written' };
  const { kind: _k, ...denial } = room;
  return { kind: 'denied', denial: { ...denial, ref: r.ref } };
}

/** A dry run's look at one budget: the cached copy when it admits, else a fresh read decides. */
async function checkOne(
  store: BudgetStore,
  plan: GrantPlan,
  r: BudgetReservation,
  run: Run,
  finished: ReadonlySet<string>,
): Promise<StepOutcome> {
  const copy = store.peek?.(r.ref);
  if (copy) {
    run.attemptsCount.attempts++;
    const step = stepFor(roomIn(copy, plan, r, finished), r);
    if (step.kind !== 'denied') return step;
  }
  run.attemptsCount.attempts++;
  const read = await readBudget(store, r);
  if ('denied' in read) return read.denied;
  return read.budget ? stepFor(roomIn(read.budget, plan, r, finished), r) : { kind: 'gone' };
}

/** One reservation waiting for its budget's next write. */
interface Reservation {
  plan: GrantPlan;
  r: BudgetReservation;
  finished: ReadonlySet<string>;
  run: Run;
}

/**
 * The ledger a batch leaves: each reservation judged in arrival order on the ledger as the ones before
 * it left it (new entries appended, held ones renewed). Undefined when a reservation is refused on a
 * copy that is not fresh: a fresh read must decide a refusal. `next` is unset when nothing changes.
 */
function judgeBatch(
  budget: AnyBudget,
  batch: readonly Reservation[],
  now: Date,
  fresh: boolean,
): { steps: StepOutcome[]; next?: AnyBudget } | undefined {
  const next = structuredClone(budget);
  const grants = [...(next.status?.grants ?? [])];
  next.status = { ...next.status, grants };
  const steps: StepOutcome[] = [];
  for (const p of batch) {
    const step = stepFor(roomIn(next, p.plan, p.r, p.finished), p.r);
    if (step.kind === 'denied' && !fresh) return undefined;
    steps.push(step);
    const uid = p.plan.maintenance.uid;
    // A held grant is renewed by compare-and-swap rather than trusted as read: the budget controller
    // may be expiring it by TTL right now, and its removal is a CAS too, so exactly one of the two
    // writes wins and the loser re-reads (an expired entry is then granted afresh).
    if (step.kind === 'held') {
      const i = grants.findIndex((g) => g.maintenanceUID === uid);
      grants[i] = { ...grants[i]!, grantedAt: now.toISOString() };
    }
    if (step.kind === 'written') grants.push(ledgerEntry(p.plan, p.r, now));
  }
  return steps.some((x) => x.kind !== 'denied') ? { steps, next } : { steps };
}

/** Writes a judged batch's ledger (when it changed): its steps, or 'conflict' for a stale read. */
async function commit(
  store: BudgetStore,
  batch: readonly Reservation[],
  judged: { steps: StepOutcome[]; next?: AnyBudget },
): Promise<StepOutcome[] | 'conflict'> {
  if (!judged.next) return judged.steps;
  try {
    await store.replaceStatus(batch[0]!.r.ref, judged.next);
    return judged.steps;
  } catch (e) {
    if (isConflictError(e)) return 'conflict';
    return judged.steps.map((x, i) =>
      x.kind === 'denied' ? x : { kind: 'denied', denial: storeDenial(batch[i]!.r, e) },
    );
  }
}

/**
 * Takes room in one budget for a batch of reservations, by compare-and-swap: read (the cached copy
 * first), judge every reservation, write the ledger once; on a lost write read again and judge again.
 * The write carries every entry or none, so the ledger stays a serial history: each entry appended
 * after checking all the entries before it.
 */
async function writeBatch(store: BudgetStore, batch: readonly Reservation[]): Promise<StepOutcome[]> {
  const first = batch[0]!; // the oldest: its deadline bounds the batch; options are the grantor's
  const { ref } = first.r;
  const o = first.run.o;
  const each = (f: (p: Reservation) => StepOutcome) => batch.map(f);
  let copy = store.peek?.(ref);
  for (let attempt = 0; attempt < o.maxAttempts; attempt++) {
    if (attempt > 0 && first.run.expired()) break;
    for (const p of batch) p.run.attemptsCount.attempts++;
    const fresh = !copy;
    let budget: AnyBudget | undefined;
    try {
      budget = copy ?? (await store.get(ref));
    } catch (e) {
      return each((p) => ({ kind: 'denied', denial: storeDenial(p.r, e) }));
    }
    copy = undefined;
    // Deleted since the cache saw it: it selects nothing any more.
    if (!budget) return each(() => ({ kind: 'gone' }));
    const judged = judgeBatch(budget, batch, o.clock(), fresh);
    if (!judged) continue; // refused on a copy that may be stale: read it and decide again
    const written = await commit(store, batch, judged);
    if (written !== 'conflict') return written;
    // The write was the batch's: counted once, on the oldest call (metrics count refused writes).
    first.run.attemptsCount.conflicts++;
    o.onConflict?.(ref);
    await first.run.backoff(ref, attempt);
  }
  return each((p) => ({ kind: 'denied', denial: conflictDenial(p.r, o.maxAttempts) }));
}

/**
 * Reservations batched per budget: those that arrive while a budget's write is in flight go into its
 * next write together. When a rack's maintenances all end at once, fifty admissions otherwise took
 * turns at one compare-and-swap, each losing to the others several times before it won, and the freed
 * slots stayed empty meanwhile (bench:rollout). One per grantor (per webhook replica); replicas still
 * meet at the compare-and-swap.
 */
export class BudgetBatches {
  readonly #store: BudgetStore;
  /** One batcher per budget (a few small objects per budget ever reserved on). */
  readonly #budgets = new Map<string, Batcher<Reservation, StepOutcome>>();

  constructor(store: BudgetStore) {
    this.#store = store;
  }

  reserve(
    plan: GrantPlan,
    r: BudgetReservation,
    run: Run,
    finished: ReadonlySet<string>,
  ): Promise<StepOutcome> {
    const key = refKey(r.ref);
    let batcher = this.#budgets.get(key);
    if (!batcher) {
      batcher = new Batcher((batch) =>
        writeBatch(this.#store, batch).catch((e: unknown) =>
          batch.map((p): StepOutcome => ({ kind: 'denied', denial: storeDenial(p.r, e) })),
        ),
      );
      this.#budgets.set(key, batcher);
    }
    return batcher.submit({ plan, r, run, finished });
  }
}

/** Removes this maintenance's grant from one budget, retrying on conflict. True when it is gone. */
async function releaseOne(store: BudgetStore, ref: BudgetRef, uid: string, run: Run): Promise<boolean> {
  for (let attempt = 0; attempt < run.o.maxAttempts; attempt++) {
    try {
      const budget = await store.get(ref);
      const next = budget && withoutGrants(budget, (g) => g.maintenanceUID === uid).next;
      if (!next) return true;
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

/** Releases this maintenance's grants on the given budgets (undoing a refused reservation). */
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
 * maintenance without a ledger entry. Dry run: checks room, writes nothing. Without `batches`, this
 * call's writes are its own.
 */
export async function reserveGrants(
  store: BudgetStore,
  plan: GrantPlan,
  dryRun: boolean,
  options: GrantOptions = {},
  batches: BudgetBatches = new BudgetBatches(store),
): Promise<GrantResult> {
  const run = new Run(options);
  const written: BudgetRef[] = [];
  const alreadyHeld: BudgetRef[] = [];
  const finished = new Set(plan.finishedOnServer);
  for (const r of plan.reservations) {
    const outcome = dryRun
      ? await checkOne(store, plan, r, run, finished)
      : await batches.reserve(plan, r, run, finished);
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
  const batches = new BudgetBatches(store);
  return Object.assign(
    (plan: GrantPlan, { dryRun }: { dryRun: boolean }) =>
      reserveGrants(store, plan, dryRun, options, batches),
    { dryRunOnCopies: (plan: GrantPlan) => dryRunOnCopies(store, plan) },
  );
}

/** The admission decision for a grant result. */
export function grantDecision(result: GrantResult, warnings: string[] = []): Decision {
  if (result.granted) return allow(warnings);
  const d = result.denial;
  return deny(d.code, d.message, {
    warnings,
    retryAfterSeconds: d.retryAfterSeconds,
    ...(d.ref ? { causes: [{ reason: BUDGET_CAUSE, field: refKey(d.ref), message: d.message }] } : {}),
  });
}
