// Metrics of the maintenance controller, on the binary's registry (served at /metrics).
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { BudgetRef } from '../../contract/budgets.js';

export interface StateSnapshot {
  counts: Record<string, number>;
  oldestSeconds: Record<string, number>;
}

export class MaintenanceMetrics {
  readonly byState: Gauge<'state'>;
  readonly oldestInState: Gauge<'state'>;
  readonly timeInState: Histogram<'state'>;
  readonly attempts: Counter<'result'>;
  readonly denied: Counter<'reason'>;
  readonly failed: Counter<'reason'>;
  readonly grantsReleased: Counter<'kind' | 'namespace' | 'budget' | 'at'>;
  readonly grantsUsed: Counter<'kind' | 'namespace' | 'budget'>;
  readonly budgetWaiters: Gauge;

  /**
   * `byState` is read at each scrape (from the informer cache), so the gauges are never stale: the
   * count of maintenances in each state and, per state, the age of the one that entered it first.
   */
  constructor(registry: Registry, byState: () => StateSnapshot) {
    const registers = [registry];
    this.byState = new Gauge({
      name: 'metal_maintenances',
      help: 'ServerMaintenances in the cache by state (Pending, Announced, Approved, InMaintenance, Failed, Deleting).',
      labelNames: ['state'],
      registers,
      collect() {
        for (const [state, n] of Object.entries(byState().counts)) this.set({ state }, n);
      },
    });
    this.oldestInState = new Gauge({
      name: 'metal_maintenance_oldest_in_state_seconds',
      help: 'Seconds since the longest-waiting maintenance in a state entered it (0: none in that state). Alerts on a maintenance stuck in a phase.',
      labelNames: ['state'],
      registers,
      collect() {
        for (const [state, s] of Object.entries(byState().oldestSeconds)) this.set({ state }, s);
      },
    });
    this.timeInState = new Histogram({
      name: 'metal_maintenance_time_in_state_seconds',
      help: 'Time a maintenance spent in a state, observed when it leaves it.',
      labelNames: ['state'],
      buckets: [1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600, 7 * 24 * 3600],
      registers,
    });
    this.attempts = new Counter({
      name: 'metal_maintenance_admission_attempts_total',
      help: 'InMaintenance transitions tried, by result (admitted, denied, error).',
      labelNames: ['result'],
      registers,
    });
    this.denied = new Counter({
      name: 'metal_maintenance_decisions_denied_total',
      help: 'InMaintenance transitions the webhook denied, by reason (BudgetExhausted, AwaitingApproval, ServerBusy, ...).',
      labelNames: ['reason'],
      registers,
    });
    this.failed = new Counter({
      name: 'metal_maintenance_failed_total',
      help: 'Maintenances failed by a timeout, by reason.',
      labelNames: ['reason'],
      registers,
    });
    this.grantsReleased = new Counter({
      name: 'metal_maintenance_grants_released_total',
      help:
        'Budget ledger entries this controller removed, by budget and by when: ended (the finalizer, or ' +
        'a failure), refused (an InMaintenance write another admission step refused after the grant) or ' +
        'failed (an InMaintenance write not stored after the grant: a webhook call failed, a lost conflict).',
      labelNames: ['kind', 'namespace', 'budget', 'at'],
      registers,
    });
    this.grantsUsed = new Counter({
      name: 'metal_maintenance_grants_used_total',
      help: 'Budget grants that an admitted InMaintenance transition used, by budget.',
      labelNames: ['kind', 'namespace', 'budget'],
      registers,
    });
    this.budgetWaiters = new Gauge({
      name: 'metal_maintenance_budget_waiters',
      help: 'Servers whose next maintenance waits for budget room.',
      registers,
    });
  }
}

/** A budget's metric labels. */
export function budgetLabels(ref: BudgetRef): { kind: string; namespace: string; budget: string } {
  return { kind: ref.kind, namespace: ref.namespace ?? '', budget: ref.name };
}
