// Prometheus metrics of the webhook, registered in an injected registry.
import { Counter, Histogram, type Registry } from 'prom-client';

/** The API server's admission webhook latency buckets (apiserver_admission_webhook_admission_duration_seconds). */
export const APISERVER_BUCKETS = [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 25];

export interface WebhookMetrics {
  decisions: Counter<'type' | 'rule' | 'result' | 'code'>;
  duration: Histogram<'type' | 'rule'>;
  grantConflicts: Counter;
  grantRetries: Counter;
  grants: Counter<'result' | 'dry_run'>;
  tlsReloads: Counter<'result'>;
  malformed: Counter<'reason'>;
}

export function createMetrics(registry: Registry): WebhookMetrics {
  const registers = [registry];
  return {
    decisions: new Counter({
      name: 'metal_webhook_decisions_total',
      help: 'Admission decisions by review type, rule, result (allowed|denied|error) and code.',
      labelNames: ['type', 'rule', 'result', 'code'],
      registers,
    }),
    duration: new Histogram({
      name: 'metal_webhook_admission_duration_seconds',
      help: 'Time to answer one AdmissionReview, by review type and rule.',
      labelNames: ['type', 'rule'],
      buckets: APISERVER_BUCKETS,
      registers,
    }),
    grantConflicts: new Counter({
      name: 'metal_webhook_grant_conflicts_total',
      help: 'Budget status writes refused for a stale resourceVersion.',
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
    }),
    tlsReloads: new Counter({
      name: 'metal_webhook_tls_reloads_total',
      help: 'Serving certificate reload checks that found a change, by result (reloaded|invalid|error).',
      labelNames: ['result'],
      registers,
    }),
    malformed: new Counter({
      name: 'metal_webhook_malformed_requests_total',
      help: 'Requests answered with a 4xx because they were not an AdmissionReview v1.',
      labelNames: ['reason'],
      registers,
    }),
  };
}
