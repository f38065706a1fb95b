// Prometheus metrics every binary exports, on one registry per process.
import { Registry, Counter, Gauge, Histogram, collectDefaultMetrics } from 'prom-client';

export function createRegistry(binary: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ binary });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Metrics of the controller runtime (queues, reconciles, caches, leadership). */
export class RuntimeMetrics {
  readonly reconciles: Counter<'controller' | 'result'>;
  readonly reconcileDuration: Histogram<'controller'>;
  readonly queueDepth: Gauge<'controller'>;
  readonly queueRetries: Counter<'controller'>;
  readonly queueWait: Histogram<'controller'>;
  readonly rateLimitDelay: Histogram<'controller'>;
  readonly requeues: Counter<'controller' | 'reason'>;
  readonly apiRequests: Counter<'verb' | 'resource' | 'code'>;
  readonly apiRequestDuration: Histogram<'verb'>;
  readonly informerEvents: Gauge<'resource'>;
  readonly informerRelists: Gauge<'resource' | 'reason'>;
  readonly informerLastEventAge: Gauge<'resource'>;
  readonly leader: Gauge;
  readonly statusConflicts: Counter<'resource'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.reconciles = new Counter({
      name: 'metal_reconcile_total',
      help: 'Reconciles by controller and result (success, requeue, error).',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.reconcileDuration = new Histogram({
      name: 'metal_reconcile_duration_seconds',
      help: 'Time spent in one reconcile.',
      labelNames: ['controller'],
      buckets: [0.001, 0.005, 0.025, 0.1, 0.5, 1, 2.5, 10],
      registers,
    });
    this.queueDepth = new Gauge({
      name: 'metal_workqueue_depth',
      help: 'Keys waiting.',
      labelNames: ['controller'],
      registers,
    });
    this.queueRetries = new Counter({
      name: 'metal_workqueue_retries_total',
      help: 'Keys re-queued after a failure.',
      labelNames: ['controller'],
      registers,
    });
    this.queueWait = new Histogram({
      name: 'metal_workqueue_queue_duration_seconds',
      help: 'How long a key waited in the work queue (from its add until a worker took it).',
      labelNames: ['controller'],
      buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.rateLimitDelay = new Histogram({
      name: 'metal_workqueue_ratelimit_delay_seconds',
      help: 'Delay the overall token bucket added to a retry after a failure (only when it added one).',
      labelNames: ['controller'],
      buckets: [0.01, 0.1, 0.5, 1, 5, 10, 30, 60],
      registers,
    });
    this.requeues = new Counter({
      name: 'metal_reconcile_requeues_total',
      help: 'Planned requeues (a reconcile asking to look again later), by reason.',
      labelNames: ['controller', 'reason'],
      registers,
    });
    this.apiRequests = new Counter({
      name: 'metal_api_requests_total',
      help: 'Requests to the API server (watches excluded), by verb, resource and HTTP status.',
      labelNames: ['verb', 'resource', 'code'],
      registers,
    });
    this.apiRequestDuration = new Histogram({
      name: 'metal_api_request_duration_seconds',
      help: 'Latency of requests to the API server (watches excluded).',
      labelNames: ['verb'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.informerEvents = new Gauge({
      name: 'metal_informer_objects',
      help: 'Objects in the informer cache.',
      labelNames: ['resource'],
      registers,
    });
    this.informerRelists = new Gauge({
      name: 'metal_informer_lists',
      help: 'Full lists done by the informer, by reason (total, gone).',
      labelNames: ['resource', 'reason'],
      registers,
    });
    this.informerLastEventAge = new Gauge({
      name: 'metal_informer_last_event_age_seconds',
      help: 'Seconds since the informer last received a watch event or list.',
      labelNames: ['resource'],
      registers,
    });
    this.leader = new Gauge({
      name: 'metal_leader',
      help: '1 while this process holds its Lease.',
      registers,
    });
    this.statusConflicts = new Counter({
      name: 'metal_status_conflicts_total',
      help: 'Optimistic-concurrency conflicts on writes, retried.',
      labelNames: ['resource'],
      registers,
    });
  }
}
