// How a boot fails: a phase timing out or a fatal error.
import type { Draft } from './draft.js';
import { formatMs, phaseTimeoutMs } from './draft.js';
import {
  ConditionTypes as C,
  TIMED_PHASES,
  type BootWorld,
  type Decision,
  type ErrorView,
  type ServerBootPhase,
} from './model.js';
import { unconfirmedItems } from './undo.js';

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

export function timeout(d: Draft, world: BootWorld): Decision | undefined {
  const phase = d.phase;
  if (!TIMED_PHASES.includes(phase)) return undefined;
  const limit = phaseTimeoutMs(d.boot, d.ctx);
  if (d.inPhaseMs() < limit) return undefined;
  const last = d.boot.status?.message ? ` (last: ${d.boot.status.message})` : '';
  return fail(d, world, phase, 'PhaseTimeout', `did not finish within ${formatMs(limit)}${last}`);
}

export function bmcDown(d: Draft, world: BootWorld, error: ErrorView): Decision {
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
