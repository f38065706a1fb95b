// Servers whose next maintenance was refused for lack of budget room. The webhook's retry hint is the
// fallback timer; when a budget frees room (a grant released, or fewer servers unavailable) the
// controller wakes as many waiters as slots were freed, in queue order across the fleet (priority,
// class, age), instead of all of them: a thousand waiters retrying at every release would be a
// thundering herd against the webhook and the budget's compare-and-swap.
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { compareQueue } from './queue.js';

export class BudgetWaiters {
  readonly #waiting = new Map<string, ServerMaintenance>();

  /** Records that `server` waits for room for maintenance `m`. */
  add(server: string, m: ServerMaintenance): void {
    this.#waiting.set(server, m);
  }

  remove(server: string): void {
    this.#waiting.delete(server);
  }

  has(server: string): boolean {
    return this.#waiting.has(server);
  }

  get size(): number {
    return this.#waiting.size;
  }

  /** The first `n` waiting servers in queue order of their maintenance; they leave the set. */
  take(n: number): string[] {
    if (n <= 0 || this.#waiting.size === 0) return [];
    const order = [...this.#waiting.entries()].sort(([, a], [, b]) => compareQueue(a, b)).slice(0, n);
    for (const [server] of order) this.#waiting.delete(server);
    return order.map(([server]) => server);
  }
}

type LedgerLike = { status?: { grants?: { maintenanceUID: string }[]; disruptionsAllowed?: number } };

/** How many slots a budget update freed: grants that left the ledger plus any rise in disruptionsAllowed. */
export function slotsFreed(before: LedgerLike, after: LedgerLike): number {
  const now = new Set((after.status?.grants ?? []).map((g) => g.maintenanceUID));
  const released = (before.status?.grants ?? []).filter((g) => !now.has(g.maintenanceUID)).length;
  const rise = Math.max(
    0,
    (after.status?.disruptionsAllowed ?? 0) - (before.status?.disruptionsAllowed ?? 0),
  );
  return released + rise;
}
