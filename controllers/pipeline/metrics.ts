// Metrics of the pipeline controller: runs by phase, runs created, the maintenances the runs took
// (one per server per run: a rising count per run means churn came back) and children stamped.
import { Counter, Gauge, type Registry } from 'prom-client';
import {
  RunPhases,
  type MaintenancePipelineRun,
} from '../../api/maintenance/v1alpha1/maintenancepipelinerun.js';

export class PipelineMetrics {
  readonly runs: Gauge<'phase'>;
  readonly runsCreated: Counter;
  readonly runsFinished: Counter<'phase'>;
  readonly maintenancesTaken: Counter;
  readonly childrenStamped: Counter<'kind'>;

  constructor(registry: Registry, list: () => MaintenancePipelineRun[]) {
    const registers = [registry];
    this.runs = new Gauge({
      name: 'metal_pipeline_runs',
      help: 'MaintenancePipelineRuns by phase.',
      labelNames: ['phase'],
      registers,
      collect() {
        this.reset();
        for (const phase of RunPhases) this.set({ phase }, 0);
        for (const r of list()) this.inc({ phase: r.status?.phase ?? 'Pending' });
      },
    });
    this.runsCreated = new Counter({
      name: 'metal_pipeline_runs_created_total',
      help: 'Runs created (one per BMC).',
      registers,
    });
    this.runsFinished = new Counter({
      name: 'metal_pipeline_runs_finished_total',
      help: 'Runs that reached Completed or Failed.',
      labelNames: ['phase'],
      registers,
    });
    this.maintenancesTaken = new Counter({
      name: 'metal_pipeline_maintenances_taken_total',
      help: 'ServerMaintenances the runs took (one per server per hold).',
      registers,
    });
    this.childrenStamped = new Counter({
      name: 'metal_pipeline_children_stamped_total',
      help: 'Firmware children the runs stamped, by kind.',
      labelNames: ['kind'],
      registers,
    });
  }

  transition(before: string | undefined, after: string | undefined): void {
    if (after !== before && (after === 'Completed' || after === 'Failed'))
      this.runsFinished.inc({ phase: after });
  }
}
