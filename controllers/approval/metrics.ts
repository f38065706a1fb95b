// Metrics of the approval controller, on the binary's registry (served at /metrics).
import { Counter, Gauge, type Registry } from 'prom-client';

export class ApprovalMetrics {
  readonly decisions: Counter<'source'>;
  readonly announced: Counter;
  readonly escalations: Counter;
  readonly announcements: Gauge;

  /** `countAnnouncements` is read at each scrape from the claim cache. */
  constructor(registry: Registry, countAnnouncements: () => number) {
    const registers = [registry];
    this.decisions = new Counter({
      name: 'metal_approval_decisions_total',
      help: 'Maintenances approved, by source (Owner, Standing, Deadline, Policy, NotRequired).',
      labelNames: ['source'],
      registers,
    });
    this.announced = new Counter({
      name: 'metal_approval_announced_total',
      help: 'Maintenances announced to a claim.',
      registers,
    });
    this.escalations = new Counter({
      name: 'metal_approval_deadline_escalations_total',
      help: 'Maintenances that proceeded because their deadline passed without an answer (DeadlineReached).',
      registers,
    });
    this.announcements = new Gauge({
      name: 'metal_approval_announcements',
      help: 'Announcements currently on claims.',
      registers,
      collect() {
        this.set(countAnnouncements());
      },
    });
  }
}
