// What every firmware kind shares: starting an attempt, the maintenance gate, phase timeouts,
// failing (release the maintenances, say why), automatic and manual retries with backoff.
import { createHash } from 'node:crypto';
import type { Draft } from './draft.js';
import { formatMs, inPhaseMs } from './draft.js';
import { evaluateGate, maintenanceName, releaseAll, refsOf } from './maintenance.js';
import { discardBeforeRelease } from './settings.js';
import {
  ATTEMPT_ANNOTATION,
  ConditionTypes as C,
  OPERATION_ANNOTATION,
  OPERATION_RETRY,
  TARGET,
  type Decision,
  type FirmwareAction,
  type FirmwareWorld,
  type Phase,
} from './model.js';

/** Failures no retry can fix: the request itself is refused. */
export const FATAL_REASONS = new Set(['DowngradeRefused', 'AttributeRefused', 'Unsupported']);

/** The attempt the maintenances belong to, from the object's annotation. */
export function attemptOf(d: Draft): number {
  const n = Number.parseInt(d.obj.metadata.annotations?.[ATTEMPT_ANNOTATION] ?? '', 10);
  return Number.isFinite(n) && n >= 0 ? n : 0;
}

export function nextAttempt(d: Draft): number {
  return d.obj.metadata.annotations?.[ATTEMPT_ANNOTATION] === undefined ? 0 : attemptOf(d) + 1;
}

/**
 * Starts an attempt: the attempt number and the maintenance references go into the object first
 * (the freeze rule reads the references), the maintenances are created in the next step.
 */
export function startAttempt(d: Draft, world: FirmwareWorld, why: string): Decision {
  const attempt = nextAttempt(d);
  const name = d.obj.metadata.name ?? '';
  const refs =
    world.runHeld?.refs ??
    world.servers.map((s) => ({
      namespace: d.ctx.namespace,
      name: maintenanceName(d.kind, name, d.obj.metadata.uid ?? '', s.metadata.name ?? '', attempt),
    }));
  const actions: FirmwareAction[] = [{ kind: 'setRefs', attempt, refs }];
  if (d.obj.metadata.annotations?.[OPERATION_ANNOTATION] === OPERATION_RETRY)
    actions.push({ kind: 'clearOperation' });
  d.drop(C.Failed);
  d.drop(C.StagedDiscarded);
  d.status.upgradeTask = undefined;
  // A settings attempt proves each item again: the last attempt's records (flowState, appliedETags)
  // say what was true then, and an item still marked Applied would be skipped without a write (a
  // drift repair after a factory reset settled Applied, drifted again, and looped).
  d.status.flowState = undefined;
  d.status.appliedETags = undefined;
  d.enter('RequestingMaintenance', why);
  d.event('Normal', 'AttemptStarted', `attempt ${attempt + 1}: ${why}`);
  return d.act(actions, 0);
}

/** Timeout of each phase; undefined: the phase waits on the maintenance, whose own timeouts apply. */
export function phaseTimeoutMs(d: Draft, phase: Phase): number | undefined {
  const t = d.ctx.policy.timeouts;
  switch (phase) {
    case 'Issuing':
    case 'Staging':
      return t.issue;
    case 'Flashing':
      return t.task;
    case 'Rebooting':
      return t.reboot;
    case 'Verifying':
      return t.verify;
    default:
      return undefined;
  }
}

/** The requeue delay: the poll interval, but never past the phase deadline. */
export function poll(d: Draft, phase: Phase): number {
  const limit = phaseTimeoutMs(d, phase);
  if (limit === undefined) return d.ctx.pollMs;
  return Math.max(0, Math.min(d.ctx.pollMs, limit - inPhaseMs(d.status, d.ctx.now)));
}

/** Fails the object: maintenances released, a condition naming the phase and the last answer. */
export function fail(d: Draft, world: FirmwareWorld, reason: string, message: string): Decision {
  const phase = d.phase ?? 'Pending';
  const last = d.status.conditions?.find((c) => c.type === C.Progressing)?.message;
  const text = `${phase}: ${message}${last && last !== message ? `; last BMC answer: ${last}` : ''}`;
  d.settle('Failed', text).cond(C.Failed, 'True', reason, text);
  d.event('Warning', reason, text);
  // Settled first, released next (decideFailed): a crash in between cannot read as a lost maintenance.
  return d.act([], world.maintenances.size > 0 && !world.runHeld ? 0 : retryDelayMs(d, reason, world));
}

export function maxAttempts(d: Draft): number {
  return d.obj.spec.retryPolicy?.maxAttempts ?? d.ctx.policy.defaultMaxAttempts;
}

