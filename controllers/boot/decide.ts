// The boot decision: (ServerBoot, cached world, one BMC observation, context) -> next status,
// actions, Events and when to look again. Pure: Redfish and Kubernetes I/O happen at the edge
// (edge.ts, reconciler.ts), which runs the actions and writes the status only if they succeed.
//
//   Pending -> PreparingMedia -> SettingOverride -> Resetting -> WaitingForPower -> Running
//           -> Restoring -> Completed            (any timed phase -> Failed, then undo until done)
import { objectKey } from '../../lib/kube/resources.js';
import { MAINTENANCE_GROUP, MAINTENANCE_VERSION } from '../../api/maintenance/v1alpha1/group.js';
import type { ServerBootConfiguration } from '../../api/metal/v1alpha1/serverbootconfiguration.js';
import { findCondition } from '../../contract/conditions.js';
import { isTrue } from './conditions.js';
import { Draft, formatMs, phaseOf, phaseTimeoutMs } from './draft.js';
import { evaluateGate, hasStarted } from './gate.js';
import {
  ConditionTypes as C,
  SBC_BOOT_LABEL,
  SKIP_RESTORE_ANNOTATION,
  TIMED_PHASES,
  type BmcObservation,
  type BootAction,
  type BootContext,
  type BootWorld,
  type Decision,
  type ErrorView,
  type ServerBoot,
  type ServerBootPhase,
} from './model.js';
import { desiredOverride, describeOverride, isArmed, overrideStatus } from './override.js';
import { nothingChanged, undoPlan, unconfirmedItems } from './undo.js';
import { isFatal } from './errors.js';

const HOLD_RECHECK_MS = 5 * 60_000;

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

type PhaseHandler = (d: Draft, world: BootWorld, obs: BmcObservation) => Decision;

const HANDLERS: Partial<Record<ServerBootPhase, PhaseHandler>> = {
  PreparingMedia: prepareMedia,
  SettingOverride: (d, _w, obs) => setOverride(d, obs),
  Resetting: (d, _w, obs) => resetting(d, obs),
  WaitingForPower: (d, _w, obs) => waitForPower(d, obs),
  Running: (d, _w, obs) => running(d, obs),
  Restoring: restoring,
};

