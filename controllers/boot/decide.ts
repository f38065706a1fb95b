// The boot decision: (ServerBoot, cached world, one BMC observation, context) -> next status,
// actions, Events and when to look again. Pure: Redfish and Kubernetes I/O happen at the edge
// (edge.ts, reconciler.ts), which runs the actions and writes the status only if they succeed.
//
//   Pending -> PreparingMedia -> SettingOverride -> Resetting -> WaitingForPower -> Running
//           -> Restoring -> Completed            (any timed phase -> Failed, then undo until done)
//
// The phases are decided in start.ts (start, hold, end), phases.ts (the forward phases) and
// restore.ts (restore, failed, deletion); fail.ts is how any of them fails. What a failed action
// means for the boot (onActionError) is decided here.
import { Draft, phaseOf } from './draft.js';
import { evaluateGate } from './gate.js';
import {
  ConditionTypes as C,
  type BmcObservation,
  type BootAction,
  type BootContext,
  type BootWorld,
  type Decision,
  type ErrorView,
  type ServerBoot,
  type ServerBootPhase,
} from './model.js';
import { isFatal } from './errors.js';
import { bmcDown, fail, timeout } from './fail.js';
import { prepareMedia, resetting, running, setOverride, waitForPower } from './phases.js';
import { decideDeletion, decideFailed, restoring } from './restore.js';
import { endBoot, hold, start } from './start.js';

/** The decision for one ServerBoot. Returns `observe` when it needs `world.bmc` first. */
export function decide(boot: ServerBoot, world: BootWorld, ctx: BootContext): Decision {
  const d = new Draft(boot, ctx);
  if (boot.metadata.deletionTimestamp) return decideDeletion(d, world);
  const phase = phaseOf(boot);
  if (phase === 'Completed') return d.act([]);
  if (phase === 'Failed') return decideFailed(d, world);
  const gate = evaluateGate(boot, world.server, world.maintenance);
  if (gate.kind === 'hold') return hold(d, gate.reason, gate.message);
  if (gate.kind === 'end' && phase !== 'Restoring') return endBoot(d, gate.reason, gate.message);
  if (phase === 'Pending') return start(d, world);
  return decideActive(d, world);
}

export type PhaseHandler = (d: Draft, world: BootWorld, obs: BmcObservation) => Decision;

export const HANDLERS: Partial<Record<ServerBootPhase, PhaseHandler>> = {
  PreparingMedia: prepareMedia,
  SettingOverride: (d, _w, obs) => setOverride(d, obs),
  Resetting: (d, _w, obs) => resetting(d, obs),
  WaitingForPower: (d, _w, obs) => waitForPower(d, obs),
  Running: (d, _w, obs) => running(d, obs),
  Restoring: restoring,
};

/** A started boot that may go on: timeouts first, then one observation, then its phase. */
export function decideActive(d: Draft, world: BootWorld): Decision {
  const timedOut = timeout(d, world);
  if (timedOut) return timedOut;
  if (!world.access.ok) {
    d.cond(C.BMCReady, 'False', world.access.reason, world.access.message).message(world.access.message);
    return d.act([], d.ctx.retryMs);
  }
  // Unpinned and running: nothing to watch on the BMC until the boot ends.
  if (d.phase === 'Running' && d.boot.spec.pin === false) return d.act([]);
  if (!world.bmc) return { kind: 'observe' };
  if (!world.bmc.ok) return bmcDown(d, world, world.bmc.error);
  d.cond(C.BMCReady, 'True', 'Reachable', 'the BMC answers');
  const handler = HANDLERS[d.phase] ?? restoring;
  return handler(d, world, world.bmc.observation);
}

export const ACTION_LABEL: Record<BootAction['kind'], string> = {
  insertMedia: 'inserting the virtual media',
  ejectMedia: 'ejecting the virtual media',
  setOverride: 'setting the boot override',
  restoreOverride: 'restoring the boot override',
  reset: 'resetting the server',
  createSbc: 'creating the ServerBootConfiguration',
  deleteSbc: 'deleting the ServerBootConfiguration',
};

export function failedActionCondition(d: Draft, action: BootAction, message: string): void {
  switch (action.kind) {
    case 'setOverride':
      if (d.phase === 'Running') d.cond(C.Pinned, 'False', 'RearmFailed', message);
      else d.cond(C.OverrideSet, 'False', 'SetFailed', message);
      return;
    case 'insertMedia':
    case 'createSbc':
      if (d.phase === 'PreparingMedia' || d.phase === 'Running')
        d.cond(C.MediaReady, 'False', 'PrepareFailed', message);
      else d.cond(C.Restored, 'False', 'UndoFailed', message);
      return;
    case 'reset':
      d.cond(C.BMCReady, 'False', 'ResetFailed', message);
      return;
    default:
      d.cond(C.Restored, 'False', 'UndoFailed', message);
  }
}

/**
 * The status after `action` failed: nothing it would have changed is claimed, what was observed is
 * kept. Errors no retry can fix end a forward phase in Failed; others are retried.
 */
export function onActionError(
  boot: ServerBoot,
  world: BootWorld,
  action: BootAction,
  error: ErrorView,
  ctx: BootContext,
): Decision {
  const d = new Draft(boot, ctx);
  if (world.bmc?.ok) d.status.powerState = world.bmc.observation.powerState ?? d.status.powerState;
  const label = ACTION_LABEL[action.kind];
  const forward = !boot.metadata.deletionTimestamp && !['Restoring', 'Failed', 'Completed'].includes(d.phase);
  if (forward && isFatal(error)) return fail(d, world, d.phase, 'Unsupported', `${label}: ${error.message}`);
  const message = `${label} failed: ${error.message}`;
  failedActionCondition(d, action, message);
  d.message(message).event('Warning', 'ActionFailed', message);
  return d.act([], ctx.retryMs);
}
