// Metrics of the boot controller: boots by phase and method, results, phase durations, pin
// re-arms and Redfish errors by code. Registered on the Manager's registry (/metrics).
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { ServerBootPhases } from '../../api/maintenance/v1alpha1/serverboot.js';
import type { ServerBoot } from './model.js';

export class BootMetrics {
  readonly phases: Gauge<'phase' | 'method'>;
  readonly results: Counter<'method' | 'result'>;
  readonly phaseDuration: Histogram<'phase' | 'method'>;
  readonly rearms: Counter<'method'>;
  readonly redfishErrors: Counter<'code' | 'operation'>;

  constructor(registry: Registry, list: () => ServerBoot[]) {
    const registers = [registry];
    this.phases = new Gauge({
      name: 'metal_serverboot_phase',
      help: 'ServerBoots by current phase and method.',
      labelNames: ['phase', 'method'],
      registers,
      collect() {
        this.reset();
        for (const phase of ServerBootPhases)
          for (const method of ['VirtualMedia', 'UefiHttp', 'Pxe']) this.set({ phase, method }, 0);
        for (const b of list()) this.inc({ phase: b.status?.phase ?? 'Pending', method: b.spec.method });
      },
    });
    this.results = new Counter({
      name: 'metal_serverboot_results_total',
      help: 'Boots that ended, by method and result (Completed, Failed).',
      labelNames: ['method', 'result'],
      registers,
    });
    this.phaseDuration = new Histogram({
      name: 'metal_serverboot_phase_duration_seconds',
      help: 'Time a boot spent in a phase, observed when it left the phase.',
      labelNames: ['phase', 'method'],
      buckets: [0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 14_400, 86_400],
      registers,
    });
    this.rearms = new Counter({
      name: 'metal_serverboot_rearms_total',
      help: 'Pinned boot overrides re-armed after a reboot consumed or cleared them.',
      labelNames: ['method'],
      registers,
    });
    this.redfishErrors = new Counter({
      name: 'metal_serverboot_redfish_errors_total',
      help: 'Redfish failures of the boot controller by error code and operation.',
      labelNames: ['code', 'operation'],
      registers,
    });
  }

  /** Records a phase change written to a ServerBoot's status. */
  transition(before: ServerBoot, after: ServerBoot, now: Date): void {
    const from = before.status?.phase ?? 'Pending';
    const to = after.status?.phase ?? 'Pending';
    if (from === to) return;
    const method = after.spec.method;
    const since = before.status?.phaseSince ? Date.parse(before.status.phaseSince) : NaN;
    if (!Number.isNaN(since))
      this.phaseDuration.observe({ phase: from, method }, Math.max(0, now.getTime() - since) / 1000);
    if (to === 'Completed' || to === 'Failed') this.results.inc({ method, result: to });
  }
}
