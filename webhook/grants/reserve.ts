// Atomic budget grants, the way the API server grants pod evictions against a PodDisruptionBudget:
// read the budget, check room, write the grant into status.grants with a resourceVersion precondition,
// and on conflict read again and re-decide. Budgets are reserved in the plan's fixed order; when a later
// one refuses, the grants this call wrote to earlier ones are released. The only I/O is the BudgetStore
// port, so the algorithm runs the same against the API server and against the in-memory store in tests.
import { allow, BUDGET_CAUSE, deny, type Decision } from '../../contract/denial.js';
import { refKey, type AnyBudget, type BudgetRef } from '../../contract/budgets.js';
import type { BudgetStore } from '../../contract/ledger/port.js';
import { BudgetBatches, judgeEntries } from './batch.js';
import { releaseGrants } from './release.js';
import {
  budgetSteps,
  judgeRoom,
  planMembers,
  Run,
  stepFor,
  storeDenial,
  type BudgetReservation,
  type BudgetStep,
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

/** What writing a step's entries into this budget would do (a gang's judged together). */
function judgeStep(budget: AnyBudget, step: BudgetStep, now: Date): StepOutcome {
  const [only] = step.entries;
  if (step.entries.length > 1) return judgeEntries(budget, step.entries, now);
  return stepFor(judgeRoom(budget, only!.plan, only!.r, only!.finished), only!.r);
}

/** A dry run's look at one budget: the cached copy when it admits, else a fresh read decides. */
async function checkOne(store: BudgetStore, step: BudgetStep, run: Run): Promise<StepOutcome> {
  const copy = store.peek?.(step.ref);
  const now = run.o.clock();
  if (copy) {
    run.attemptsCount.attempts++;
    const outcome = judgeStep(copy, step, now);
    if (outcome.kind !== 'denied') return outcome;
  }
  run.attemptsCount.attempts++;
  const read = await readBudget(store, step.entries[0]!.r);
  if ('denied' in read) return read.denied;
  return read.budget ? judgeStep(read.budget, step, now) : { kind: 'gone' };
}

/**
 * Takes room in every budget of the plan, or in none: grants written or renewed by this call are
 * released when a later budget refuses (a release that fails is left to the budget controller's TTL).
 * A plan with gang members takes each budget's room for all of them in one write, or none, and a
 * later refusal releases every member's grants this call wrote or renewed: a gang holds all of its
 * slots or none of them.
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
  for (const step of budgetSteps(plan)) {
    const outcome = dryRun ? await checkOne(store, step, run) : await batches.reserve(step, run);
    if (outcome.kind === 'denied') {
      // Renewed grants go too: this maintenance is not InMaintenance (else no eviction review would
      // ask), nor is any member the plan carries, so a grant kept for one would only hold a slot
      // others could use.
      const uids = planMembers(plan).map((p) => p.maintenance.uid);
      const undo = dryRun
        ? { released: [], failed: [] }
        : await releaseGrants(store, [...alreadyHeld, ...written], uids, options);
      return {
        granted: false,
        dryRun,
        denial: outcome.denial,
        released: undo.released,
        releaseFailed: undo.failed,
        ...run.attemptsCount,
      };
    }
    if (outcome.kind === 'written') written.push(step.ref);
    if (outcome.kind === 'held') alreadyHeld.push(step.ref);
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
  const steps = budgetSteps(plan);
  const now = new Date();
  const written: BudgetRef[] = [];
  const alreadyHeld: BudgetRef[] = [];
  for (const step of steps) {
    const budget = store.peek(step.ref);
    if (!budget) return undefined;
    const outcome = judgeStep(budget, step, now);
    if (outcome.kind === 'denied') return undefined;
    (outcome.kind === 'held' ? alreadyHeld : written).push(step.ref);
  }
  const looks = { attempts: steps.length, conflicts: 0, retries: 0 };
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
