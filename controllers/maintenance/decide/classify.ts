// Who holds the server: the maintenances of one server sorted into active, keeper, releasers and
// queued, with the timeouts that fail them.
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerBoot } from '../../../api/maintenance/v1alpha1/serverboot.js';
import type { Policy } from '../../../policies/schema.js';
import { durationMs } from '../../../lib/policy/durations.js';
import { findCondition } from '../../../contract/conditions.js';
import { MaintenanceConditions as C } from '../../../contract/names.js';
import { earliest, parseTime } from '../../../contract/time.js';
import { compareQueue, isDeleting, stateOf, uidOf, waitingState } from '../../../contract/lifecycle.js';
import { HOLDING_FAILURES, type PlannedEvent, type ServerInput, type ServerPlan, ours } from './model.js';
import { parkHeldBy } from './park.js';

export interface Failure {
  reason: string;
  message: string;
}

export type ReleaseStage = 'boot' | 'park' | 'done';

export interface Sets {
  sorted: ServerMaintenance[];
  failures: Map<string, Failure>;
  active: ServerMaintenance | undefined;
  keeper: ServerMaintenance | undefined;
  /** Deleted, or Failed and undoing, in queue order, with the step each is at. */
  releasers: { m: ServerMaintenance; stage: ReleaseStage }[];
  queued: ServerMaintenance[];
}

export function maxDurationMs(m: ServerMaintenance, policy: Policy): number {
  return durationMs(m.spec.maxDuration ?? policy.timeouts.inMaintenance);
}

/** When a maintenance entered its current state, as far as its status tells. */
export function enteredStateAt(m: ServerMaintenance): number | undefined {
  const state = stateOf(m);
  if (state === 'InMaintenance') return parseTime(m.status?.startedAt);
  if (state === 'Approved')
    return parseTime(m.status?.approval?.approvedAt) ?? parseTime(m.status?.announcedAt);
  if (state === 'Announced') return parseTime(m.status?.announcedAt);
  if (state === 'Failed' || state === 'Completed') return parseTime(m.status?.completedAt);
  return parseTime(m.metadata.creationTimestamp);
}

export function bootFailure(boot: ServerBoot | undefined): Failure | undefined {
  if (boot?.status?.phase !== 'Failed') return undefined;
  const left = (boot.status as { notRestored?: unknown[] }).notRestored ?? [];
  const why = boot.status.message ?? 'the ServerBoot failed';
  return left.length > 0
    ? {
        reason: 'BootNotRestored',
        message: `${why}; its boot settings could not be restored, so the server stays parked and tainted for a person`,
      }
    : { reason: 'BootFailed', message: why };
}

/** The deadline of the wait an InMaintenance maintenance is in, and the failure when it passes. */
export function activeDeadline(
  m: ServerMaintenance,
  input: ServerInput,
): { at: number; failure: Failure } | undefined {
  const { policy, options, now } = input;
  const started = parseTime(m.status?.startedAt);
  const maxAt = started !== undefined ? started + maxDurationMs(m, policy) : undefined;
  const parked = findCondition(m.status?.conditions, C.ServerParked);
  if (options.parkMode === 'annotation' && parked?.status === 'False' && parked.reason === 'ParkRequested') {
    const at = (parseTime(parked.lastTransitionTime) ?? now.getTime()) + durationMs(policy.timeouts.park);
    if (maxAt === undefined || at < maxAt)
      return {
        at,
        failure: {
          reason: 'ParkTimeout',
          message: `the server was not parked within ${policy.timeouts.park} (policy timeouts.park)`,
        },
      };
  }
  if (maxAt === undefined) return undefined;
  const limit = m.spec.maxDuration ?? policy.timeouts.inMaintenance;
  const source = m.spec.maxDuration ? 'spec.maxDuration' : 'policy timeouts.inMaintenance';
  return {
    at: maxAt,
    failure: { reason: 'MaxDurationExceeded', message: `InMaintenance longer than ${limit} (${source})` },
  };
}

/** The deadline of a waiting maintenance: approval, then admission, each policy timeouts.approval. */
export function waitingDeadline(
  m: ServerMaintenance,
  policy: Policy,
): { at: number; failure: Failure } | undefined {
  const approved = waitingState(m) === 'Approved';
  const since = approved
    ? (parseTime(m.status?.approval?.approvedAt) ?? parseTime(m.metadata.creationTimestamp))
    : (parseTime(m.status?.announcedAt) ?? parseTime(m.metadata.creationTimestamp));
  if (since === undefined) return undefined;
  const limit = policy.timeouts.approval;
  return {
    at: since + durationMs(limit),
    failure: approved
      ? {
          reason: 'AdmissionTimeout',
          message: `approved but not admitted into InMaintenance within ${limit} (policy timeouts.approval)`,
        }
      : { reason: 'ApprovalTimeout', message: `not approved within ${limit} (policy timeouts.approval)` },
  };
}

