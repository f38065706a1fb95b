// How each maintenance waits to be admitted into InMaintenance, between reconciles: the backoff a
// denial's hint sets (a holder's exit ends every wait on its server early), the budget waiters a release wakes
// (BudgetWaiters), the short retries of a woken waiter, and the hold-backs by a cached full budget.
// State only, no I/O: the reconciler tells it what happened and asks it when to look again.
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { BudgetWaiters, keepsWokenSlot, retryAfterDenial } from './waiters.js';

/** Attempts held back by the cache in a row before the webhook is asked regardless. */
export const HELD_BACK_MAX = 3;

export class AdmissionWaits {
  /** uid -> epoch ms before which the InMaintenance transition is not tried again (the webhook's hint). */
  readonly #backoff = new Map<string, number>();
  /**
   * uid -> how a maintenance waits for budget room: the release that woke it (refusals since, until it
   * is admitted or gives the slot up), and budget denials in a row (the safety timer doubles with each).
   */
  readonly #waitStates = new Map<
    string,
    { woken?: { refusals: number; budget: string }; budgetDenials: number }
  >();
  /** uid -> attempts held back in a row by a cached full budget. */
  readonly #heldBack = new Map<string, number>();
  /** Servers whose next maintenance waits for budget room, woken in queue order by releases. */
  readonly waiters = new BudgetWaiters();

  /** What decide reads: uid -> epoch ms before which it does not try the transition again. */
  get backoff(): ReadonlyMap<string, number> {
    return this.#backoff;
  }

  backOff(uid: string, until: number): void {
    this.#backoff.set(uid, until);
  }

  /** Policy changed (timeouts, windows, approval rules): every waiting maintenance looks again now. */
  clearBackoff(): void {
    this.#backoff.clear();
  }

  /**
   * A holder left their server: every maintenance waiting on it looks again now. Those the webhook told
   * ServerBusy, and those the controller itself held back as busy (decide's ServerBusy, no attempt)
   * while an older backoff ran, a budget denial's above all: the holder's grants were the room they
   * waited for, in their own domain. A backoff left running here stranded them for its full length
   * (issue 31: minutes, with free slots).
   */
  holderGone(maintenances: readonly ServerMaintenance[]): void {
    for (const m of maintenances) {
      const uid = m.metadata.uid ?? '';
      this.#backoff.delete(uid);
    }
  }

  /** Admitted, or gone: nothing of its waiting is kept. */
  forget(uid: string): void {
    this.#backoff.delete(uid);
    this.#waitStates.delete(uid);
    this.#heldBack.delete(uid);
  }

  /** A release of `budget` woke it: it asks again now, on the woken waiter's short schedule. */
  woken(uid: string, budget: string): void {
    this.#backoff.delete(uid);
    const { budgetDenials = 0 } = this.#waitStates.get(uid) ?? {};
    this.#waitStates.set(uid, { woken: { refusals: 0, budget }, budgetDenials });
  }

  /** The budget (refKey) whose release woke it, while it holds on to that slot. */
  wokenBy(uid: string): string | undefined {
    return this.#waitStates.get(uid)?.woken?.budget;
  }

  /** Counts a hold-back by a cached full budget; false past HELD_BACK_MAX in a row (ask the webhook). */
  holdBack(uid: string): boolean {
    const n = (this.#heldBack.get(uid) ?? 0) + 1;
    if (n > HELD_BACK_MAX) return false;
    this.#heldBack.set(uid, n);
    return true;
  }

  /** Hold-backs in a row so far. */
  heldBack(uid: string): number | undefined {
    return this.#heldBack.get(uid);
  }

  /** The attempt went to the webhook: the hold-back count starts again. */
  asked(uid: string): void {
    this.#heldBack.delete(uid);
  }

  /** How long a denied maintenance waits before it asks again on its own (see retryAfterDenial). */
  waitAfterDenial(
    uid: string,
    denial: { reason: string; retryAfterMs: number | undefined; budget?: string },
  ): number {
    const { woken, budgetDenials = 0 } = this.#waitStates.get(uid) ?? {};
    const keeps = woken !== undefined && keepsWokenSlot(woken.budget, denial);
    const next = retryAfterDenial(denial, { woken: keeps ? woken.refusals : undefined, budgetDenials });
    const stillWoken = keeps && next.woken !== undefined ? { ...woken, refusals: next.woken } : undefined;
    if (!stillWoken && next.budgetDenials === 0) this.#waitStates.delete(uid);
    else
      this.#waitStates.set(uid, {
        ...(stillWoken ? { woken: stillWoken } : {}),
        budgetDenials: next.budgetDenials,
      });
    return next.ms;
  }
}