/** Backoff before the next automatic retry; undefined when none is left. */
export function retryDelayMs(d: Draft, reason: string, world: FirmwareWorld): number | undefined {
  // A run's child does not retry by itself: its maintenance may be gone, and the run ends the lane.
  if (world.runHeld || FATAL_REASONS.has(reason) || d.attempt >= maxAttempts(d)) return undefined;
  const { retryBackoffMs, retryBackoffMaxMs } = d.ctx.policy;
  return Math.min(retryBackoffMaxMs, retryBackoffMs * 2 ** d.attempt);
}

/** A Failed object: released maintenances stay released; retried by hand or after the backoff. */
export function decideFailed(d: Draft, world: FirmwareWorld): Decision {
  const release = releaseAll(world);
  const discard = discardBeforeRelease(d, world, release);
  if (discard) return discard;
  if (d.obj.metadata.annotations?.[OPERATION_ANNOTATION] === OPERATION_RETRY) {
    if (release.length > 0) return d.act(release, 0);
    d.status.failedAttempts = d.attempt + 1;
    return startAttempt(d, world, 'retry requested by the operation annotation');
  }
  const failed = d.status.conditions?.find((c) => c.type === C.Failed);
  const delay = retryDelayMs(d, failed?.reason ?? '', world);
  if (delay === undefined) return d.act(release);
  const since = failed ? Date.parse(failed.lastTransitionTime) : NaN;
  const left = Number.isNaN(since) ? 0 : since + delay - d.ctx.now.getTime();
  if (left > 0 || release.length > 0) return d.act(release, Math.max(left, 0));
  d.status.failedAttempts = d.attempt + 1;
  return startAttempt(
    d,
    world,
    `automatic retry ${d.attempt} of ${maxAttempts(d)} after ${failed?.reason ?? 'a failure'}`,
  );
}

/** Timeout check of the current phase; a Decision when it is over. */
export function timedOut(d: Draft, world: FirmwareWorld): Decision | undefined {
  const phase = d.phase;
  if (!phase) return undefined;
  const limit = phaseTimeoutMs(d, phase);
  if (limit === undefined || inPhaseMs(d.status, d.ctx.now) < limit) return undefined;
  return fail(d, world, 'PhaseTimeout', `no result within ${formatMs(limit)}`);
}

/**
 * The maintenance gate of an InProgress object. Returns a Decision while the object may not touch
 * the BMC, undefined once every maintenance is InMaintenance.
 */
export function gate(d: Draft, world: FirmwareWorld): Decision | undefined {
  const phase = d.phase ?? 'RequestingMaintenance';
  const requested = phase !== 'RequestingMaintenance';
  const g = evaluateGate(d.kind, d.obj, world, attemptOf(d), d.ctx, requested);
  switch (g.kind) {
    case 'lost':
      return fail(d, world, 'MaintenanceLost', g.message);
    case 'request': {
      const all = [...world.maintenances.values(), ...g.missing];
      d.cond(
        C.ServerMaintenanceCreated,
        'True',
        'Created',
        `requested ${refsOf(all)
          .map((r) => r.name)
          .join(', ')}`,
      );
      d.enter('WaitingForMaintenance', `waiting for ${all.length} maintenance(s) to be InMaintenance`);
      return d.act(
        g.missing.map((m) => ({ kind: 'createMaintenance' as const, maintenance: m })),
        d.ctx.pollMs,
      );
    }
    case 'wait': {
      d.cond(C.ServerMaintenanceWaiting, 'True', 'ServerMaintenanceWaitingOnApproval', g.message);
      if (phase !== 'WaitingForMaintenance') d.enter('WaitingForMaintenance', g.message);
      else d.cond(C.Progressing, 'True', phase, g.message);
      // All or none: a BMC whose servers are never all admitted holds grants; release them.
      if (
        TARGET[d.kind] === 'BMC' &&
        g.admitted > 0 &&
        inPhaseMs(d.status, d.ctx.now) >= d.ctx.policy.timeouts.admission
      )
        return fail(
          d,
          world,
          'BudgetTooSmall',
          `only ${g.message} after ${formatMs(d.ctx.policy.timeouts.admission)}`,
        );
      return d.act([], TARGET[d.kind] === 'BMC' && g.admitted > 0 ? d.ctx.pollMs : undefined);
    }
    case 'open':
      if (d.status.conditions?.some((c) => c.type === C.ServerMaintenanceWaiting && c.status === 'True'))
        d.cond(
          C.ServerMaintenanceWaiting,
          'False',
          'ServerMaintenanceApproval',
          'every maintenance is InMaintenance',
        );
      return undefined;
  }
}

/** SHA-256 of a value as recorded in status (never the value itself: it may be secret). */
export function valueHash(value: string): string {
  return `sha256:${createHash('sha256').update(value).digest('hex')}`;
}
