// Act 7's pure parts: the chassis fleet's layout, the pipeline's stages, the runs' line on screen,
// and what the act concludes from the runs and the simulator's ledger (summary rows, problems).
import type { MaintenancePipelineRun } from '../../../api/maintenance/v1alpha1/maintenancepipelinerun.js';

/**
 * Five stages: the BMC's firmware and settings, then per server two BIOS hops and the BIOS settings.
 * Settings stages name the version they are for: the demo's BMC objects carry no status (no
 * metal-operator writes it), so the pipeline could not hydrate one and would wait.
 */
export const PIPELINE_STAGES = [
  {
    name: 'bmc-fw',
    kind: 'BMCVersion' as const,
    template: {
      version: '6.0.0',
      serverMaintenancePolicy: 'Enforced' as const,
      image: { URI: 'https://images.demo/bmc/6.0.0' },
    },
  },
  {
    name: 'bmc-ntp',
    kind: 'BMCSettings' as const,
    template: {
      version: '6.0.0',
      serverMaintenancePolicy: 'Enforced' as const,
      settingsFlow: [{ name: 'ntp', priority: 10, settings: { 'NTP.1.Server': 'ntp.demo.internal' } }],
    },
  },
  {
    name: 'bios-fw',
    kind: 'BIOSVersion' as const,
    template: {
      version: '2.1.0',
      serverMaintenancePolicy: 'Enforced' as const,
      image: { URI: 'https://images.demo/bios/2.1.0' },
    },
  },
  {
    name: 'bios-fw-2',
    kind: 'BIOSVersion' as const,
    template: {
      version: '2.2.0',
      serverMaintenancePolicy: 'Enforced' as const,
      image: { URI: 'https://images.demo/bios/2.2.0' },
    },
  },
  {
    name: 'bios-tune',
    kind: 'BIOSSettings' as const,
    template: {
      version: '2.2.0',
      serverMaintenancePolicy: 'Enforced' as const,
      settingsFlow: [{ name: 'virt', priority: 10, settings: { SriovGlobalEnable: 'Enabled' } }],
    },
  },
];
export const FINAL_BIOS = '2.2.0';
export const FINAL_BMC = '6.0.0';

export const condition = (r: MaintenancePipelineRun | undefined, type: string) =>
  r?.status?.conditions?.find((c) => c.type === type);

/** A run is done when it completed or failed as far as it could. */
export const finished = (r: MaintenancePipelineRun) =>
  r.status?.phase === 'Completed' || r.status?.phase === 'Failed';

/** The runs' line in the live frame. */
export function runsLine(name: string, runs: readonly MaintenancePipelineRun[]): string {
  const count = (ph: string) => runs.filter((r) => (r.status?.phase ?? 'Pending') === ph).length;
  const drift = runs
    .filter((r) => condition(r, 'DriftDetected')?.status === 'True')
    .map((r) => r.metadata.name);
  return (
    `${name}: ${runs.length} runs  ${count('Completed')} Completed  ${count('InProgress')} InProgress  ` +
    `${count('Pending')} Pending  ${count('Failed')} Failed${drift.length ? `  DriftDetected: ${drift.join(', ')}` : ''}`
  );
}

/** Servers whose lane failed in a run, and the stage where. */
export function failedLanes(run: MaintenancePipelineRun): { server: string; stage: string }[] {
  return (run.status?.stages ?? []).flatMap((st) =>
    (st.servers ?? []).filter((s) => s.phase === 'Failed').map((s) => ({ server: s.server, stage: st.name })),
  );
}

export interface PipelineFacts {
  pipeline: string;
  runs: readonly MaintenancePipelineRun[];
  servers: number;
  bmcs: number;
  /** Per server: BIOS and BMC versions, BIOS flashes and settings writes in the simulator's ledger. */
  ledger: ReadonlyMap<string, { bios: string; bmc: string; biosFlashes: number; settingsWrites: number }>;
  /** The drift: which server was reset, whether the run showed DriftDetected, settings writes before and after. */
  drift: {
    server: string;
    run: string;
    seen: boolean;
    cleared: boolean;
    writesBefore: number;
    writesAfter: number;
    value: unknown;
  };
}

export function judgePipeline(f: PipelineFacts): { rows: [string, string][]; problems: string[] } {
  const problems: string[] = [];
  const failedRuns = f.runs.filter((r) => r.status?.phase === 'Failed');
  const lanes = failedRuns.flatMap((r) => failedLanes(r).map((l) => ({ ...l, run: r.metadata.name ?? '' })));
  if (f.runs.length !== f.bmcs)
    problems.push(`pipeline: ${f.runs.length} runs, expected one per BMC (${f.bmcs})`);
  if (failedRuns.length !== 1 || lanes.length !== 1)
    problems.push(`pipeline: expected one failed lane in one run, got ${JSON.stringify(lanes)}`);
  const failed = new Set(lanes.map((l) => l.server));
  const notDone = [...f.ledger].filter(
    ([s, l]) => !failed.has(s) && (l.bios !== FINAL_BIOS || l.bmc !== FINAL_BMC || l.biosFlashes !== 2),
  );
  if (notDone.length)
    problems.push(
      `pipeline: lanes not at BIOS ${FINAL_BIOS}/BMC ${FINAL_BMC} with two flashes: ${notDone.map(([s]) => s).join(', ')}`,
    );
  const others = f.runs.filter((r) => r.status?.phase !== 'Completed' && !failedRuns.includes(r));
  if (others.length)
    problems.push(
      `pipeline: runs neither Completed nor Failed: ${others.map((r) => r.metadata.name).join(', ')}`,
    );
  const d = f.drift;
  if (!d.seen)
    problems.push(`pipeline: run ${d.run} never showed DriftDetected=True after the factory reset`);
  if (!d.cleared) problems.push(`pipeline: run ${d.run} did not complete again with the drift repaired`);
  if (d.value !== 'Enabled' || d.writesAfter !== d.writesBefore + 1)
    problems.push(
      `pipeline: ${d.server}'s SriovGlobalEnable is ${String(d.value)} after ${d.writesAfter - d.writesBefore} writes (want Enabled after 1)`,
    );
  const lane = lanes[0];
  return {
    rows: [
      [
        'pipeline',
        `${f.pipeline}: 5 stages, ${f.servers} servers on ${f.bmcs} BMCs; ${f.runs.length - failedRuns.length} runs Completed, ` +
          `${failedRuns.length} Failed${lane ? ` (${lane.server} failed in ${lane.stage}; the rest of ${lane.run} finished)` : ''}`,
      ],
      [
        '',
        `factory reset of ${d.server}: DriftDetected=True on ${d.run}, repaired with ${d.writesAfter - d.writesBefore} settings write, Completed again`,
      ],
    ],
    problems,
  };
}
