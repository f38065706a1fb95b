// The run's status, conditions and Events from what decideRun planned. Pure.
import type { PipelineStage } from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import type {
  MaintenancePipelineRunStatus,
  RunPhase,
  RunServerStatus,
} from '../../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import type { Condition } from '../../api/schema/common.js';
import { makeCondition } from '../../contract/conditions.js';
import { PipelineRunConditions as C } from '../../contract/names.js';
import type { HoldPlan, HoldView } from '../../contract/pipeline/hold.js';
import type { RunPlan } from '../../contract/pipeline/plan.js';
import { statusStages } from '../../contract/pipeline/status.js';
import { rfc3339 } from '../../contract/time.js';
import { maintenanceName } from './holds.js';
import type { RunEvent, RunInput } from './model.js';

const REASON_OF_WAIT: Record<string, string> = {
  hold: 'WaitingForMaintenance',
  'version-unknown': 'WaitingForVersion',
  stopping: 'Stopping',
  frozen: 'WaitingForSafePoint',
};

/** Progressing: what the run does or waits for, or how it ended. */
function progressing(plan: RunPlan, phase: string, admitted: boolean) {
  const no = (reason: string, message: string) => ({ status: 'False' as const, reason, message });
  const yes = (reason: string, message: string) => ({ status: 'True' as const, reason, message });
  if (phase === 'Completed') return no('Completed', 'every stage completed');
  if (phase === 'Failed') return no('Failed', 'a stage failed and nothing else can start');
  if (!plan.progressing) return no('Idle', 'nothing to do');
  if (!admitted) return no('WaitingForSlot', 'waiting for a maxConcurrent slot of the pipeline');
  const inFlight = [...plan.cells.entries()].filter(([, c]) => c.phase === 'InProgress').map(([k]) => k);
  if (inFlight.length > 0) return yes('StagesInProgress', `in progress: ${inFlight.slice(0, 10).join(', ')}`);
  const why = plan.waiting[0]?.why ?? 'hold';
  const detail = why === 'hold' ? `: ${plan.wantsHold.join(', ')}` : '';
  return yes(REASON_OF_WAIT[why] ?? 'Waiting', `waiting (${why})${detail}`);
}

export function runConditions(
  input: RunInput,
  plan: RunPlan,
  phase: string,
  drift: { now: boolean; cells: readonly string[] },
): Condition[] {
  const { run, now } = input;
  const previous = run.status?.conditions;
  const gen = run.metadata.generation;
  const driftMessage = drift.now
    ? `drifted: ${drift.cells.join(', ') || 'being repaired'}`
    : 'every settled child matches its hardware';
  return [
    makeCondition(previous, { type: C.Progressing, ...progressing(plan, phase, input.admitted) }, now, gen),
    makeCondition(
      previous,
      {
        type: C.DriftDetected,
        status: drift.now ? 'True' : 'False',
        reason: drift.now ? 'ChildDrifted' : 'NoDrift',
        message: driftMessage,
      },
      now,
      gen,
    ),
  ];
}

/** What the run holds once the decision's writes are done: per server, and whether anything is left. */
export function serverStatuses(
  input: RunInput,
  views: readonly HoldView[],
  holds: HoldPlan,
  waiting: readonly string[],
): { servers: RunServerStatus[]; holding: number; holdsLeft: boolean } {
  const name = input.run.metadata.name ?? '';
  const released = new Set(holds.release);
  // A take that waits for the previous hold's maintenance to be gone took nothing yet: recording
  // it would read as a hold already lost.
  const taken = (v: HoldView) => v.taken || (holds.take.includes(v.server) && !waiting.includes(v.server));
  const held = new Set(views.filter((v) => taken(v) && !released.has(v.server)).map((v) => v.server));
  const tainted = new Set(
    [...views.filter((v) => v.tainted).map((v) => v.server), ...holds.taint].filter(
      (s) => !holds.untaint.includes(s),
    ),
  );
  const servers = views.map(({ server }): RunServerStatus => {
    const state = input.maintenances.get(server)?.status?.state;
    return {
      server,
      ...(held.has(server)
        ? { maintenanceRef: { namespace: input.namespace, name: maintenanceName(name, server) } }
        : {}),
      ...(held.has(server) && state ? { maintenanceState: state } : {}),
      tainted: tainted.has(server),
    };
  });
  return { servers, holding: held.size, holdsLeft: held.size > 0 || tainted.size > 0 };
}

export function runEvents(plan: RunPlan, holds: HoldPlan, drifted: readonly string[]): RunEvent[] {
  const events: RunEvent[] = [];
  for (const s of holds.lost)
    events.push({
      type: 'Warning',
      reason: 'MaintenanceLost',
      note: `the run's maintenance of server ${s} ended under it; its remaining stages cannot start`,
    });
  if (drifted.length > 0)
    events.push({ type: 'Warning', reason: 'DriftDetected', note: `drift in ${drifted.join(', ')}` });
  if (holds.take.length > 0)
    events.push({
      type: 'Normal',
      reason: 'Holding',
      note: `one maintenance for the whole run: ${holds.take.join(', ')}`,
    });
  if (holds.release.length > 0)
    events.push({ type: 'Normal', reason: 'Released', note: `gave back ${holds.release.join(', ')}` });
  for (const a of plan.actions)
    if (a.type === 'stamp' || a.type === 'activate')
      events.push({
        type: 'Normal',
        reason: a.type === 'stamp' ? 'StageStarted' : 'StageReactivated',
        note: `${a.stage}${a.server ? ` on ${a.server}` : ''}`,
      });
  return events;
}

/**
 * The run's status: stages and counters from the plan, the holds after the writes, startedAt when
 * it first held a server, completedAt once it ended and holds nothing (cleared by a re-run).
 */
export function runStatus(
  input: RunInput,
  d: {
    plan: RunPlan;
    stages: readonly PipelineStage[];
    phase: RunPhase;
    held: ReturnType<typeof serverStatuses>;
    observedPipelineGeneration: number | undefined;
  },
  conditions: Condition[],
): MaintenancePipelineRunStatus {
  const { run, now } = input;
  const servers = run.spec.serverRefs.map((s) => s.name);
  const { stages, counters } = statusStages(run.metadata.name ?? '', d.stages, servers, d.plan);
  const terminal = d.phase === 'Completed' || d.phase === 'Failed';
  const startedAt = run.status?.startedAt ?? (d.held.holding > 0 ? rfc3339(now) : undefined);
  const completedAt = terminal && !d.held.holdsLeft ? (run.status?.completedAt ?? rfc3339(now)) : undefined;
  return {
    phase: d.phase,
    ...(d.observedPipelineGeneration !== undefined
      ? { observedPipelineGeneration: d.observedPipelineGeneration }
      : {}),
    ...counters,
    ...(startedAt ? { startedAt } : {}),
    ...(completedAt ? { completedAt } : {}),
    stages,
    servers: d.held.servers,
    conditions,
  };
}
