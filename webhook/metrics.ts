// Prometheus metrics of the webhook, registered in an injected registry.
//
// The per-review series (decisions, duration, grants) are counted in plain numbers on the request path
// and handed to the registry when it is read: prom-client builds and hashes a label string on every
// inc/observe (~0.8 µs a review, and its garbage), where a route's own counters need an increment.
import {
  Counter,
  type Metric,
  type MetricObjectWithValues,
  type MetricValue,
  type Registry,
} from 'prom-client';
import type { BudgetRef } from '../contract/budgets.js';
import type { GrantResult } from './grants/plan.js';

/** The API server's admission webhook latency buckets (apiserver_admission_webhook_admission_duration_seconds). */
export const APISERVER_BUCKETS = [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 25];

export type DecisionResult = 'allowed' | 'denied' | 'error';

/** One route's series: what it decided, how long it took, and the grants it ran. */
export interface RouteMetrics {
  decided(result: DecisionResult, code: string, seconds: number): void;
  granted(granted: boolean, dryRun: boolean): void;
  /** A denial's log line left out by sampling. */
  unlogged(code: string): void;
}

export interface WebhookMetrics {
  decisions: Counter<'type' | 'rule' | 'result' | 'code'>;
  unloggedLines: Counter<'type' | 'rule' | 'code'>;
  duration: RouteHistogram;
  grantConflicts: Counter;
  grantRetries: Counter;
  grants: Counter<'result' | 'dry_run'>;
  /** Ledger entries written (a new grant, not a renewal) and undone by a later refusal, by budget. */
  ledgerEntries: Counter<'kind' | 'namespace' | 'budget' | 'change'>;
  tlsReloads: Counter<'result'>;
  unauthenticated: Counter<'reason'>;
  malformed: Counter<'reason'>;
  /** The recorder of one route (type, rule): create it once, when the route is. */
  route(type: string, rule: string): RouteMetrics;
}

/** One route's decisions and grants since the registry was last read, and its duration histogram. */
class RouteTally implements RouteMetrics {
  readonly byCode = new Map<string, Record<DecisionResult, number>>();
  /** Per APISERVER_BUCKETS bound, then +Inf. */
  readonly buckets = new Array<number>(APISERVER_BUCKETS.length + 1).fill(0);
  sum = 0;
  /** [granted][dryRun] as 0/1. */
  readonly grants = [0, 0, 0, 0];
  readonly unloggedByCode = new Map<string, number>();

  constructor(
    readonly type: string,
    readonly rule: string,
  ) {}

  decided(result: DecisionResult, code: string, seconds: number): void {
    let counts = this.byCode.get(code);
    if (!counts) this.byCode.set(code, (counts = { allowed: 0, denied: 0, error: 0 }));
    counts[result]++;
    let i = 0;
    while (i < APISERVER_BUCKETS.length && seconds > APISERVER_BUCKETS[i]!) i++;
    this.buckets[i]!++;
    this.sum += seconds;
  }

  granted(granted: boolean, dryRun: boolean): void {
    this.grants[(granted ? 2 : 0) + (dryRun ? 1 : 0)]!++;
  }

  unlogged(code: string): void {
    this.unloggedByCode.set(code, (this.unloggedByCode.get(code) ?? 0) + 1);
  }
}

/**
 * The duration histogram, read from the routes' buckets (prom-client's Histogram has no call that adds
 * counts). Same series and text as a prom-client Histogram with labels type and rule; every route's
 * series exists from the start.
 */
