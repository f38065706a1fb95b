// Undo: restoring what the boot changed, the failed boot, and deletion.
import { isTrue } from './conditions.js';
import type { Draft } from './draft.js';
import {
  ConditionTypes as C,
  SKIP_RESTORE_ANNOTATION,
  type BmcObservation,
  type BootWorld,
  type Decision,
} from './model.js';
import { nothingChanged, undoPlan, unconfirmedItems } from './undo.js';
import { timeout } from './fail.js';

export function restoring(d: Draft, world: BootWorld, obs: BmcObservation): Decision {
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

export function undoLoop(d: Draft, world: BootWorld, onDone: () => Decision): Decision {
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

export function decideFailed(d: Draft, world: BootWorld): Decision {
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

export function releaseFinalizer(d: Draft, type: 'Normal' | 'Warning', note: string): Decision {
  d.event(type, 'FinalizerReleased', note);
  return { kind: 'act', actions: [], events: d.events, releaseFinalizer: true };
}

/** Deleted: undo whatever is left (in any phase), then let the object go. */
export function decideDeletion(d: Draft, world: BootWorld): Decision {
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
