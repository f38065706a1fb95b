// The grant ledger's port: how every writer of a budget's status.grants reaches it. The one
// implementation over the API server is lib/kube/budget-store.ts; the in-memory one the tests run
// against is contract/testing/memory-budget-store.ts. Every write is a compare-and-swap on the budget's
// resourceVersion (cas.ts), so any number of writers in any number of processes stay safe.
import { defineError, isMetalError } from '../../lib/errors.js';
import type { AnyBudget, BudgetRef } from '../budgets.js';
import { Codes } from '../codes.js';

/**
 * The budgets as the API server holds them. lib/kube/budget-store.ts implements it with GET and PUT
 * on `.../status`; `replaceStatus` must send metadata.resourceVersion as a precondition and throw on 409.
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

/** Thrown by a BudgetStore when the resourceVersion precondition fails (HTTP 409 from the API server). */
export const budgetConflict = defineError(
  'METAL_ERR_BUDGET_CONFLICT',
  (name: string) => `budget ${name} was modified concurrently`,
);

/** Whether an error from the store means "resourceVersion was stale" (409 Conflict). */
export function isConflictError(e: unknown): boolean {
  if (isMetalError(e, Codes.BUDGET_CONFLICT)) return true;
  if (typeof e !== 'object' || e === null) return false;
  const x = e as { statusCode?: unknown; code?: unknown; status?: unknown };
  return x.statusCode === 409 || x.code === 409 || x.status === 409;
}
