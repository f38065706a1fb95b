// The firmware decision: (object, cached world, one BMC observation, context) -> next status,
// actions, Events and when to look again. Pure: Redfish and Kubernetes I/O happen in the
// reconciler and the port, which run the actions and write the status only if they all succeed.
//
// Order of questions: deleted? settled (Completed, Applied, Failed)? Pending? the phase timeout,
// the maintenance gate (nothing touches the BMC before every maintenance is InMaintenance), the
// BMC's answer, then the phase (version.ts, settings.ts).
import { Draft } from './draft.js';
import { decideObserve } from './drift.js';
import { decideFailed, fail, gate, poll, startAttempt, timedOut } from './flow.js';
import { decideHeld } from './hold.js';
import { releaseAll } from './maintenance.js';
import {
  ConditionTypes as C,
  TARGET,
  type Decision,
  type ErrorView,
  type FirmwareAction,
  type FirmwareContext,
  type FirmwareKindName,
  type FirmwareObject,
  type FirmwareWorld,
  type SettingsObject,
} from './model.js';
import type { ObserveRequest } from './port.js';
import { attributeNames, settingsPending, settingsPhase } from './settings.js';
import { versionPending, versionPhase } from './version.js';

const isVersion = (kind: FirmwareKindName) => kind.endsWith('Version');

/** What the phase needs to read from the BMC. */
export function observeRequest(kind: FirmwareKindName, obj: FirmwareObject, d: Draft): ObserveRequest {
  const target = TARGET[kind];
  if (!isVersion(kind)) return { target, attributes: attributeNames(obj as SettingsObject) };
  switch (d.phase) {
    case 'Issuing':
      return { target, version: true, tasks: true };
    case 'Flashing':
      return { target, version: true, taskUri: d.status.upgradeTask?.URI };
    default:
      return { target, version: true };
  }
}

export function decide(
  kind: FirmwareKindName,
  obj: FirmwareObject,
  world: FirmwareWorld,
  ctx: FirmwareContext,
): Decision {
  const d = new Draft(kind, obj, ctx);
  // Deletion: the maintenances are owned by the object and go with it.
  if (obj.metadata.deletionTimestamp) return d.act([]);
  // Held by its Set (hold.ts): requests nothing until the Set lets it go.
  const held = decideHeld(d, world);
  if (held) return held;
  // Settled by the pipeline run that owns it (drift.ts): frozen, or watching only.
  if (obj.spec.driftPolicy === 'Suspend') return { kind: 'act', actions: [], events: [] };
  if (obj.spec.driftPolicy === 'Observe') return decideObserve(d, world);
  const state = d.status.state;
  const changed = (obj.metadata.generation ?? 0) > (d.status.observedGeneration ?? 0);
  if (state === 'Failed') return decideFailed(d, world);
  if ((state === 'Completed' || state === 'Applied') && !changed) return d.act(releaseAll(world));
  if (state !== 'InProgress' || !d.phase) return decidePending(d, world);
  return decideActive(d, world);
}

function decidePending(d: Draft, world: FirmwareWorld): Decision {
  if (world.missing) {
    d.status.state = 'Pending';
    d.cond(C.Progressing, 'False', 'TargetNotFound', world.missing);
    return d.act([], undefined);
  }
  if (!world.access.ok) {
    d.status.state = 'Pending';
    d.cond(C.Progressing, 'False', world.access.reason, world.access.message);
    return d.act([], d.ctx.pollMs);
  }
  if (!world.bmc) return { kind: 'observe', request: observeRequest(d.kind, d.obj, d) };
  if (!world.bmc.ok) return bmcDown(d, world, world.bmc.error);
  const obs = world.bmc.observation;
  const next = isVersion(d.kind) ? versionPending(d, obs) : settingsPending(d, obs);
  if (next !== 'start') return next;
  const why = isVersion(d.kind)
    ? `running ${obs.version ?? 'unknown'}, target ${d.obj.spec.version}`
    : 'some attributes differ from the settingsFlow';
  return startAttempt(d, world, why);
}

