// Undoing a boot: from one observation of the BMC, what still differs from the settings saved
// before the boot, and the actions that put it back. Used when a boot ends, fails, or is deleted.
// Only our own changes are undone: an override someone else set after ours is left alone.
import { asPhase } from './draft.js';
import { objectKey } from '../../lib/kube/resources.js';
import { desiredOverride, describeOverride, isArmed, previousOverride, sameOverride } from './override.js';
import type { BmcObservation, BootAction, BootWorld, ServerBoot, ServerBootPhase } from './model.js';

export interface UndoPlan {
  actions: BootAction[];
  /** One line per change not yet undone, for status.notRestored and the Restored condition. */
  items: string[];
  /** Changes left alone because they are not ours. */
  notes: string[];
}

function sbcItem(world: BootWorld): string | undefined {
  return world.sbc ? `ServerBootConfiguration ${objectKey(world.sbc.metadata)} still exists` : undefined;
}

function overrideUndo(boot: ServerBoot, obs: BmcObservation, plan: UndoPlan): void {
  const prev = previousOverride(boot.status);
  if (!prev || sameOverride(obs.override, prev)) return;
  const ours = isArmed(obs.override, desiredOverride(boot, obs), obs.targetAliases);
  // A consumed override reads Disabled: ours, used up. Anything else was set by someone else.
  if (!ours && obs.override.enabled !== 'Disabled') {
    plan.notes.push(
      `boot override is ${describeOverride(obs.override)}, set by someone else after this boot; left as is`,
    );
    return;
  }
  plan.actions.push({ kind: 'restoreOverride', previous: prev });
  plan.items.push(`boot override is ${describeOverride(obs.override)}, was ${describeOverride(prev)}`);
}

function mediaUndo(boot: ServerBoot, obs: BmcObservation, plan: UndoPlan): void {
  const media = obs.media;
  if (boot.spec.method !== 'VirtualMedia' || !media || !boot.status?.previousBoot) return;
  const before = boot.status.previousBoot.mediaImage;
  const oursIn = media.inserted && media.image === boot.spec.image;
  if (oursIn) {
    // insertMedia swaps images: it ejects ours before putting the old one back.
    plan.actions.push(
      before ? { kind: 'insertMedia', image: before } : { kind: 'ejectMedia', image: boot.spec.image },
    );
    plan.items.push(`virtual media ${boot.spec.image} is inserted${before ? `, was ${before}` : ''}`);
  } else if (before && !media.inserted) {
    plan.actions.push({ kind: 'insertMedia', image: before });
    plan.items.push(`virtual media ${before} (there before the boot) is not inserted`);
  }
}

/** What to do so the machine is as it was before the boot. Empty: nothing left to undo. */
export function undoPlan(boot: ServerBoot, world: BootWorld, obs: BmcObservation): UndoPlan {
  const plan: UndoPlan = { actions: [], items: [], notes: [] };
  overrideUndo(boot, obs, plan);
  mediaUndo(boot, obs, plan);
  const sbc = sbcItem(world);
  if (sbc && world.sbc) {
    plan.actions.push({
      kind: 'deleteSbc',
      name: world.sbc.metadata.name ?? '',
      namespace: world.sbc.metadata.namespace ?? '',
    });
    plan.items.push(sbc);
  }
  return plan;
}

const OVERRIDE_TOUCHED: readonly ServerBootPhase[] = [
  'SettingOverride',
  'Resetting',
  'WaitingForPower',
  'Running',
  'Restoring',
];

/**
 * What may still be changed, judged from the status alone (the BMC could not be asked): every
 * change the boot got far enough to make, marked as unconfirmed.
 */
export function unconfirmedItems(boot: ServerBoot, world: BootWorld, why: string): string[] {
  const status = boot.status;
  const items: string[] = [];
  const prev = previousOverride(status);
  const reached = asPhase(status?.phase === 'Failed' ? status.failedPhase : status?.phase);
  if (prev && (status?.appliedBoot || OVERRIDE_TOUCHED.includes(reached))) {
    items.push(`boot override not confirmed restored to ${describeOverride(prev)} (${why})`);
  }
  if (prev && boot.spec.method === 'VirtualMedia') {
    items.push(`virtual media ${boot.spec.image} not confirmed ejected (${why})`);
  }
  const sbc = sbcItem(world);
  if (sbc) items.push(sbc);
  return items.slice(0, 8);
}

/** True when the boot cannot have changed anything: no settings saved, no boot configuration. */
export function nothingChanged(boot: ServerBoot, world: BootWorld): boolean {
  return !boot.status?.previousBoot && !world.sbc;
}
