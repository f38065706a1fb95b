// `kubectl metal pipeline status NAME`: a pipeline's runs, their stages and servers, with the
// aggregate phases. Pure: objects in, lines out. A server stage's phase is recomputed from its servers
// with the contract's rule, so what the CLI shows is the definition, whatever the status says.
import type { MaintenancePipeline } from '../api/maintenance/v1alpha1/maintenancepipeline.js';
import type {
  MaintenancePipelineRun,
  RunStageStatus,
  StagePhase,
} from '../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import { aggregatePhase } from '../contract/pipeline/phase.js';
import { scopeOf } from '../contract/pipeline/stages.js';
import { table, type Painter } from './output.js';

export const STAGE_HEAD = ['STAGE', 'KIND', 'SCOPE', 'PHASE', 'SERVERS', 'CHILD'];

function colour(p: Painter, phase: string): string {
  if (phase === 'Failed') return p.red(phase);
  if (phase === 'Completed') return p.green(phase);
  if (phase === 'InProgress' || phase === 'Stopping') return p.yellow(phase);
  return phase;
}

/** "2 Completed, 1 Failed (srv-b)": the counts, and who is not done. */
function serverSummary(stage: RunStageStatus | undefined, servers: readonly string[]): string {
  const byServer = new Map((stage?.servers ?? []).map((s) => [s.server, s.phase]));
  const phases = servers.map((s) => byServer.get(s) ?? 'Pending');
  const counts = (['Completed', 'InProgress', 'Pending', 'Failed'] as const)
    .map((p) => [p, phases.filter((x) => x === p).length] as const)
    .filter(([, n]) => n > 0)
    .map(([p, n]) => `${n} ${p}`);
  const failed = servers.filter((s) => byServer.get(s) === 'Failed');
  return `${counts.join(', ')}${failed.length ? ` (failed: ${failed.join(', ')})` : ''}`;
}

function stagePhaseOf(
  stage: RunStageStatus | undefined,
  servers: readonly string[],
  bmc: boolean,
): StagePhase {
  if (bmc) return stage?.phase ?? 'Pending';
  const byServer = new Map((stage?.servers ?? []).map((s) => [s.server, s.phase]));
  return aggregatePhase(servers.map((s) => byServer.get(s) ?? 'Pending'));
}

export function stageRows(
  pipeline: MaintenancePipeline,
  run: MaintenancePipelineRun,
  p: Painter,
): (string | number)[][] {
  const servers = run.spec.serverRefs.map((r) => r.name);
  const recorded = new Map((run.status?.stages ?? []).map((s) => [s.name, s]));
  return pipeline.spec.stages.map((stage) => {
    const st = recorded.get(stage.name);
    const bmc = scopeOf(stage.kind) === 'BMC';
    return [
      stage.name,
      stage.kind,
      bmc ? 'BMC' : 'Server',
      colour(p, stagePhaseOf(st, servers, bmc)),
      bmc ? '-' : serverSummary(st, servers),
      st?.childRef?.name ?? (bmc ? '-' : `${(st?.servers ?? []).filter((s) => s.childRef).length} children`),
    ];
  });
}

function condition(run: MaintenancePipelineRun, type: string): string {
  const c = run.status?.conditions?.find((x) => x.type === type);
  return c ? `${type}=${c.status}${c.reason ? ` (${c.reason})` : ''}` : `${type}=Unknown`;
}

function runLines(pipeline: MaintenancePipeline, run: MaintenancePipelineRun, p: Painter): string[] {
  const st = run.status;
  const holds = new Map((st?.servers ?? []).map((h) => [h.server, h]));
  const held = run.spec.serverRefs.map((r) => {
    const h = holds.get(r.name);
    return `${r.name} [${h?.maintenanceState ?? 'not held'}${h?.tainted ? ', tainted' : ''}]`;
  });
  return [
    `${p.bold(`run ${run.metadata.name ?? ''}`)}  BMC ${run.spec.bmcRef.name}  ` +
      `${colour(p, st?.phase ?? 'Pending')}  stages ${st?.completedStages ?? 0}/${st?.totalStages ?? pipeline.spec.stages.length} completed  ` +
      `${condition(run, 'Progressing')}  ${condition(run, 'DriftDetected')}`,
    `servers: ${held.join(', ')}`,
    table(STAGE_HEAD, stageRows(pipeline, run, p)),
  ];
}

export function pipelineStatusLines(
  pipeline: MaintenancePipeline,
  runs: readonly MaintenancePipelineRun[],
  p: Painter,
): string[] {
  const s = pipeline.spec;
  const mine = runs
    .filter((r) => r.spec.pipelineRef.name === pipeline.metadata.name)
    .sort((a, b) => a.spec.bmcRef.name.localeCompare(b.spec.bmcRef.name));
  const phases = mine.map((r) => r.status?.phase ?? 'Pending');
  const count = (ph: string) => phases.filter((x) => x === ph).length;
  const lines = [
    `${p.bold(`MaintenancePipeline ${pipeline.metadata.name ?? ''}`)}: ${s.stages.length} stages, ` +
      `taint ${s.maintenanceTaintEffect ?? 'NoClaim'}, drift ${s.driftPolicy ?? 'Reconcile'}, ` +
      `maxConcurrent ${s.maxConcurrent ?? 1}${s.paused ? ', paused' : ''}`,
    `runs: ${mine.length} (${count('InProgress')} InProgress, ${count('Pending')} Pending, ` +
      `${count('Completed')} Completed, ${count('Failed')} Failed, ${count('Stopping')} Stopping)`,
  ];
  for (const run of mine) lines.push('', ...runLines(pipeline, run, p));
  if (mine.length === 0) lines.push('', 'no runs yet');
  return lines;
}
