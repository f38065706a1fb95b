// Atomic budget grants, the way the API server grants pod evictions against a PodDisruptionBudget:
// read the budget, check room, write the grant into status.grants with a resourceVersion precondition,
// and on conflict read again and re-decide. Budgets are reserved in the plan's fixed order; when a later
// one refuses, the grants this call wrote to earlier ones are released. The only I/O is the BudgetStore
// port, so the algorithm runs the same against the API server and against the in-memory store in tests.
import { allow, BUDGET_CAUSE, deny, type Decision } from '../../contract/denial.js';
import { refKey, type AnyBudget, type BudgetRef } from '../../contract/budgets.js';
import type { BudgetStore } from '../../contract/ledger/port.js';
import { BudgetBatches } from './batch.js';
import { releaseGrants } from './release.js';
import {
  judgeRoom,
  Run,
  stepFor,
  storeDenial,
  type BudgetReservation,
  type GrantFunction,
  type GrantOptions,
  type GrantPlan,
  type GrantResult,
  type StepOutcome,
} from './plan.js';

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
    const step = stepFor(judgeRoom(copy, plan, r, finished), r);
    if (step.kind !== 'denied') return step;
  }
  run.attemptsCount.attempts++;
  const read = await readBudget(store, r);
  if ('denied' in read) return read.denied;
  return read.budget ? stepFor(judgeRoom(read.budget, plan, r, finished), r) : { kind: 'gone' };
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
    const room = judgeRoom(budget, plan, r, finished);
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