/** A started boot that may go on: timeouts first, then one observation, then its phase. */
function decideActive(d: Draft, world: BootWorld): Decision {
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

// --- start, hold, end -----------------------------------------------------------------------

function specProblem(boot: ServerBoot): string | undefined {
  if (boot.spec.method === 'Pxe') return undefined;
  let url: URL;
  try {
    url = new URL(boot.spec.image);
  } catch {
    return `image ${JSON.stringify(boot.spec.image)} is not a URL; ${boot.spec.method} needs an http(s) URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `image URL scheme ${url.protocol} is not http or https`;
  }
  return undefined;
}

function hold(d: Draft, reason: string, message: string): Decision {
  d.cond(C.Admitted, 'False', reason, message).message(`held: ${message}`);
  if (findCondition(d.boot.status?.conditions, C.Admitted)?.reason !== reason)
    d.event('Normal', 'Held', message);
  return d.act([], HOLD_RECHECK_MS);
}

function start(d: Draft, world: BootWorld): Decision {
  const problem = specProblem(d.boot);
  if (problem) return fail(d, world, 'Pending', 'InvalidSpec', problem);
  d.cond(C.Admitted, 'True', 'Admitted', admittedMessage(d.boot));
  if (!world.access.ok) {
    d.cond(C.BMCReady, 'False', world.access.reason, world.access.message);
    return d.message(`waiting for BMC access: ${world.access.message}`).act([], d.ctx.retryMs);
  }
  d.to(
    'PreparingMedia',
    `booting ${d.boot.spec.serverRef.name} into ${d.boot.spec.image} by ${d.boot.spec.method}`,
  );
  return d.act([], 0);
}

function admittedMessage(boot: ServerBoot): string {
  const m = boot.spec.maintenanceRef?.name;
  return m
    ? `maintenance ${boot.metadata.namespace ?? ''}/${m} is InMaintenance`
    : 'the server is not claimed';
}

/** The maintenance ended (or the server was claimed): restore, then Completed. */
function endBoot(d: Draft, reason: string, message: string): Decision {
  d.cond(C.Admitted, 'False', reason, message);
  if (!hasStarted(d.boot)) {
    d.cond(C.Restored, 'True', 'NothingChanged', 'the boot ended before it changed anything');
    return d.to('Completed', `ended before it started: ${message}`).act([]);
  }
  return d.to('Restoring', `ending: ${message}; restoring the previous boot settings`).act([], 0);
}

// --- failures -------------------------------------------------------------------------------

/** Ends in Failed, naming the phase and why; the undo runs from the Failed phase. */
export function fail(
  d: Draft,
  world: BootWorld,
  phase: ServerBootPhase,
  reason: string,
  why: string,
): Decision {
  d.status.failedPhase = phase;
  d.cond(C.Failed, 'True', reason, `${phase}: ${why}`);
  const items = unconfirmedItems(d.boot, world, 'undo pending');
  if (items.length > 0) {
    d.status.notRestored = items;
    d.cond(C.Restored, 'False', 'UndoPending', items.join('; '));
  } else {
    delete d.status.notRestored;
    d.cond(C.Restored, 'True', 'NothingChanged', 'the boot changed nothing that needs undoing');
  }
  d.to('Failed', `failed in ${phase}: ${why}`, 'Warning');
  return d.act([], items.length > 0 ? 0 : undefined);
}

function timeout(d: Draft, world: BootWorld): Decision | undefined {
  const phase = d.phase;
  if (!TIMED_PHASES.includes(phase)) return undefined;
  const limit = phaseTimeoutMs(d.boot, d.ctx);
  if (d.inPhaseMs() < limit) return undefined;
  const last = d.boot.status?.message ? ` (last: ${d.boot.status.message})` : '';
  return fail(d, world, phase, 'PhaseTimeout', `did not finish within ${formatMs(limit)}${last}`);
}

function bmcDown(d: Draft, world: BootWorld, error: ErrorView): Decision {
  d.cond(C.BMCReady, 'False', 'Unreachable', error.message);
  if (d.phase === 'WaitingForPower') {
    // BMCs often stop answering while the host cycles; the phase timeout bounds the wait.
    return d.message(`waiting for the host; the BMC does not answer: ${error.message}`).act([], d.ctx.pollMs);
  }
  if (d.phase === 'Restoring') {
    const items = unconfirmedItems(d.boot, world, `BMC: ${error.code}`);
    if (items.length > 0) d.status.notRestored = items;
    d.cond(C.Restored, 'False', 'BMCUnavailable', error.message);
  }
  return d.message(`the BMC does not answer: ${error.message}`).act([], d.ctx.retryMs);
}

// --- forward phases -------------------------------------------------------------------------

export function sbcFor(boot: ServerBoot): ServerBootConfiguration {
  return {
    metadata: {
      name: boot.metadata.name,
      namespace: boot.metadata.namespace,
      labels: { [SBC_BOOT_LABEL]: boot.metadata.uid ?? '' },
      ownerReferences: [
        {
          apiVersion: `${MAINTENANCE_GROUP}/${MAINTENANCE_VERSION}`,
          kind: 'ServerBoot',
          name: boot.metadata.name ?? '',
          uid: boot.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { serverRef: { name: boot.spec.serverRef.name }, image: boot.spec.image },
  };
}

function prepareMedia(d: Draft, world: BootWorld, obs: BmcObservation): Decision {
  if (!d.status.previousBoot) {
    // Saved (and written) before anything changes, so there is always something to restore to.
    const media = obs.media?.inserted && obs.media.image !== d.boot.spec.image ? obs.media.image : undefined;
    d.status.previousBoot = overrideStatus(obs.override, media);
    return d.message(`saved the previous boot settings (${describeOverride(obs.override)})`).act([], 0);
  }
  const ready = (reason: string, message: string): Decision => {
    d.cond(C.MediaReady, 'True', reason, message);
    return d.to('SettingOverride', `${message}; setting the boot override`).act([], 0);
  };
  const image = d.boot.spec.image;
  switch (d.boot.spec.method) {
    case 'UefiHttp':
      return ready('ServedByURL', `the firmware fetches ${image} itself`);
    case 'VirtualMedia': {
      if (obs.media === null)
        return fail(d, world, 'PreparingMedia', 'NoVirtualMedia', 'the BMC has no virtual CD/DVD device');
      if (obs.media?.inserted && obs.media.image === image)
        return ready('Inserted', `${image} is in the virtual CD`);
      d.cond(C.MediaReady, 'False', 'Inserting', `inserting ${image}`);
      return d.message(`inserting ${image} into the virtual CD`).act([{ kind: 'insertMedia', image }], 0);
    }
    default:
      return preparePxe(d, world, ready);
  }
}

function preparePxe(
  d: Draft,
  world: BootWorld,
  ready: (reason: string, message: string) => Decision,
): Decision {
  const sbc = world.sbc;
  const name = `${d.boot.metadata.namespace ?? ''}/${d.boot.metadata.name ?? ''}`;
  if (!sbc) {
    d.cond(C.MediaReady, 'False', 'CreatingBootConfiguration', `creating ServerBootConfiguration ${name}`);
    return d
      .message(`creating ServerBootConfiguration ${name}`)
      .act([{ kind: 'createSbc', sbc: sbcFor(d.boot) }], d.ctx.pollMs);
  }
  const owned = sbc.metadata.ownerReferences?.some((o) => o.uid === d.boot.metadata.uid);
  if (!owned) {
    return fail(
      d,
      world,
      'PreparingMedia',
      'BootConfigurationConflict',
      `ServerBootConfiguration ${objectKey(sbc.metadata)} exists and is not this boot's`,
    );
  }
  const state = sbc.status?.state ?? 'Pending';
  if (state === 'Ready') return ready('BootConfigurationReady', `ServerBootConfiguration ${name} is Ready`);
  if (state === 'Error') {
    return fail(
      d,
      world,
      'PreparingMedia',
      'BootConfigurationError',
      `ServerBootConfiguration ${name} reports Error`,
    );
  }
  d.cond(C.MediaReady, 'False', 'WaitingForBootConfiguration', `ServerBootConfiguration ${name} is ${state}`);
  return d
    .message(`waiting for ServerBootConfiguration ${name} to be Ready (now ${state})`)
    .act([], d.ctx.pollMs);
}