export function failureOf(m: ServerMaintenance, input: ServerInput, timers: number[]): Failure | undefined {
  const state = stateOf(m);
  if (state === 'Failed' || state === 'Completed') return undefined;
  if (state === 'InMaintenance') {
    if (input.serverGone)
      return { reason: 'ServerDeleted', message: `server ${input.serverName} was deleted` };
    const boot = bootFailure(input.boots.get(uidOf(m)));
    if (boot) return boot;
  }
  const wait = state === 'InMaintenance' ? activeDeadline(m, input) : waitingDeadline(m, input.policy);
  if (!wait) return undefined;
  if (input.now.getTime() >= wait.at) return wait.failure;
  timers.push(wait.at - input.now.getTime());
  return undefined;
}

export function failedReason(m: ServerMaintenance, failures: Map<string, Failure>): string | undefined {
  return (
    failures.get(uidOf(m))?.reason ??
    (stateOf(m) === 'Failed' ? findCondition(m.status?.conditions, C.Failed)?.reason : undefined)
  );
}

/** The undo step a deleted or failed maintenance is at (see the header). Waits are bounded by policy. */
export function releaseStage(
  m: ServerMaintenance,
  input: ServerInput,
  timers: number[],
  events: PlannedEvent[],
): ReleaseStage {
  const now = input.now.getTime();
  const endedAt = parseTime(m.metadata.deletionTimestamp) ?? parseTime(m.status?.completedAt) ?? now;
  const boot = input.boots.get(uidOf(m));
  if (boot) {
    const until = endedAt + durationMs(input.policy.timeouts.bootPhase);
    if (now < until) {
      timers.push(until - now);
      return 'boot';
    }
    events.push({
      m,
      type: 'Warning',
      reason: 'BootRestoreTimeout',
      action: 'Cleanup',
      note: `ServerBoot ${boot.metadata.name ?? ''} still restoring after ${input.policy.timeouts.bootPhase}; going on without it`,
    });
  }
  if (parkHeldBy(input.server, uidOf(m))) {
    const until = endedAt + durationMs(input.policy.timeouts.park);
    if (now < until) {
      timers.push(until - now);
      return 'park';
    }
    events.push({
      m,
      type: 'Warning',
      reason: 'UnparkTimeout',
      action: 'Cleanup',
      note: `metal-operator did not unpark the server within ${input.policy.timeouts.park}; the unpark request stays`,
    });
  }
  return 'done';
}

export function classify(input: ServerInput, plan: ServerPlan): Sets {
  const sorted = [...input.maintenances].sort(compareQueue);
  const failures = new Map<string, Failure>();
  const timers: number[] = [];
  for (const m of sorted) {
    if (isDeleting(m)) continue;
    const failure = failureOf(m, input, timers);
    if (failure) failures.set(uidOf(m), failure);
  }
  const live = sorted.filter((m) => !isDeleting(m));
  const isFailed = (m: ServerMaintenance) => stateOf(m) === 'Failed' || failures.has(uidOf(m));
  const holding = (m: ServerMaintenance) => HOLDING_FAILURES.has(failedReason(m, failures) ?? '');
  // Two InMaintenance at once is what the webhook and this controller prevent; should a legacy object
  // bring it about anyway, the earliest started holds the server and the others wait it out.
  const running = live
    .filter((m) => stateOf(m) === 'InMaintenance' && !failures.has(uidOf(m)))
    .sort((a, b) => (parseTime(a.status?.startedAt) ?? 0) - (parseTime(b.status?.startedAt) ?? 0));
  const releasing = sorted.filter(
    (m) => (isDeleting(m) && ours(m)) || (!isDeleting(m) && isFailed(m) && !holding(m)),
  );
  const releasers = releasing.map((m) => ({ m, stage: releaseStage(m, input, timers, plan.events) }));
  plan.requeueAfterMs = earliest(plan.requeueAfterMs, ...timers);
  return {
    sorted,
    failures,
    active: running[0],
    keeper: live.find((m) => isFailed(m) && holding(m)),
    releasers,
    queued: live.filter((m) => !isFailed(m) && !['InMaintenance', 'Completed'].includes(stateOf(m))),
  };
}
