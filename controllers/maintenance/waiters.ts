// Servers whose next maintenance was refused for lack of budget room. The webhook's retry hint is the
// fallback timer; when a budget frees room (a grant released, or fewer servers unavailable) the
// controller wakes as many waiters as slots were freed, in queue order across the fleet (priority,
// class, age), instead of all of them: a thousand waiters retrying at every release would be a
// thundering herd against the webhook and the budget's compare-and-swap.
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { compareQueueKeys, queueKey, type QueueKey } from './queue.js';

export class BudgetWaiters {
  /** server -> the queue key of the maintenance waiting on it (computed once: take() runs per release). */
  readonly #waiting = new Map<string, QueueKey>();

  /** Records that `server` waits for room for maintenance `m`. */
  add(server: string, m: ServerMaintenance): void {
    this.#waiting.set(server, queueKey(m));
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
    const taken: string[] = [];
    // A release frees one or two slots: a scan per slot is O(waiters), where a sort was O(w log w).
    if (n <= 4) {
      for (let i = 0; i < n && this.#waiting.size > 0; i++) {
        let first: [string, QueueKey] | undefined;
        for (const e of this.#waiting) if (!first || compareQueueKeys(e[1], first[1]) < 0) first = e;
        this.#waiting.delete(first![0]);
        taken.push(first![0]);
      }
      return taken;
    }
    const order = [...this.#waiting].sort(([, a], [, b]) => compareQueueKeys(a, b)).slice(0, n);
    for (const [server] of order) {
      this.#waiting.delete(server);
      taken.push(server);
    }
    return taken;
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