function setOverride(d: Draft, obs: BmcObservation): Decision {
  const want = desiredOverride(d.boot, obs);
  if (!isArmed(obs.override, want, obs.targetAliases)) {
    d.cond(C.OverrideSet, 'False', 'Setting', `setting ${want.enabled} ${want.target}`);
    return d
      .message(`setting the boot override to ${want.enabled} ${want.target}`)
      .act([{ kind: 'setOverride', request: want }], 0);
  }
  d.status.appliedBoot = overrideStatus(obs.override);
  d.cond(C.OverrideSet, 'True', 'Armed', `boot override is ${describeOverride(obs.override)}`);
  if (d.boot.spec.pin !== false) d.cond(C.Pinned, 'True', 'Armed', pinMessage(obs));
  return d
    .to('Resetting', `boot override is ${describeOverride(obs.override)}; resetting the server`)
    .act([], 0);
}

function pinMessage(obs: BmcObservation): string {
  return obs.override.enabled === 'Continuous'
    ? `Continuous ${obs.override.target}: every reboot comes back into the image`
    : `Once ${obs.override.target}, re-armed after every boot so the next reboot comes back into the image`;
}

function resetting(d: Draft, obs: BmcObservation): Decision {
  const want = desiredOverride(d.boot, obs);
  if (!isArmed(obs.override, want, obs.targetAliases)) {
    // Changed between setting and resetting (another controller): set it again first.
    return d
      .message('the boot override changed before the reset; setting it again')
      .act([{ kind: 'setOverride', request: want }], 0);
  }
  // A BMC that does not report PowerState (HPE iLO 6, upstream #594) gets a restart: it works from On.
  const power = obs.powerState ?? 'Unknown';
  d.status.powerState = power;
  if (power === 'On' || power === 'Unknown') {
    d.to('WaitingForPower', 'ForceRestart issued; waiting for the host to come back on');
    return d.act([{ kind: 'reset', resetType: 'ForceRestart' }], d.ctx.pollMs);
  }
  if (power === 'Off') {
    d.to('WaitingForPower', 'power On issued; waiting for the host to come up');
    return d.act([{ kind: 'reset', resetType: 'On' }], d.ctx.pollMs);
  }
  // A transition someone else started boots with our override armed: take it as the reset.
  d.to('WaitingForPower', `a power transition is already running (${power}); waiting for it`);
  return d.act([], d.ctx.pollMs);
}

