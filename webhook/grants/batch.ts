// Grants written in batches, one compare-and-swap per budget for every reservation waiting on it. A
// reservation is one maintenance's entry, or a gang's entries: judged together, written together.
import { Batcher } from '../../lib/batcher.js';
import { refKey, type AnyBudget } from '../../contract/budgets.js';
import { compareAndSwap } from '../../contract/ledger/cas.js';
import type { BudgetStore } from '../../contract/ledger/port.js';
import {
  conflictDenial,
  judgeRoom,
  ledgerEntry,
  stepFor,
  storeDenial,
  type BudgetStep,
  type MemberReservation,
  type Run,
  type StepOutcome,
} from './plan.js';

/** One reservation waiting for its budget's next write: a maintenance's entry, or its gang's. */
interface Reservation {
  entries: readonly MemberReservation[];
  run: Run;
}

type LedgerGrants = NonNullable<NonNullable<AnyBudget['status']>['grants']>;

/**
 * Judges a reservation's entries one after the other on `grants` (the ledger as the ones before left
 * it), appending or renewing each; the first refusal undoes the reservation's own changes and is its
 * step. Each member is judged by the one room rule (judgeRoom) on a ledger that already counts the
 * members before it, so a gang's room is judged for all of it, per domain.
 */
function judgeReservation(
  next: AnyBudget,
  grants: LedgerGrants,
  entries: readonly MemberReservation[],
  now: Date,
): StepOutcome {
  // A lone entry changes nothing before its refusal: only a gang needs the ledger as it was.
  const before = entries.length > 1 ? grants.slice() : undefined;
  let wrote = false;
  for (const e of entries) {
    const step = stepFor(judgeRoom(next, e.plan, e.r, e.finished), e.r);
    if (step.kind === 'denied') {
      if (before) grants.splice(0, grants.length, ...before);
      return step;
    }
    const uid = e.plan.maintenance.uid;
    // A held grant is renewed by compare-and-swap rather than trusted as read: the budget controller
    // may be expiring it by TTL right now, and its removal is a CAS too, so exactly one of the two
    // writes wins and the loser re-reads (an expired entry is then granted afresh).
    if (step.kind === 'held') {
      const i = grants.findIndex((g) => g.maintenanceUID === uid);
      grants[i] = { ...grants[i]!, grantedAt: now.toISOString() };
    }
    if (step.kind === 'written') {
      grants.push(ledgerEntry(e.plan, e.r, now));
      wrote = true;
    }
  }
  return { kind: wrote ? 'written' : 'held' };
}

/** A dry run's verdict on one budget as read: what a write of these entries would do, writing nothing. */
export function judgeEntries(
  budget: AnyBudget,
  entries: readonly MemberReservation[],
  now: Date,
): StepOutcome {
  const next = structuredClone(budget);
  const grants = [...(next.status?.grants ?? [])];
  next.status = { ...next.status, grants };
  return judgeReservation(next, grants, entries, now);
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
    const step = judgeReservation(next, grants, p.entries, now);
    if (step.kind === 'denied' && !fresh) return undefined;
    steps.push(step);
  }
  return steps.some((x) => x.kind !== 'denied') ? { steps, next } : { steps };
}

/**
 * Takes room in one budget for a batch of reservations, by compare-and-swap: read (the cached copy
 * first), judge every reservation, write the ledger once; on a lost write read again and judge again.
 * The write carries every entry or none, so the ledger stays a serial history: each entry appended
 * after checking all the entries before it.
 */
async function writeBatch(store: BudgetStore, batch: readonly Reservation[]): Promise<StepOutcome[]> {
  const first = batch[0]!; // the oldest: its deadline bounds the batch; options are the grantor's
  const { ref } = first.entries[0]!.r;
  const o = first.run.o;
  const each = (f: (p: Reservation) => StepOutcome) => batch.map(f);
  let judged: { steps: StepOutcome[]; next?: AnyBudget } | undefined;
  return compareAndSwap<StepOutcome[]>({
    store,
    ref,
    attempts: o.maxAttempts,
    start: store.peek?.(ref),
    beforeAttempt: (attempt) => {
      if (attempt > 0 && first.run.expired()) return false;
      for (const p of batch) p.run.attemptsCount.attempts++;
    },
    decide: (budget, fresh) => {
      // Deleted since the cache saw it: it selects nothing any more.
      if (!budget) return { kind: 'done', result: each(() => ({ kind: 'gone' })) };
      judged = judgeBatch(budget, batch, o.clock(), fresh);
      // Refused on a copy that may be stale: read it and decide again.
      if (!judged) return { kind: 'reread' };
      const { steps, next } = judged;
      return next ? { kind: 'write', next, then: () => steps } : { kind: 'done', result: steps };
    },
    lost: async (attempt) => {
      // The write was the batch's: counted once, on the oldest call (metrics count refused writes).
      first.run.attemptsCount.conflicts++;
      o.onConflict?.(ref);
      await first.run.backoff(ref, attempt);
    },
    failed: (e, during) =>
      during === 'read'
        ? each((p) => ({ kind: 'denied', denial: storeDenial(p.entries[0]!.r, e) }))
        : judged!.steps.map((x, i) =>
            x.kind === 'denied' ? x : { kind: 'denied', denial: storeDenial(batch[i]!.entries[0]!.r, e) },
          ),
    exhausted: () =>
      each((p) => ({ kind: 'denied', denial: conflictDenial(p.entries[0]!.r, o.maxAttempts) })),
  });
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

  /** Reserves a plan's entries in one budget, all or none, in the budget's next write. */
  reserve(step: BudgetStep, run: Run): Promise<StepOutcome> {
    const key = refKey(step.ref);
    let batcher = this.#budgets.get(key);
    if (!batcher) {
      batcher = new Batcher((batch) =>
        writeBatch(this.#store, batch).catch((e: unknown) =>
          batch.map((p): StepOutcome => ({ kind: 'denied', denial: storeDenial(p.entries[0]!.r, e) })),
        ),
      );
      this.#budgets.set(key, batcher);
    }
    return batcher.submit({ entries: step.entries, run });
  }
}
