// The decision for one MaintenancePipelineRun, pure over (run, pipeline, children, maintenances,
// servers, BMC, now): it reads the run's cells back from its status (a restart loses nothing),
// adopts a pipeline edit at a safe point (run-edit.ts), applies drift, plans the next cells
// (contract/pipeline), works out which servers the run must hold, and turns it all into ordered
// writes and the status (run-status.ts).
import type { PipelineStage } from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import { PIPELINE_RUN_FINALIZER, PipelineRunConditions as C } from '../../contract/names.js';
import { applyDrift, driftDetected } from '../../contract/pipeline/drift.js';
import { holdEnded, planHolds } from '../../contract/pipeline/hold.js';
import { planRun, type PlanAction } from '../../contract/pipeline/plan.js';
import { runPhase, serversNeeded } from '../../contract/pipeline/runs.js';
import { childName } from '../../contract/pipeline/status.js';
import { childObject, type MaintenanceRef } from './children.js';
import { holdActions, holdViews, maintenanceName } from './holds.js';
import type { RunAction, RunDecision, RunInput } from './model.js';
import { executedPlan, failLost } from './run-edit.js';
import { runConditions, runEvents, runStatus, serverStatuses } from './run-status.js';
import { childWorld } from './world.js';

/** A safety net: informers drive the run, this only bounds how long a missed event can stall it. */
export const RESYNC_MS = 30_000;

function refsOf(runName: string, servers: readonly string[], namespace: string): MaintenanceRef[] {
  return servers.map((s) => ({ namespace, name: maintenanceName(runName, s) }));
}

/** Planner actions as child writes. */
function childActions(
  input: RunInput,
  stages: readonly PipelineStage[],
  actions: readonly PlanAction[],
): RunAction[] {
  const { run, namespace } = input;
  const name = run.metadata.name ?? '';
  const servers = run.spec.serverRefs.map((s) => s.name);
  const byName = new Map(stages.map((s) => [s.name, s]));
  return actions.flatMap((a): RunAction[] => {
    const stage = byName.get(a.stage);
    if (!stage) return [];
    const child = childName(name, a.stage, a.server);
    if (a.type === 'settle')
      return [
        { kind: 'patchChild', childKind: stage.kind, name: child, spec: { driftPolicy: a.driftPolicy } },
      ];
    if (a.type === 'activate')
      return [
        {
          kind: 'patchChild',
          childKind: stage.kind,
          name: child,
          spec: { driftPolicy: null, ...(a.version !== undefined ? { version: a.version } : {}) },
        },
      ];
    const identity = {
      name,
      uid: run.metadata.uid ?? '',
      pipeline: run.spec.pipelineRef.name,
      bmc: run.spec.bmcRef.name,
    };
    const refs = refsOf(name, a.server === undefined ? servers : [a.server], namespace);
    return [{ kind: 'createChild', child: childObject(identity, stage, a.server, a.version, refs) }];
  });
}

export function decideRun(input: RunInput): RunDecision {
  const { run, pipeline, namespace } = input;
  const name = run.metadata.name ?? '';
  const servers = run.spec.serverRefs.map((s) => s.name);
  const stopping = !!run.metadata.deletionTimestamp || !pipeline || !!pipeline.metadata.deletionTimestamp;
  const spec = pipeline?.spec;
  const driftPolicy = spec?.driftPolicy ?? 'Reconcile';
  const p = executedPlan(input, stopping);
  // Children the adopted edit deletes in this pass are gone for the plan: never re-activated.
  const deleting = new Set(p.pre.flatMap((a) => (a.kind === 'deleteChild' ? [a.name] : [])));
  const world = childWorld(input, p.stages, servers, deleting);
  // Drift first (Reconcile resets the dirty lanes; Observe only reports), then the holds that ended.
  const drift = applyDrift(p.stages, p.recorded, world, driftPolicy);
  const views = holdViews(run, servers, input.maintenances, input.servers);
  failLost(
    p.stages,
    servers,
    drift.recorded,
    views.filter(holdEnded).map((v) => v.server),
  );
  const plan = planRun(p.stages, drift.recorded, world, { stopping, frozen: p.frozen || !!spec?.paused });
  // Without a slot the run takes nothing; stopping, it keeps only what is in flight.
  const needed =
    input.admitted || stopping ? serversNeeded(p.stages, servers, plan.cells, stopping) : new Set<string>();
  const holds = planHolds(views, needed);
  const hold = holdActions(run, spec, holds, input.maintenances, namespace);
  const actions: RunAction[] = [
    ...hold.first,
    ...p.pre,
    ...childActions(input, p.stages, [...drift.actions, ...plan.actions]),
    ...hold.last,
  ];
  const held = serverStatuses(input, views, holds, hold.waiting);
  const phase = runPhase(input.admitted, plan, stopping);
  const wasDrift = run.status?.conditions?.find((c) => c.type === C.DriftDetected)?.status === 'True';
  const allDone = plan.stagePhases.every((x) => x === 'Completed');
  const drifting = driftDetected(wasDrift, drift.drifted.length, driftPolicy, allDone);
  const status = runStatus(
    input,
    { plan, stages: p.stages, phase, held, observedPipelineGeneration: p.observedPipelineGeneration },
    runConditions(input, plan, phase, { now: drifting, cells: drift.drifted }),
  );
  const events = [...p.events, ...runEvents(plan, holds, drift.drifted)];
  if (run.status?.phase !== phase)
    events.push({
      type: phase === 'Failed' ? 'Warning' : 'Normal',
      reason: `Run${phase}`,
      note: `run ${name} is ${phase}`,
    });
  // The finalizer goes last, once nothing is in flight and nothing is held or tainted.
  const finalizer = (run.metadata.finalizers ?? []).includes(PIPELINE_RUN_FINALIZER);
  if (run.metadata.deletionTimestamp && finalizer && !plan.progressing && !held.holdsLeft)
    actions.push({ kind: 'removeFinalizer' });
  const again = plan.progressing || held.holdsLeft || hold.waiting.length > 0;
  return {
    status,
    actions,
    events,
    progressing: plan.progressing,
    ...(again ? { requeueAfterMs: RESYNC_MS } : {}),
  };
}
