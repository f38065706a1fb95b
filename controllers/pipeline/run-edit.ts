// Which stages a run executes and the records it plans from: the pipeline's stages, or (the
// pipeline gone) the ones its status names; a pipeline edit is adopted only at a safe point, no
// cell in flight (contract/pipeline/edit.ts), until then the run plans frozen on what it executes.
import type { PipelineStage } from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import type { CellRecord } from '../../contract/pipeline/plan.js';
import { planEdit } from '../../contract/pipeline/edit.js';
import { cellKey, scopeOf } from '../../contract/pipeline/stages.js';
import { childName, recordedFromStatus } from '../../contract/pipeline/status.js';
import type { RunAction, RunEvent, RunInput } from './model.js';
import { stagesOfStatus } from './world.js';

export interface ExecutedPlan {
  stages: readonly PipelineStage[];
  recorded: Map<string, CellRecord>;
  /** Child deletions an adopted edit asks for (changed or removed stages). */
  pre: RunAction[];
  /** An edit waits for a safe point: start nothing new. */
  frozen: boolean;
  observedPipelineGeneration?: number;
  events: RunEvent[];
}

export function executedPlan(input: RunInput, stopping: boolean): ExecutedPlan {
  const { run, pipeline } = input;
  const executed = stagesOfStatus(run.status?.stages);
  const recordedOld = recordedFromStatus(executed, run.status?.stages);
  const observed = run.status?.observedPipelineGeneration;
  const keep = (stages: readonly PipelineStage[], frozen: boolean, generation?: number): ExecutedPlan => ({
    stages,
    recorded: recordedFromStatus(stages, run.status?.stages),
    pre: [],
    frozen,
    ...(generation !== undefined ? { observedPipelineGeneration: generation } : {}),
    events: [],
  });
  if (!pipeline || stopping) return keep(pipeline?.spec.stages ?? executed, false, observed);
  const generation = pipeline.metadata.generation ?? 0;
  const stages = pipeline.spec.stages;
  if (observed === undefined || observed >= generation || executed.length === 0)
    return keep(stages, false, generation);
  const inFlight = [...recordedOld.values()].some((r) => r.phase === 'InProgress');
  const servers = run.spec.serverRefs.map((s) => s.name);
  const hashes = (run.status?.stages ?? []).map((s) => ({ name: s.name, hash: s.templateHash ?? '' }));
  const edit = planEdit(hashes, stages, recordedOld, servers, inFlight);
  if (!edit.adopt) return keep(executed.length > 0 ? executed : stages, true, observed);
  const name = run.metadata.name ?? '';
  const kindOf = new Map(executed.map((s) => [s.name, s.kind]));
  const pre = edit.deleteChildren.flatMap((key): RunAction[] => {
    const [stage = '', server] = key.split('/');
    const childKind = kindOf.get(stage);
    return childKind ? [{ kind: 'deleteChild', childKind, name: childName(name, stage, server) }] : [];
  });
  const note = `adopted pipeline generation ${generation}: stages from #${edit.firstChanged + 1} run again`;
  return {
    stages,
    recorded: edit.recorded,
    pre,
    frozen: false,
    observedPipelineGeneration: generation,
    events: [{ type: 'Normal', reason: 'PipelineEdited', note }],
  };
}

/** Servers whose hold ended under the run: their cells that have not started can never start. */
export function failLost(
  stages: readonly PipelineStage[],
  servers: readonly string[],
  recorded: Map<string, CellRecord>,
  lost: readonly string[],
): void {
  if (lost.length === 0) return;
  const fail = (key: string) => {
    const rec = recorded.get(key);
    if ((rec?.phase ?? 'Pending') === 'Pending')
      recorded.set(key, { ...(rec ?? { child: false }), phase: 'Failed' });
  };
  for (const stage of stages) {
    // A BMC stage needs every server of the run held: it cannot start either.
    if (scopeOf(stage.kind) === 'BMC') fail(cellKey(stage.name));
    else for (const s of lost) if (servers.includes(s)) fail(cellKey(stage.name, s));
  }
}
