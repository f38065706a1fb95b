// The forward phases of a boot: media, boot override, reset, power, running.
import { objectKey } from '../../lib/kube/resources.js';
import { MAINTENANCE_GROUP, MAINTENANCE_VERSION } from '../../api/maintenance/v1alpha1/group.js';
import type { ServerBootConfiguration } from '../../api/metal/v1alpha1/serverbootconfiguration.js';
import { findCondition } from '../../contract/conditions.js';
import { isTrue } from './conditions.js';
import type { Draft } from './draft.js';
import { formatMs } from './draft.js';
import {
  ConditionTypes as C,
  SBC_BOOT_LABEL,
  type BmcObservation,
  type BootAction,
  type BootWorld,
  type Decision,
  type ServerBoot,
} from './model.js';
import { desiredOverride, describeOverride, isArmed, overrideStatus } from './override.js';
import { fail } from './fail.js';

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

export function prepareMedia(d: Draft, world: BootWorld, obs: BmcObservation): Decision {
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

export function preparePxe(
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

export function setOverride(d: Draft, obs: BmcObservation): Decision {
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

export function pinMessage(obs: BmcObservation): string {
  return obs.override.enabled === 'Continuous'
    ? `Continuous ${obs.override.target}: every reboot comes back into the image`
    : `Once ${obs.override.target}, re-armed after every boot so the next reboot comes back into the image`;
}

export function resetting(d: Draft, obs: BmcObservation): Decision {
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
export function wentDown(state: string | undefined): boolean {
  return state === 'Off' || state === 'PoweringOff' || state === 'PoweringOn';
}

/** How we know the host booted after the reset, or undefined while it has not. */
export function bootEvidence(d: Draft, obs: BmcObservation, armed: boolean): string | undefined {
  // Without a PowerState (some BMCs omit it) only the consumed override or the settle time tell.
  if (obs.powerState !== 'On' && obs.powerState !== undefined) return undefined;
  if (d.status.appliedBoot?.overrideEnabled === 'Once' && !armed) return 'the one-time override was consumed';
  if (wentDown(d.boot.status?.powerState)) return 'a power cycle was observed';
  if (d.inPhaseMs() >= d.ctx.settleMs) {
    return `no power cycle seen within ${formatMs(d.ctx.settleMs)}, assuming the reset took effect`;
  }
  return undefined;
}

export function waitForPower(d: Draft, obs: BmcObservation): Decision {
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
export function rearm(d: Draft, obs: BmcObservation, why: string): Decision {
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
export function mediaRepair(d: Draft, obs: BmcObservation): BootAction[] {
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

export function running(d: Draft, obs: BmcObservation): Decision {
  const repair = mediaRepair(d, obs);
  const decision = runningOverride(d, obs);
  if (repair.length === 0 || decision.kind !== 'act') return decision;
  // Media first: an override armed into an empty CD boots nothing useful.
  return { ...decision, actions: [...repair, ...decision.actions] };
}

export function runningOverride(d: Draft, obs: BmcObservation): Decision {
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
export function runningUnarmed(d: Draft, obs: BmcObservation, cameBack: boolean): Decision {
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