/** A power state on the way down or up (Unknown is not one: some BMCs never report power). */
function wentDown(state: string | undefined): boolean {
  return state === 'Off' || state === 'PoweringOff' || state === 'PoweringOn';
}

/** How we know the host booted after the reset, or undefined while it has not. */
function bootEvidence(d: Draft, obs: BmcObservation, armed: boolean): string | undefined {
  // Without a PowerState (some BMCs omit it) only the consumed override or the settle time tell.
  if (obs.powerState !== 'On' && obs.powerState !== undefined) return undefined;
  if (d.status.appliedBoot?.overrideEnabled === 'Once' && !armed) return 'the one-time override was consumed';
  if (wentDown(d.boot.status?.powerState)) return 'a power cycle was observed';
  if (d.inPhaseMs() >= d.ctx.settleMs) {
    return `no power cycle seen within ${formatMs(d.ctx.settleMs)}, assuming the reset took effect`;
  }
  return undefined;
}

function waitForPower(d: Draft, obs: BmcObservation): Decision {
  const power = obs.powerState ?? 'Unknown';
  const armed = isArmed(obs.override, desiredOverride(d.boot, obs), obs.targetAliases);
  const how = bootEvidence(d, obs, armed);
  d.status.powerState = power;
  if (!how)
    return d.message(`waiting for the host to come back on (PowerState ${power})`).act([], d.ctx.pollMs);
  d.status.bootCount = (d.status.bootCount ?? 0) + 1;
  d.cond(C.Booted, 'True', 'BootedImage', `booted into ${d.boot.spec.image} (${how})`);
  d.to('Running', `the server runs ${d.boot.spec.image}`);
  if (d.boot.spec.pin === false) return d.act([]);
  if (armed) return d.act([], d.ctx.pinPollMs);
  return rearm(d, obs, 'the boot consumed the one-time override');
}

/** Arms the override again; the status (Pinned=True) is written only if that succeeds. */
function rearm(d: Draft, obs: BmcObservation, why: string): Decision {
  const want = desiredOverride(d.boot, obs);
  d.status.rearms = (d.status.rearms ?? 0) + 1;
  d.cond(C.Pinned, 'True', 'Rearmed', `${why}; re-armed ${want.enabled} ${want.target}`);
  d.event(
    'Normal',
    'Rearmed',
    `${why}; re-armed ${want.enabled} ${want.target} so the next reboot comes back into the image`,
  );
  return d.act([{ kind: 'setOverride', request: want }], d.ctx.pinPollMs);
}

/** The pinned image must stay in the virtual CD: a BMC reset or firmware update ejects it. */
function mediaRepair(d: Draft, obs: BmcObservation): BootAction[] {
  if (d.boot.spec.method !== 'VirtualMedia' || !obs.media) return [];
  const image = d.boot.spec.image;
  if (obs.media.inserted && obs.media.image === image) return [];
  const what = obs.media.inserted
    ? `${obs.media.image ?? 'another image'} is in the virtual CD`
    : 'the virtual CD is empty';
  d.cond(C.MediaReady, 'True', 'Reinserted', `${what}; re-inserted ${image}`);
  d.event(
    'Warning',
    'MediaReinserted',
    `${what}; re-inserted ${image} so the next reboot comes back into it`,
  );
  return [{ kind: 'insertMedia', image }];
}

