// Servers whose next maintenance was refused for lack of budget room. The webhook's retry hint is the
// fallback timer; when a budget frees room (a grant released, or fewer servers unavailable) the
// controller wakes as many waiters as slots were freed, in queue order across the fleet (priority,
// class, age), instead of all of them: a thousand waiters retrying at every release would be a
// thundering herd against the webhook and the budget's compare-and-swap.
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { LabelSelector } from '../../api/schema/common.js';
import { matchesSelector } from '../../webhook/selectors.js';
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

type LedgerLike = {
  status?: {
    grants?: { maintenanceUID: string }[];
    disruptionsAllowed?: number;
    domains?: { granted?: number }[];
  };
};

/**
 * The room a budget has now, as far as one object tells: `disruptionsAllowed` as the budget controller
 * last computed it, less the grants written since and plus those released since (the ledger's length
 * against the `granted` counts that computation saw). One release then frees exactly one slot, whether
 * the ledger write or the budget controller's status write reaches us first: counting both the release
 * and the rise of disruptionsAllowed woke two waiters per freed slot, and one of them was always refused.
 */
export function budgetRoom(b: LedgerLike): number | undefined {
  const domains = b.status?.domains;
  if (!domains) return undefined;
  const seen = domains.reduce((n, d) => n + (d.granted ?? 0), 0);
  return (b.status?.disruptionsAllowed ?? 0) - ((b.status?.grants?.length ?? 0) - seen);
}

/**
 * How many slots a budget update freed: the rise of its room (see budgetRoom), from at least 0; for a
 * budget the budget controller has not computed yet, the grants that left the ledger.
 */
export function slotsFreed(before: LedgerLike, after: LedgerLike): number {
  const was = budgetRoom(before);
  const is = budgetRoom(after);
  if (was !== undefined && is !== undefined) return Math.max(0, is - Math.max(0, was));
  const now = new Set((after.status?.grants ?? []).map((g) => g.maintenanceUID));
  return (before.status?.grants ?? []).filter((g) => !now.has(g.maintenanceUID)).length;
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

interface FleetBudgetLike {
  metadata: { name?: string };
  spec: { serverSelector?: LabelSelector; topologyKey?: string; paused?: boolean };
  status?: {
    grants?: { maintenanceUID: string; domain?: string }[];
    domains?: { name: string; allowed?: number; granted?: number }[];
  };
}

/**
 * The first fleet budget selecting the server whose cached ledger has no room in the server's domain
 * (see budgetRoom; paused counts as none), or undefined. A maintenance asks the webhook only when none
 * is full: a refusal the cache already predicts is a write, two admission reviews and a budget read for
 * nothing. The cache may lag either way; the webhook decides, and the release that makes room wakes
 * the waiters. Budgets the budget controller has not counted yet, and claim budgets (this controller
 * does not cache claims), never block here.
 */
export function fullBudget(
  budgets: readonly FleetBudgetLike[],
  labels: Record<string, string> | undefined,
): string | undefined {
  for (const b of budgets) {
    if (!matchesSelector(b.spec.serverSelector, labels)) continue;
    if (b.spec.paused) return b.metadata.name ?? '';
    const domain = b.spec.topologyKey ? (labels?.[b.spec.topologyKey] ?? '') : '';
    const d = b.status?.domains?.find((x) => x.name === domain);
    if (!d) continue;
    const held = (b.status?.grants ?? []).filter((g) => (g.domain ?? '') === domain).length;
    if ((d.allowed ?? 0) - (held - (d.granted ?? 0)) <= 0) return b.metadata.name ?? '';
  }
  return undefined;
}
