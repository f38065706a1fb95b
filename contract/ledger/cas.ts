// The one compare-and-swap loop every writer of a grant ledger goes through: read the budget (or start
// from a copy), decide what to write, write it with the resourceVersion as precondition, and on a
// lost write read again and decide again. Writers differ only in what they decide and in how they wait
// after a loss: the webhook's grants and releases back off with jitter inside an admission deadline,
// the maintenance controller's batched releases read again at once, the budget controller's expiry
// waits a jittered moment. The only I/O is the port (port.ts).
import type { AnyBudget, BudgetRef } from '../budgets.js';
import { isConflictError, type BudgetStore } from './port.js';

/** What to do with the budget as read: nothing more, write `next`, or read again and decide again. */
export type CasStep<R> =
  | { kind: 'done'; result: R }
  | { kind: 'write'; next: AnyBudget; then: (written: AnyBudget) => R }
  | { kind: 'reread' };

export interface CasWrite<R> {
  store: Pick<BudgetStore, 'get' | 'replaceStatus'>;
  ref: BudgetRef;
  /** Attempts (reads, each followed by at most one write) before the loop gives up. */
  attempts: number;
  /** The copy the first attempt decides on (a cache's, possibly stale); undefined: a fresh read. */
  start?: AnyBudget;
  /** Decides on the budget as read (undefined: it is gone); `fresh` is false for the start copy. */
  decide(current: AnyBudget | undefined, fresh: boolean): CasStep<R>;
  /** Before each attempt; false ends the loop as exhausted (a deadline passed). */
  beforeAttempt?(attempt: number): boolean | void;
  /** After a lost write, before the next attempt: metrics, and the wait if any. */
  lost?(attempt: number): void | Promise<void>;
  /** A read or write failed for another reason than a conflict: the result, or throw. */
  failed(e: unknown, during: 'read' | 'write'): R;
  /** Every attempt lost its write (or beforeAttempt stopped the loop); `conflict` is the last loss. */
  exhausted(conflict: unknown): R;
}

export async function compareAndSwap<R>(w: CasWrite<R>): Promise<R> {
  let copy = w.start;
  let conflict: unknown;
  for (let attempt = 0; attempt < w.attempts; attempt++) {
    if (w.beforeAttempt?.(attempt) === false) break;
    const fresh = copy === undefined;
    let current: AnyBudget | undefined;
    try {
      current = copy ?? (await w.store.get(w.ref));
    } catch (e) {
      return w.failed(e, 'read');
    }
    copy = undefined;
    const step = w.decide(current, fresh);
    if (step.kind === 'done') return step.result;
    if (step.kind === 'reread') continue;
    try {
      return step.then(await w.store.replaceStatus(w.ref, step.next));
    } catch (e) {
      if (!isConflictError(e)) return w.failed(e, 'write');
      conflict = e;
      await w.lost?.(attempt);
    }
  }
  return w.exhausted(conflict);
}