function running(d: Draft, obs: BmcObservation): Decision {
  const repair = mediaRepair(d, obs);
  const decision = runningOverride(d, obs);
  if (repair.length === 0 || decision.kind !== 'act') return decision;
  // Media first: an override armed into an empty CD boots nothing useful.
  return { ...decision, actions: [...repair, ...decision.actions] };
}

function runningOverride(d: Draft, obs: BmcObservation): Decision {
  const before = d.boot.status?.powerState;
  const power = obs.powerState ?? 'Unknown';
  d.status.powerState = power;
  const cameBack = wentDown(before) && power === 'On';
  if (isArmed(obs.override, desiredOverride(d.boot, obs), obs.targetAliases)) {
    // Continuous is not consumed, so a reboot shows only as power coming back.
    if (cameBack && d.status.appliedBoot?.overrideEnabled === 'Continuous') {
      d.status.bootCount = (d.status.bootCount ?? 0) + 1;
    }
    d.cond(
      C.Pinned,
      'True',
      findCondition(d.status.conditions, C.Pinned)?.reason ?? 'Armed',
      pinMessage(obs),
    );
    return d.act([], d.ctx.pinPollMs);
  }
  return runningUnarmed(d, obs, cameBack);
}

/** Running, pinned, and the override does not point at the image (consumed, cleared or changed). */
function runningUnarmed(d: Draft, obs: BmcObservation, cameBack: boolean): Decision {
  const pinned = isTrue(d.boot.status?.conditions, C.Pinned);
  const power = obs.powerState ?? 'Unknown';
  if (cameBack && !pinned) {
    // The host went down and came back while the override was not armed: it may run the
    // production disk now (upstream #938). Arm again and reset back into the image.
    const why = 'the host rebooted while the boot override was not armed';
    d.cond(C.Booted, 'False', 'BootedOutsideImage', why);
    d.event('Warning', 'BootedOutsideImage', `${why}; re-arming and resetting it back into the image`);
    return d.to('SettingOverride', `${why}; booting it back into the image`, 'Warning').act([], 0);
  }
  if (power !== 'On') {
    return rearm(
      d,
      obs,
      `the override was not armed while the host reboots (${power}); re-armed before it comes back`,
    );
  }
  const consumed = obs.override.enabled === 'Disabled' && d.status.appliedBoot?.overrideEnabled === 'Once';
  if (consumed && pinned) {
    d.status.bootCount = (d.status.bootCount ?? 0) + 1;
    return rearm(d, obs, 'a reboot the controller did not start consumed the one-time override');
  }
  if (obs.override.enabled !== 'Disabled') {
    d.event(
      'Warning',
      'OverrideChanged',
      `the boot override was changed to ${describeOverride(obs.override)} by someone else`,
    );
  }
  return rearm(d, obs, `the boot override is ${describeOverride(obs.override)}`);
}

// --- restore, failed, deletion ----------------------------------------------------------------

function restoring(d: Draft, world: BootWorld, obs: BmcObservation): Decision {
  const keep = d.boot.spec.restore === false && !d.boot.metadata.deletionTimestamp;
  const plan = keep ? { actions: [], items: [], notes: [] } : undoPlan(d.boot, world, obs);
  for (const note of plan.notes) d.event('Warning', 'LeftAsIs', note);
  if (plan.actions.length > 0) {
    d.status.notRestored = plan.items.slice(0, 8);
    d.cond(C.Restored, 'False', 'Restoring', plan.items.join('; '));
    return d.message(`restoring: ${plan.items.join('; ')}`).act(plan.actions, 0);
  }
  delete d.status.notRestored;
  d.status.powerState = obs.powerState ?? d.status.powerState;
  d.cond(
    C.OverrideSet,
    'False',
    keep ? 'KeptBySpec' : 'Restored',
    keep ? 'spec.restore is false: the override stays' : 'the previous boot settings are back',
  );
  d.cond(
    C.Restored,
    keep ? 'False' : 'True',
    keep ? 'KeptBySpec' : 'Restored',
    keep ? 'spec.restore is false: nothing was restored' : 'everything the boot changed is undone',
  );
  if (d.boot.spec.pin !== false) d.cond(C.Pinned, 'False', 'Ended', 'the boot ended');
  return d
    .to(
      'Completed',
      keep ? 'ended; changes kept (spec.restore: false)' : 'ended; previous boot settings restored',
    )
    .act([]);
}

