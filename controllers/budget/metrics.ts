// Metrics of the budget controller, on the binary's registry (served at /metrics).
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ComputedStatus } from './decide.js';

type Labels = 'kind' | 'namespace' | 'budget';

export class BudgetMetrics {
  readonly expected: Gauge<Labels>;
  readonly unavailable: Gauge<Labels>;
  readonly allowed: Gauge<Labels>;
  readonly granted: Gauge<Labels>;
  readonly expired: Counter<'kind' | 'namespace' | 'budget' | 'reason'>;
  readonly ttlRemaining: Gauge<Labels>;
  /** When each budget's next waiting grant reaches its TTL (epoch ms): the gauge counts down to it. */
  readonly #ttlAt = new Map<string, { labels: Record<Labels, string>; at: number }>();

  constructor(registry: Registry) {
    const registers = [registry];
    const labelNames = ['kind', 'namespace', 'budget'] as const;
    this.expected = new Gauge({
      name: 'metal_budget_expected',
      help: 'Servers (or claimed servers) a budget selects.',
      labelNames,
      registers,
    });
    this.unavailable = new Gauge({
      name: 'metal_budget_unavailable',
      help: 'Selected servers unavailable for any reason, granted disruptions included.',
      labelNames,
      registers,
    });
    this.allowed = new Gauge({
      name: 'metal_budget_disruptions_allowed',
      help: 'Disruptions a budget may still grant.',
      labelNames,
      registers,
    });
    this.granted = new Gauge({
      name: 'metal_budget_grants',
      help: 'Entries in a budget ledger.',
      labelNames,
      registers,
    });
    this.ttlRemaining = new Gauge({
      name: 'metal_budget_grant_ttl_remaining_seconds',
      help: 'Seconds until the first grant of a budget still short of InMaintenance reaches the grant TTL and is dropped (absent: none waiting).',
      labelNames,
      registers,
      // Read at each scrape, so it counts down between reconciles (which come only at the expiry).
      collect: () => {
        this.ttlRemaining.reset();
        const now = Date.now();
        for (const { labels, at } of this.#ttlAt.values())
          this.ttlRemaining.set(labels, Math.max(0, (at - now) / 1000));
      },
    });
    this.expired = new Counter({
      name: 'metal_budget_grants_expired_total',
      help:
        'Ledger entries dropped by the budget controller, by budget and reason (ttl: never reached ' +
        'InMaintenance, and nobody released it; ended: its maintenance ended without releasing it).',
      labelNames: ['kind', 'namespace', 'budget', 'reason'],
      registers,
    });
  }

  observe(
    kind: string,
    namespace: string,
    budget: string,
    status: ComputedStatus,
    grants: number,
    nextTtlAt?: number,
  ): void {
    const l = { kind, namespace, budget };
    const key = `${kind}/${namespace}/${budget}`;
    if (nextTtlAt === undefined) this.#ttlAt.delete(key);
    else this.#ttlAt.set(key, { labels: l, at: nextTtlAt });
    this.expected.set(l, status.expected);
    this.unavailable.set(l, status.unavailable);
    this.allowed.set(l, status.disruptionsAllowed);
    this.granted.set(l, grants);
  }

  forget(kind: string, namespace: string, budget: string): void {
    const l = { kind, namespace, budget };
    for (const g of [this.expected, this.unavailable, this.allowed, this.granted]) g.remove(l);
    this.#ttlAt.delete(`${kind}/${namespace}/${budget}`);
  }
}
