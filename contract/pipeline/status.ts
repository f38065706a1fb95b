// The run's status and the planner's cells, both ways: what a restarted controller reads back
// (recordedFromStatus) is exactly what it wrote (statusStages), so a kill -9 between two reconciles
// loses nothing the planner needs. Child names are derived, never stored apart from the status.
import type { PipelineStage } from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import type { ChildRef, RunStageStatus } from '../../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import type { CellRecord, RunPlan } from './plan.js';
import { stageCounters, type StageCounters } from './phase.js';
import { boundedName } from './runs.js';
import { cellKey, scopeOf, stageHash } from './stages.js';

/** The child of a cell: `<run>-<stage>` on the BMC, `<run>-<server>-<stage>` on a server. */
export function childName(run: string, stage: string, server?: string): string {
  return server === undefined ? boundedName(run, stage) : boundedName(run, server, stage);
}

export function recordedFromStatus(
  stages: readonly PipelineStage[],
  status: readonly RunStageStatus[] | undefined,
): Map<string, CellRecord> {
  const out = new Map<string, CellRecord>();
  const byName = new Map((status ?? []).map((s) => [s.name, s]));
  for (const stage of stages) {
    const st = byName.get(stage.name);
    if (!st) continue;
    if (scopeOf(stage.kind) === 'BMC') {
      out.set(cellKey(stage.name), record(st.phase, st.childRef, st.version, st.reached));
    } else {
      for (const s of st.servers ?? []) {
        out.set(cellKey(stage.name, s.server), record(s.phase, s.childRef, s.version, s.reached));
      }
    }
  }
  return out;
}

function record(
  phase: CellRecord['phase'],
  childRef: ChildRef | undefined,
  version: string | undefined,
  reached: boolean | undefined,
): CellRecord {
  return {
    phase,
    child: childRef !== undefined,
    ...(reached ? { reached: true } : {}),
    ...(version !== undefined ? { version } : {}),
  };
}

export function statusStages(
  run: string,
  stages: readonly PipelineStage[],
  servers: readonly string[],
  plan: Pick<RunPlan, 'cells' | 'stagePhases'>,
): { stages: RunStageStatus[]; counters: StageCounters } {
  const ref = (stage: PipelineStage, server?: string): { childRef?: ChildRef } =>
    plan.cells.get(cellKey(stage.name, server))?.child
      ? { childRef: { kind: stage.kind, name: childName(run, stage.name, server) } }
      : {};
  const extra = (rec: CellRecord | undefined) => ({
    ...(rec?.version !== undefined ? { version: rec.version } : {}),
    ...(rec?.reached ? { reached: true } : {}),
  });
  const out = stages.map((stage, i): RunStageStatus => {
    const base = {
      name: stage.name,
      kind: stage.kind,
      phase: plan.stagePhases[i] ?? 'Pending',
      templateHash: stageHash(stage),
    };
    if (scopeOf(stage.kind) === 'BMC') {
      return { ...base, ...ref(stage), ...extra(plan.cells.get(cellKey(stage.name))) };
    }
    return {
      ...base,
      servers: servers.map((server) => {
        const rec = plan.cells.get(cellKey(stage.name, server));
        return { server, phase: rec?.phase ?? 'Pending', ...ref(stage, server), ...extra(rec) };
      }),
    };
  });
  return { stages: out, counters: stageCounters(out.map((s) => s.phase)) };
}
