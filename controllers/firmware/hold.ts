// A child held back by its Set (annotation HOLD_ANNOTATION, written only by the Set's reconciler):
// while it has not passed its maintenance gate it requests nothing, withdraws maintenances it
// requested and waits in Pending; a Failed child is not retried. Past the gate (it touches the BMC)
// the hold is ignored: the child finishes, so nothing is half-applied. See docs/firmware.md.
import type { Draft } from './draft.js';
import { releaseAll } from './maintenance.js';
import { ConditionTypes as C, type Decision, type FirmwareWorld } from './model.js';
import { HOLD_ANNOTATION } from './sets/model.js';

export const HELD_REASON = 'HeldBySet';
const GATE_PHASES: ReadonlySet<string> = new Set(['RequestingMaintenance', 'WaitingForMaintenance']);

/**
 * Past its maintenance gate: InProgress in a phase that may touch the BMC. Such a child ignores a
 * hold and finishes; the Set counts it as started (sets/reconciler.ts). One definition for both.
 */
export function pastGate(state: string | undefined, phase: string | undefined): boolean {
  return state === 'InProgress' && phase !== undefined && !GATE_PHASES.has(phase);
}

/** Lifted hold, but the child settled as held and crashed before releasing: release first, then start afresh. */
function releaseWithdrawn(d: Draft, world: FirmwareWorld): Decision | undefined {
  const progressing = d.status.conditions?.find((c) => c.type === C.Progressing);
  if (d.status.state === 'Pending' && progressing?.reason === HELD_REASON && world.maintenances.size > 0)
    return d.act(releaseAll(world), 0);
  return undefined;
}

/** Whether a hold stops this child: not past its gate, and not done (unless its spec changed since). */
function holdApplies(d: Draft): boolean {
  const state = d.status.state;
  // A changed spec would start a new attempt: that waits for the Set like a first one.
  const changed = (d.obj.metadata.generation ?? 0) > (d.status.observedGeneration ?? 0);
  if ((state === 'Completed' || state === 'Applied') && !changed) return false;
  return !pastGate(state, d.phase);
}

/** The decision of a held child, or a release of what a former hold withdrew; undefined otherwise. */
export function decideHeld(d: Draft, world: FirmwareWorld): Decision | undefined {
  const hold = d.obj.metadata.annotations?.[HOLD_ANNOTATION];
  if (!hold) return releaseWithdrawn(d, world);
  const state = d.status.state;
  if (!holdApplies(d)) return undefined;
  const release = releaseAll(world);
  if (state === 'Failed') return d.act(release);
  const message = `held by its Set (${hold}): no maintenance requested`;
  if (state === 'InProgress') {
    // Settle first, release next: a crash in between cannot read as a lost maintenance.
    d.status.state = 'Pending';
    d.cond(C.Progressing, 'False', HELD_REASON, message);
    d.event('Normal', HELD_REASON, `${message}; withdrawing its maintenances`);
    return d.act([], 0);
  }
  d.status.state = 'Pending';
  d.cond(C.Progressing, 'False', HELD_REASON, message);
  return d.act(release, release.length > 0 ? 0 : undefined);
}