export class RouteHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly routes: readonly RouteTally[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  get(): Omit<MetricObjectWithValues<MetricValue<string>>, 'collect'> {
    const values: MetricValue<string>[] = [];
    for (const r of this.routes) {
      let count = 0;
      r.buckets.forEach((n, i) => {
        count += n;
        const le = i < APISERVER_BUCKETS.length ? APISERVER_BUCKETS[i]! : '+Inf';
        values.push(this.#value('_bucket', { le, type: r.type, rule: r.rule }, count));
      });
      values.push(this.#value('_sum', { type: r.type, rule: r.rule }, r.sum));
      values.push(this.#value('_count', { type: r.type, rule: r.rule }, count));
    }
    return { name: this.name, help: this.help, type: 'histogram' as never, values, aggregator: 'sum' };
  }

  #value(suffix: string, labels: Record<string, string | number>, value: number): MetricValue<string> {
    return { labels, value, metricName: `${this.name}${suffix}` } as MetricValue<string>;
  }

  /** Registry.resetMetrics(): back to zero. */
  reset(): void {
    for (const r of this.routes) {
      r.buckets.fill(0);
      r.sum = 0;
    }
  }
}

export function createMetrics(registry: Registry): WebhookMetrics {
  const registers = [registry];
  const routes: RouteTally[] = [];
  const metrics: WebhookMetrics = {
    decisions: new Counter({
      name: 'metal_webhook_decisions_total',
      help: 'Admission decisions by review type, rule, result (allowed|denied|error) and code.',
      labelNames: ['type', 'rule', 'result', 'code'],
      registers,
      collect() {
        for (const r of routes)
          for (const [code, counts] of r.byCode)
            for (const result of ['allowed', 'denied', 'error'] as const) {
              if (counts[result] === 0) continue;
              this.inc({ type: r.type, rule: r.rule, result, code }, counts[result]);
              counts[result] = 0;
            }
      },
    }),
    unloggedLines: new Counter({
      name: 'metal_webhook_review_lines_unlogged_total',
      help:
        'Denial log lines left out by sampling (--log-sampling), by review type, rule and code. Every ' +
        'denial is still counted in metal_webhook_decisions_total.',
      labelNames: ['type', 'rule', 'code'],
      registers,
      collect() {
        for (const r of routes)
          for (const [code, n] of r.unloggedByCode) {
            if (n === 0) continue;
            this.inc({ type: r.type, rule: r.rule, code }, n);
            r.unloggedByCode.set(code, 0);
          }
      },
    }),
    duration: new RouteHistogram(
      'metal_webhook_admission_duration_seconds',
      'Time to answer one AdmissionReview, by review type and rule.',
      routes,
      registry,
    ),
    grantConflicts: new Counter({
      name: 'metal_webhook_grant_conflicts_total',
      help: 'Budget status writes refused for a stale resourceVersion.',
      registers,
    }),
    ledgerEntries: new Counter({
      name: 'metal_webhook_grant_entries_total',
      help:
        'Budget ledger entries by budget and change: written (a new grant) or undone (released by the ' +
        'same review when a later budget refused).',
      labelNames: ['kind', 'namespace', 'budget', 'change'],
      registers,
    }),
    grantRetries: new Counter({
      name: 'metal_webhook_grant_retries_total',
      help: 'Backoffs taken before retrying a budget grant.',
      registers,
    }),
    grants: new Counter({
      name: 'metal_webhook_grants_total',
      help: 'Grant attempts by result (granted|denied) and dry run.',
      labelNames: ['result', 'dry_run'],
      registers,
      collect() {
        for (const r of routes)
          r.grants.forEach((n, i) => {
            if (n === 0) return;
            this.inc({ result: i >= 2 ? 'granted' : 'denied', dry_run: String(i % 2 === 1) }, n);
            r.grants[i] = 0;
          });
      },
    }),
    tlsReloads: new Counter({
      name: 'metal_webhook_tls_reloads_total',
      help: 'Serving certificate reload checks that found a change, by result (reloaded|invalid|error).',
      labelNames: ['result'],
      registers,
    }),
    unauthenticated: new Counter({
      name: 'metal_webhook_unauthenticated_requests_total',
      help:
        'Requests refused (401) because their connection presented no client certificate the client CA ' +
        'signed, by reason (NoClientCertificate|UntrustedClientCertificate). Only with --client-ca-file.',
      labelNames: ['reason'],
      registers,
    }),
    malformed: new Counter({
      name: 'metal_webhook_malformed_requests_total',
      help: 'Requests answered with a 4xx because they were not an AdmissionReview v1.',
      labelNames: ['reason'],
      registers,
    }),
    route(type, rule) {
      const tally = new RouteTally(type, rule);
      routes.push(tally);
      return tally;
    },
  };
  return metrics;
}

/** A non-dry-run grant's ledger changes, by budget. */
export function countEntries(metrics: Pick<WebhookMetrics, 'ledgerEntries'>, grant: GrantResult): void {
  const inc = (refs: readonly BudgetRef[], change: 'written' | 'undone') => {
    for (const r of refs)
      metrics.ledgerEntries.inc({ kind: r.kind, namespace: r.namespace ?? '', budget: r.name, change });
  };
  if (grant.granted) inc(grant.written, 'written');
  else inc(grant.released, 'undone');
}
