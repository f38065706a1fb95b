// Metrics of the drain controller, on the binary's registry (served at /metrics).
import { Counter, type Registry } from 'prom-client';

export class DrainMetrics {
  readonly evictions: Counter<'result'>;
  readonly drained: Counter;
  readonly blocked: Counter;
  readonly approvals: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    this.evictions = new Counter({
      name: 'metal_drain_evictions_total',
      help: 'Eviction requests, by result (evicted, refused: 429 from a PodDisruptionBudget, gone, error).',
      labelNames: ['result'],
      registers,
    });
    this.drained = new Counter({
      name: 'metal_drain_drained_total',
      help: 'Maintenances whose Node was found drained.',
      registers,
    });
    this.blocked = new Counter({
      name: 'metal_drain_blocked_total',
      help: 'Maintenances whose drain started to report blockers.',
      registers,
    });
    this.approvals = new Counter({
      name: 'metal_drain_approvals_total',
      help: 'Approvals written on claims after a drain.',
      registers,
    });
  }
}