function undoLoop(d: Draft, world: BootWorld, onDone: () => Decision): Decision {
  if (!world.bmc) return { kind: 'observe' };
  if (!world.bmc.ok) {
    const items = unconfirmedItems(d.boot, world, `BMC: ${world.bmc.error.code}`);
    if (items.length > 0) d.status.notRestored = items;
    d.cond(C.BMCReady, 'False', 'Unreachable', world.bmc.error.message);
    d.cond(
      C.Restored,
      'False',
      'BMCUnavailable',
      `cannot undo, the BMC does not answer: ${world.bmc.error.message}`,
    );
    return d.act([], d.ctx.retryMs);
  }
  d.cond(C.BMCReady, 'True', 'Reachable', 'the BMC answers');
  const plan = undoPlan(d.boot, world, world.bmc.observation);
  for (const note of plan.notes) d.event('Warning', 'LeftAsIs', note);
  if (plan.actions.length === 0) return onDone();
  d.status.notRestored = plan.items.slice(0, 8);
  d.cond(C.Restored, 'False', 'Undoing', plan.items.join('; '));
  return d.act(plan.actions, 0);
}

function decideFailed(d: Draft, world: BootWorld): Decision {
  if (isTrue(d.boot.status?.conditions, C.Restored) || nothingChanged(d.boot, world)) return d.act([]);
  if (!world.access.ok) {
    d.cond(C.Restored, 'False', world.access.reason, `cannot undo: ${world.access.message}`);
    return d.act([], d.ctx.retryMs);
  }
  return undoLoop(d, world, () => {
    delete d.status.notRestored;
    d.cond(C.OverrideSet, 'False', 'Restored', 'the previous boot settings are back');
    d.cond(C.Restored, 'True', 'Restored', 'everything the boot changed is undone');
    d.event('Normal', 'Restored', 'everything the failed boot changed is undone');
    return d.act([]);
  });
}

function releaseFinalizer(d: Draft, type: 'Normal' | 'Warning', note: string): Decision {
  d.event(type, 'FinalizerReleased', note);
  return { kind: 'act', actions: [], events: d.events, releaseFinalizer: true };
}

/** Deleted: undo whatever is left (in any phase), then let the object go. */
function decideDeletion(d: Draft, world: BootWorld): Decision {
  if (d.boot.metadata.annotations?.[SKIP_RESTORE_ANNOTATION] === 'true') {
    const left = d.boot.status?.notRestored ?? unconfirmedItems(d.boot, world, 'not checked');
    const what = left.join('; ') || 'nothing';
    return releaseFinalizer(
      d,
      'Warning',
      `released without restoring (${SKIP_RESTORE_ANNOTATION}); may remain: ${what}`,
    );
  }
  const ended = d.phase === 'Completed' || d.phase === 'Failed';
  if (nothingChanged(d.boot, world) || (ended && isTrue(d.boot.status?.conditions, C.Restored))) {
    return releaseFinalizer(d, 'Normal', 'nothing left to undo');
  }
  if (!ended) {
    d.to('Restoring', 'deleted: restoring the previous boot settings');
    const timedOut = timeout(d, world);
    if (timedOut) return timedOut;
  }
  if (!world.access.ok) {
    d.cond(C.Restored, 'False', world.access.reason, `cannot undo: ${world.access.message}`);
    return d.act([], d.ctx.retryMs);
  }
  return undoLoop(d, world, () => releaseFinalizer(d, 'Normal', 'the previous boot settings are restored'));
}

// --- action failures ------------------------------------------------------------------------

const ACTION_LABEL: Record<BootAction['kind'], string> = {
  insertMedia: 'inserting the virtual media',
  ejectMedia: 'ejecting the virtual media',
  setOverride: 'setting the boot override',
  restoreOverride: 'restoring the boot override',
  reset: 'resetting the server',
  createSbc: 'creating the ServerBootConfiguration',
  deleteSbc: 'deleting the ServerBootConfiguration',
};

function failedActionCondition(d: Draft, action: BootAction, message: string): void {
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