function decideActive(d: Draft, world: FirmwareWorld): Decision {
  const expired = timedOut(d, world);
  if (expired) return expired;
  // Verifying only reads; it runs even when the maintenance was just released.
  if (d.phase !== 'Verifying') {
    const held = gate(d, world);
    if (held) return held;
  }
  // A run-held child finds its maintenances InMaintenance already: the gate opens from Requesting.
  if (d.phase === 'WaitingForMaintenance' || d.phase === 'RequestingMaintenance') {
    d.enter(isVersion(d.kind) ? 'Issuing' : 'Staging', 'every maintenance is InMaintenance');
    return d.act([], 0);
  }
  if (!world.access.ok) {
    d.cond(C.Progressing, 'True', d.phase ?? 'Issuing', `${world.access.reason}: ${world.access.message}`);
    return d.act([], poll(d, d.phase ?? 'Issuing'));
  }
  if (!world.bmc) return { kind: 'observe', request: observeRequest(d.kind, d.obj, d) };
  if (!world.bmc.ok) return bmcDown(d, world, world.bmc.error);
  const obs = world.bmc.observation;
  return isVersion(d.kind) ? versionPhase(d, world, obs) : settingsPhase(d, world, obs);
}

/** The BMC did not answer: expected while rebooting, retried otherwise, both within the phase timeout. */
function bmcDown(d: Draft, world: FirmwareWorld, error: ErrorView): Decision {
  if (!d.phase) {
    d.status.state = d.status.state ?? 'Pending';
    d.cond(C.Progressing, 'False', 'BMCUnreachable', error.message);
    return d.act([], d.ctx.pollMs);
  }
  d.cond(C.Progressing, 'True', d.phase, `BMC: ${error.message}`);
  return d.act([], poll(d, d.phase));
}

const ACTION_LABEL: Record<FirmwareAction['kind'], string> = {
  createMaintenance: 'requesting the maintenance',
  deleteMaintenance: 'releasing the maintenance',
  setRefs: 'recording the maintenance references',
  simpleUpdate: 'starting SimpleUpdate',
  reset: 'resetting',
  writeAttributes: 'writing the attributes',
  discardStaged: 'discarding the staged attributes',
  clearOperation: 'removing the operation annotation',
};

/** Errors no retry can fix: the BMC lacks the feature, or the request itself is wrong. */
export const FATAL_CODES = new Set(['METAL_ERR_REDFISH_UNSUPPORTED', 'METAL_ERR_REDFISH_INVALID']);

/**
 * The status after `action` failed: nothing it would have changed is claimed. A refused write to
 * the BMC fails the object (maintenances released); anything else is retried within the phase.
 */
export function onActionError(
  kind: FirmwareKindName,
  obj: FirmwareObject,
  world: FirmwareWorld,
  action: FirmwareAction,
  error: ErrorView,
  ctx: FirmwareContext,
): Decision {
  const d = new Draft(kind, obj, ctx);
  const message = `${ACTION_LABEL[action.kind]} failed: ${error.message}`;
  if (action.kind === 'discardStaged') {
    // Not tried again: the next pass releases the maintenances, and the condition says what may remain.
    const text = `${message}; ${action.attributes.join(', ')} may apply at the next reset`;
    d.cond(C.StagedDiscarded, 'False', 'DiscardFailed', text).event('Warning', 'StagedNotDiscarded', text);
    return d.act([], 0);
  }
  if (FATAL_CODES.has(error.code) && d.phase) return fail(d, world, 'Unsupported', message);
  if (action.kind === 'simpleUpdate') {
    // Not proof that nothing happened: Issuing looks for the task before posting again.
    return fail(d, world, 'UpgradeIssueFailed', `${message} (the update might still go through)`);
  }
  if (d.phase) d.cond(C.Progressing, 'True', d.phase, message);
  d.event('Warning', 'ActionFailed', message);
  return d.act([], d.phase ? poll(d, d.phase) : ctx.pollMs);
}
