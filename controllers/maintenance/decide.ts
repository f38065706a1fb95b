// The maintenance controller's decision for one server: a pure function of (the server, its
// maintenances, their ServerBoots, the budget ledgers, policy, now) to a plan of writes. The
// reconciler (reconciler.ts) executes the plan; everything that can go wrong in a maintenance
// lifecycle is decided here and unit-tested without I/O.
//
// The unit of work is the server, not the maintenance: one holder per server, the queue order, the
// taint, the park request and Server.status.maintenance are all functions of the set of maintenances
// of one server, so two maintenances of one server are never decided apart (upstream #775).
//
// Who holds the server, in this order:
//   active    InMaintenance and running;
//   keeper    Failed in a way that left the machine in an unknown state (a boot it could not restore):
//             it stays parked and tainted until a person deletes the maintenance;
//   releaser  deleted (or Failed) and still undoing, one step at a time: its ServerBoot is deleted and
//             gone (restored), then the unpark is confirmed, then the taint goes to the next maintenance
//             or away, then the finalizer (the object goes), then its grants are released.
// Without a holder, the first approved maintenance in queue order is tried (the candidate).
import type { Condition } from '../../api/schema/common.js';
import type { Server, ServerMaintenanceStatus as ServerProjection } from '../../api/metal/v1alpha1/server.js';
import type {
  BudgetRef,
  MaintenancePhase,
  ServerMaintenance,
} from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerBoot } from '../../api/maintenance/v1alpha1/serverboot.js';
import type { Policy } from '../../policies/schema.js';
import { durationMs } from '../../lib/policy/durations.js';
import { isNoBind } from '../../contract/taints.js';
import { serverBootFromMaintenance } from '../../contract/boot.js';
import { findCondition, makeCondition, type ConditionInput } from '../../contract/conditions.js';
import {
  LEGACY_MMO_FINALIZER,
  MAINTENANCE_FINALIZER,
  MaintenanceConditions as C,
  OPERATION_ANNOTATION,
  PARKED_ANNOTATION,
  PARKED_BY_ANNOTATION,
} from '../../contract/names.js';
import { earliest, parseTime, rfc3339 } from '../../contract/time.js';
import { compact } from '../shared/compact.js';
import { canonicalJSON } from '../shared/canonical.js';
import { refKey } from '../../contract/budgets.js';
import { compareQueue, isDeleting, nameOf, stateOf, uidOf, waitingState } from '../../contract/lifecycle.js';
import { approvalRequired } from '../../contract/approval.js';

export type ParkMode = 'annotation' | 'off';

export interface DecideOptions {
  parkMode: ParkMode;
  taintKey: string;
}

/** A grant of this maintenance in one budget's ledger, as the cache shows it. */
export interface GrantHolding {
  ref: BudgetRef;
  grantedAt: string;
}

export interface ServerInput {
  serverName: string;
  server: Server | undefined;
  /** A fresh read confirmed the server is gone (not just missing from the cache). */
  serverGone: boolean;
  maintenances: readonly ServerMaintenance[];
  /** maintenance uid -> its budget grants. */
  grants: ReadonlyMap<string, readonly GrantHolding[]>;
  /** maintenance uid -> the ServerBoot made from its spec.boot. */
  boots: ReadonlyMap<string, ServerBoot>;
  policy: Policy;
  now: Date;
  options: DecideOptions;
  /** uid -> epoch ms before which the InMaintenance transition is not tried again (the webhook's hint). */
  backoff: ReadonlyMap<string, number>;
}

/** The ServerMaintenance status fields the maintenance controller owns (server-side apply). */
export interface OwnedStatus {
  state: MaintenancePhase;
  observedGeneration?: number;
  queuePosition?: number;
  startedAt?: string;
  completedAt?: string;
  message?: string;
  grant?: { grantedAt: string; budgets?: BudgetRef[] };
  conditions: Condition[];
}

export const OWNED_CONDITIONS = [C.Admitted, C.ServerParked, C.Ready, C.BootRequested, C.Failed] as const;

export interface PlannedEvent {
  m: ServerMaintenance;
  type: 'Normal' | 'Warning';
  reason: string;
  action: string;
  note: string;
}

/** Annotation changes for the park request; null removes. Sent as one merge patch. */
export interface ParkPatch {
  [OPERATION_ANNOTATION]?: 'park' | 'unpark';
  [PARKED_BY_ANNOTATION]?: string | null;
}

export interface StatusWrite {
  m: ServerMaintenance;
  status: OwnedStatus;
}

export interface Attempt extends StatusWrite {
  /** What to write instead when the webhook denies it (the waiting status; Admitted gets the reason). */
  waiting: OwnedStatus;
  /** The state it leaves and when it entered it, for time-in-state metrics. */
  from: MaintenancePhase;
  enteredAt?: number;
}

export interface Transition {
  m: ServerMaintenance;
  from: MaintenancePhase;
  to: MaintenancePhase;
  /** When `from` was entered (epoch ms), for time-in-state metrics. */
  enteredAt?: number;
  reason?: string;
}

export interface ServerPlan {
  addFinalizer: ServerMaintenance[];
  /** The taint to hold: the holder's uid as value, or undefined to remove it. Written as a CAS. */
  taint?: { value: string | undefined };
  park?: ParkPatch;
  projection?: ServerProjection;
  statuses: StatusWrite[];
  releaseGrants: { m: ServerMaintenance; refs: BudgetRef[] }[];
  /** `Completed` of finished holders, written after their undo and before their grants are released. */
  completions: StatusWrite[];
  createBoots: ServerBoot[];
  deleteBoots: ServerBoot[];
  /** Deleting maintenances whose undo is complete once the writes above have succeeded. */
  removeFinalizer: ServerMaintenance[];
  /** The InMaintenance attempt (the status write the webhook admits or denies). */
  attempt?: Attempt;
  events: PlannedEvent[];
  transitions: Transition[];
  requeueAfterMs?: number;
}

export function emptyPlan(): ServerPlan {
  return {
    addFinalizer: [],
    statuses: [],
    releaseGrants: [],
    completions: [],
    createBoots: [],
    deleteBoots: [],
    removeFinalizer: [],
    events: [],
    transitions: [],
  };
}

const ours = (m: ServerMaintenance) => {
  const f = m.metadata.finalizers ?? [];
  return f.includes(MAINTENANCE_FINALIZER) || f.includes(LEGACY_MMO_FINALIZER);
};

/** Whether finalizers other than ours keep the object once we remove ours. */
const outlivesUs = (m: ServerMaintenance) =>
  (m.metadata.finalizers ?? []).some((f) => f !== MAINTENANCE_FINALIZER && f !== LEGACY_MMO_FINALIZER);

/**
 * How long a new maintenance goes without a status of ours while the approval controller has not
 * answered: Pending/AwaitingApproval would be a write that the approval, moments later, makes stale.
 */
export const FIRST_STATUS_GRACE_MS = 10_000;

/** Failure reasons after which the server stays parked and tainted for a person. */
const HOLDING_FAILURES = new Set(['BootNotRestored']);

// ---------------------------------------------------------------- status building

export function ownedStatusOf(m: ServerMaintenance): OwnedStatus {
  const s = m.status ?? {};
  return {
    state: stateOf(m),
    ...(s.observedGeneration !== undefined ? { observedGeneration: s.observedGeneration } : {}),
    ...(s.queuePosition !== undefined ? { queuePosition: s.queuePosition } : {}),
    ...(s.startedAt ? { startedAt: s.startedAt } : {}),
    ...(s.completedAt ? { completedAt: s.completedAt } : {}),
    ...(s.message ? { message: s.message } : {}),
    ...(s.grant ? { grant: s.grant } : {}),
    conditions: OWNED_CONDITIONS.flatMap((t) => findCondition(s.conditions, t) ?? []),
  };
}

function canonical(s: OwnedStatus): string {
  return canonicalJSON({ ...s, conditions: [...s.conditions].sort((a, b) => a.type.localeCompare(b.type)) });
}

/** Whether writing `next` would change anything (a status never written: always). */
export function statusChanged(m: ServerMaintenance, next: OwnedStatus): boolean {
  if (!m.status?.state) return true;
  return canonical(ownedStatusOf(m)) !== canonical(next);
}

class StatusBuilder {
  readonly #m: ServerMaintenance;
  readonly #now: Date;
  readonly #conditions = new Map<string, Condition>();
  constructor(m: ServerMaintenance, now: Date) {
    this.#m = m;
    this.#now = now;
  }
  set(input: ConditionInput): this {
    this.#conditions.set(
      input.type,
      makeCondition(this.#m.status?.conditions, input, this.#now, this.#m.metadata.generation),
    );
    return this;
  }
  /** Keeps existing conditions as they are (e.g. the last denial while backing off). */
  keep(...types: string[]): this {
    for (const type of types) {
      const c = findCondition(this.#m.status?.conditions, type);
      if (c) this.#conditions.set(type, c);
    }
    return this;
  }
  build(fields: Omit<OwnedStatus, 'conditions' | 'observedGeneration'>): OwnedStatus {
    const generation = this.#m.metadata.generation;
    return {
      ...fields,
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
      conditions: OWNED_CONDITIONS.flatMap((t) => this.#conditions.get(t) ?? []),
    };
  }
}

// ---------------------------------------------------------------- the server's park and taint

interface ParkView {
  patch?: ParkPatch;
  parked: boolean;
  /** Parked by somebody else before the maintenance: we leave it parked afterwards. */
  alreadyParked: boolean;
}

export function isParked(server: Server): boolean {
  return server.metadata.annotations?.[PARKED_ANNOTATION] === 'true' || server.status?.state === 'Parked';
}

/**
 * The park request for the server. We park through upstream's `operation: park` and record which
 * maintenance asked (`parked-by`), so we unpark only what we parked. parked-by goes only once
 * metal-operator has answered the unpark.
 */
export function planPark(server: Server, active: ServerMaintenance | undefined, mode: ParkMode): ParkView {
  const a = server.metadata.annotations ?? {};
  const op = a[OPERATION_ANNOTATION];
  const by = a[PARKED_BY_ANNOTATION];
  const parked = isParked(server);
  if (active && mode === 'annotation') {
    if (!by && parked) return { parked: true, alreadyParked: true };
    const patch: ParkPatch = {};
    if (by !== uidOf(active)) patch[PARKED_BY_ANNOTATION] = uidOf(active);
    if (!parked && op !== 'park') patch[OPERATION_ANNOTATION] = 'park';
    return { ...(Object.keys(patch).length > 0 ? { patch } : {}), parked, alreadyParked: false };
  }
  if (!by) return { parked, alreadyParked: false };
  // We parked it for a maintenance that no longer holds the server: unpark, then forget.
  if (parked || op === 'park')
    return op === 'unpark'
      ? { parked, alreadyParked: false }
      : { patch: { [OPERATION_ANNOTATION]: 'unpark' }, parked, alreadyParked: false };
  if (op === 'unpark') return { parked, alreadyParked: false };
  return { patch: { [PARKED_BY_ANNOTATION]: null }, parked, alreadyParked: false };
}

/** Whether our park of the server for `uid` is still in place or being undone. */
function parkHeldBy(server: Server | undefined, uid: string): boolean {
  if (!server) return false;
  const a = server.metadata.annotations ?? {};
  if (a[PARKED_BY_ANNOTATION] !== uid) return false;
  return isParked(server) || a[OPERATION_ANNOTATION] === 'park' || a[OPERATION_ANNOTATION] === 'unpark';
}

export function taintValue(server: Server, key: string): string | undefined {
  const t = (server.spec.taints ?? []).find((x) => x.key === key && isNoBind(x));
  return t ? (t.value ?? '') : undefined;
}

// ---------------------------------------------------------------- classification and timeouts

interface Failure {
  reason: string;
  message: string;
}

type ReleaseStage = 'boot' | 'park' | 'done';

interface Sets {
  sorted: ServerMaintenance[];
  failures: Map<string, Failure>;
  active: ServerMaintenance | undefined;
  keeper: ServerMaintenance | undefined;
  /** Deleted, or Failed and undoing, in queue order, with the step each is at. */
  releasers: { m: ServerMaintenance; stage: ReleaseStage }[];
  queued: ServerMaintenance[];
}

function maxDurationMs(m: ServerMaintenance, policy: Policy): number {
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

function bootFailure(boot: ServerBoot | undefined): Failure | undefined {
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
function activeDeadline(
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
function waitingDeadline(m: ServerMaintenance, policy: Policy): { at: number; failure: Failure } | undefined {
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

function failureOf(m: ServerMaintenance, input: ServerInput, timers: number[]): Failure | undefined {
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

function failedReason(m: ServerMaintenance, failures: Map<string, Failure>): string | undefined {
  return (
    failures.get(uidOf(m))?.reason ??
    (stateOf(m) === 'Failed' ? findCondition(m.status?.conditions, C.Failed)?.reason : undefined)
  );
}

/** The undo step a deleted or failed maintenance is at (see the header). Waits are bounded by policy. */
function releaseStage(
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

function classify(input: ServerInput, plan: ServerPlan): Sets {
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

// ---------------------------------------------------------------- parts of the plan

function refsToRelease(m: ServerMaintenance, grants: ServerInput['grants']): BudgetRef[] {
  const seen = new Map<string, BudgetRef>();
  for (const g of grants.get(uidOf(m)) ?? []) seen.set(refKey(g.ref), g.ref);
  for (const r of m.status?.grant?.budgets ?? []) seen.set(refKey(r), r);
  return [...seen.values()];
}

function planFailures(input: ServerInput, sets: Sets, plan: ServerPlan): void {
  for (const m of sets.sorted) {
    const failure = sets.failures.get(uidOf(m));
    if (!failure) continue;
    const from = stateOf(m);
    const status = new StatusBuilder(m, input.now)
      .keep(C.Admitted, C.ServerParked, C.BootRequested)
      .set({ type: C.Failed, status: 'True', reason: failure.reason, message: failure.message })
      .set({ type: C.Ready, status: 'False', reason: 'Failed', message: failure.message })
      .build({
        state: 'Failed',
        ...(m.status?.startedAt ? { startedAt: m.status.startedAt } : {}),
        completedAt: rfc3339(input.now),
        message: failure.message,
      });
    plan.statuses.push({ m, status });
    plan.transitions.push({ m, from, to: 'Failed', enteredAt: enteredStateAt(m), reason: failure.reason });
    plan.events.push({ m, type: 'Warning', reason: failure.reason, action: 'Fail', note: failure.message });
  }
}

function completedStatus(m: ServerMaintenance, now: Date): OwnedStatus {
  return new StatusBuilder(m, now)
    .keep(C.Admitted, C.ServerParked, C.BootRequested)
    .set({ type: C.Ready, status: 'False', reason: 'Completed', message: 'done; the server is released' })
    .build({
      state: 'Completed',
      ...(m.status?.startedAt ? { startedAt: m.status.startedAt } : {}),
      completedAt: rfc3339(now),
    });
}

/**
 * Undo for deleted and failed maintenances. Only the first one still holding the server (boot or park
 * step) blocks it; one that is done releases its grants and, when deleted, its finalizer. Returns the
 * blocking one and whether a holder finished in this plan (its delete event will bring us back).
 */
function planReleasers(
  input: ServerInput,
  sets: Sets,
  plan: ServerPlan,
): { blocking?: ServerMaintenance; finishedHolder: boolean } {
  let blocking: ServerMaintenance | undefined;
  let finishedHolder = false;
  for (const { m, stage } of sets.releasers) {
    if (stage !== 'done') {
      blocking ??= m;
      const boot = input.boots.get(uidOf(m));
      if (stage === 'boot' && boot && !boot.metadata.deletionTimestamp) plan.deleteBoots.push(boot);
      continue;
    }
    const refs = refsToRelease(m, input.grants);
    if (refs.length > 0) plan.releaseGrants.push({ m, refs });
    if (!isDeleting(m)) continue;
    const held = stateOf(m) === 'InMaintenance';
    if (held) {
      finishedHolder = true;
      plan.transitions.push({ m, from: 'InMaintenance', to: 'Completed', enteredAt: enteredStateAt(m) });
    }
    // Deleted = done. Removing our finalizer deletes the object, and nobody sees it InMaintenance any
    // more: the grants go after that. Only an object that other finalizers keep gets `Completed` first,
    // so that no watcher counts it InMaintenance once its grant is gone.
    if (held && outlivesUs(m)) plan.completions.push({ m, status: completedStatus(m, input.now) });
    plan.removeFinalizer.push(m);
    plan.events.push({
      m,
      type: 'Normal',
      reason: 'Released',
      action: 'Cleanup',
      note: held
        ? `done: released the server (taint, park${m.spec.boot ? ', boot' : ''}) and ${refs.length} budget grant(s)`
        : `deleted in state ${stateOf(m)}; released ${refs.length} budget grant(s)`,
    });
  }
  return { ...(blocking ? { blocking } : {}), finishedHolder };
}

function parkConditions(b: StatusBuilder, park: ParkView, mode: ParkMode): boolean {
  if (mode !== 'annotation') return true;
  if (park.alreadyParked) {
    b.set({
      type: C.ServerParked,
      status: 'True',
      reason: 'AlreadyParked',
      message: 'the server was parked before this maintenance; it stays parked after it',
    });
    return true;
  }
  if (park.parked) {
    b.set({
      type: C.ServerParked,
      status: 'True',
      reason: 'Parked',
      message: 'metal-operator parked the server',
    });
    return true;
  }
  b.set({
    type: C.ServerParked,
    status: 'False',
    reason: 'ParkRequested',
    message: `asked metal-operator to park the server (${OPERATION_ANNOTATION}: park)`,
  });
  return false;
}

function bootReadiness(
  input: ServerInput,
  active: ServerMaintenance,
  parked: boolean,
  b: StatusBuilder,
  plan: ServerPlan,
): ConditionInput {
  if (!parked)
    return {
      type: C.Ready,
      status: 'False',
      reason: 'Parking',
      message: 'waiting for metal-operator to park the server',
    };
  const image = active.spec.boot;
  if (!image)
    return {
      type: C.Ready,
      status: 'True',
      reason: 'ServerReady',
      message: 'the server is held for this maintenance',
    };
  const boot = input.boots.get(uidOf(active));
  if (!boot) {
    const wanted = serverBootFromMaintenance(active);
    if (wanted) plan.createBoots.push(wanted);
  }
  const name = boot?.metadata.name ?? serverBootFromMaintenance(active)?.metadata.name ?? '';
  b.set({
    type: C.BootRequested,
    status: 'True',
    reason: 'ServerBootCreated',
    message: `ServerBoot ${name} boots ${image.image} (${image.method})`,
  });
  const phase = boot?.status?.phase ?? 'Pending';
  if (phase === 'Running')
    return { type: C.Ready, status: 'True', reason: 'Booted', message: `the server runs ${image.image}` };
  return { type: C.Ready, status: 'False', reason: 'Booting', message: `ServerBoot ${name} is ${phase}` };
}

function grantOf(m: ServerMaintenance, grants: ServerInput['grants']): OwnedStatus['grant'] {
  const held = grants.get(uidOf(m)) ?? [];
  if (held.length === 0) return m.status?.grant;
  const grantedAt = held.map((g) => g.grantedAt).sort()[0]!;
  return { grantedAt, budgets: held.map((g) => g.ref) };
}

function planActive(input: ServerInput, active: ServerMaintenance, park: ParkView, plan: ServerPlan): void {
  const b = new StatusBuilder(active, input.now).keep(C.Admitted, C.BootRequested);
  const parked = parkConditions(b, park, input.options.parkMode);
  b.set(bootReadiness(input, active, parked, b, plan));
  const grant = grantOf(active, input.grants);
  const status = b.build({
    state: 'InMaintenance',
    queuePosition: 0,
    ...(active.status?.startedAt ? { startedAt: active.status.startedAt } : {}),
    ...(grant ? { grant } : {}),
  });
  // The grant mirror (status.grant) rides along with the next change; on its own it is no reason to
  // write (the ledger is the record, and the budget event that brings it comes after the admission).
  // canonicalJSON drops an undefined grant, so "no mirror yet" compares equal to none.
  if (statusChanged(active, { ...status, grant: active.status?.grant }))
    plan.statuses.push({ m: active, status });
  const wasParked = findCondition(active.status?.conditions, C.ServerParked)?.status === 'True';
  if (input.options.parkMode === 'annotation' && park.parked && !park.alreadyParked && !wasParked)
    plan.events.push({
      m: active,
      type: 'Normal',
      reason: 'ServerParked',
      action: 'Park',
      note: 'metal-operator parked the server',
    });
  // No Event for the park request itself: Started says it comes next, and ServerParked when it is done
  // (one write fewer on the path of every maintenance).
}

/**
 * Whether the approval in status still stands for the server as it is now. "Not required" given while
 * the server was unclaimed does not cover it once a claim is bound: the approval controller decides
 * again, and until then nothing is tried.
 */
function approvalStands(m: ServerMaintenance, server: Server, policy: Policy): boolean {
  const source = m.status?.approval?.source;
  if (!source) return false;
  return !(source === 'NotRequired' && server.spec.serverClaimRef && approvalRequired(m, policy));
}

const notBeforeOf = (m: ServerMaintenance) =>
  parseTime(m.spec.approval?.notBefore) ?? parseTime(m.status?.notBefore);

/** The first approved maintenance in queue order that may be tried now, and when the next could be. */
function pickCandidate(
  input: ServerInput,
  server: Server,
  queued: readonly ServerMaintenance[],
): { candidate?: ServerMaintenance; wakeAt?: number } {
  const now = input.now.getTime();
  let wakeAt: number | undefined;
  for (const m of queued) {
    if (!ours(m) || !approvalStands(m, server, input.policy)) continue;
    const at = Math.max(notBeforeOf(m) ?? 0, input.backoff.get(uidOf(m)) ?? 0);
    if (at <= now) return { candidate: m, wakeAt };
    wakeAt = Math.min(wakeAt ?? Infinity, at);
  }
  return { wakeAt };
}

function waitingCondition(
  input: ServerInput,
  m: ServerMaintenance,
  server: Server | undefined,
  holder: ServerMaintenance | undefined,
  candidate: ServerMaintenance | undefined,
): ConditionInput | 'keep' {
  const admitted = (reason: string, message: string): ConditionInput => ({
    type: C.Admitted,
    status: 'False',
    reason,
    message,
  });
  if (!server) return admitted('ServerNotFound', `server ${input.serverName} does not exist (yet)`);
  if (!approvalStands(m, server, input.policy)) {
    const approved = findCondition(m.status?.conditions, C.Approved);
    return approved?.status === 'False'
      ? admitted(approved.reason, approved.message)
      : admitted('AwaitingApproval', 'waiting for the approval controller');
  }
  if (holder)
    return admitted('ServerBusy', `server ${input.serverName} is held by maintenance ${nameOf(holder)}`);
  const notBefore = notBeforeOf(m);
  if (notBefore !== undefined && notBefore > input.now.getTime())
    return admitted('NotBefore', `may not start before ${rfc3339(notBefore)}`);
  if ((input.backoff.get(uidOf(m)) ?? 0) > input.now.getTime()) return 'keep';
  if (candidate && candidate !== m)
    return admitted('Queued', `maintenance ${nameOf(candidate)} goes first on server ${input.serverName}`);
  return 'keep';
}

function planQueue(
  input: ServerInput,
  server: Server | undefined,
  sets: Sets,
  holder: ServerMaintenance | undefined,
  mayStart: boolean,
  plan: ServerPlan,
): ServerMaintenance | undefined {
  const picked: { candidate?: ServerMaintenance; wakeAt?: number } =
    server && !holder && mayStart ? pickCandidate(input, server, sets.queued) : {};
  const candidate = picked.candidate;
  if (picked.wakeAt !== undefined)
    plan.requeueAfterMs = earliest(plan.requeueAfterMs, picked.wakeAt - input.now.getTime());
  const offset = holder ? 1 : 0;
  const now = input.now.getTime();
  sets.queued.forEach((m, i) => {
    if (m === candidate) return;
    // A new maintenance the approval controller has not answered yet: its verdict comes within moments,
    // and then this status has news (or there is none to write, when it can start at once).
    const born = parseTime(m.metadata.creationTimestamp);
    const answered = findCondition(m.status?.conditions, C.Approved) !== undefined;
    if (!m.status?.state && !answered && born !== undefined && now < born + FIRST_STATUS_GRACE_MS) {
      plan.requeueAfterMs = earliest(plan.requeueAfterMs, born + FIRST_STATUS_GRACE_MS - now);
      return;
    }
    const b = new StatusBuilder(m, input.now);
    const cond = waitingCondition(input, m, server, holder, candidate);
    if (cond === 'keep') b.keep(C.Admitted);
    else b.set(cond);
    const state = waitingState(m);
    const status = b.build({ state, queuePosition: i + offset });
    if (!statusChanged(m, status)) return;
    plan.statuses.push({ m, status });
    const from = stateOf(m);
    if (from !== state && m.status?.state)
      plan.transitions.push({ m, from, to: state, enteredAt: enteredStateAt(m) });
  });
  if (candidate && server) planAttempt(input, server, candidate, sets.queued.indexOf(candidate), plan);
  return candidate;
}

function planAttempt(
  input: ServerInput,
  server: Server,
  m: ServerMaintenance,
  position: number,
  plan: ServerPlan,
): void {
  const source = m.status?.approval?.source ?? 'NotRequired';
  const b = new StatusBuilder(m, input.now).set({
    type: C.Admitted,
    status: 'True',
    reason: 'Admitted',
    message: `admitted into InMaintenance (approval: ${source})`,
  });
  // The park request follows the admission in the same reconcile: the admitted status says so already,
  // so that the follow-through has nothing to add (one status write fewer per maintenance).
  const parking = input.options.parkMode === 'annotation' && !isParked(server);
  if (parking) {
    parkConditions(b, { parked: false, alreadyParked: false }, input.options.parkMode);
    b.set(bootReadiness(input, m, false, b, plan));
  } else b.set({ type: C.Ready, status: 'False', reason: 'Starting', message: 'taking the server' });
  const status = b.build({ state: 'InMaintenance', queuePosition: 0, startedAt: rfc3339(input.now) });
  const from = waitingState(m);
  const waiting = new StatusBuilder(m, input.now)
    .keep(C.Admitted)
    .build({ state: from, queuePosition: position });
  const enteredAt = parseTime(m.status?.approval?.approvedAt) ?? parseTime(m.metadata.creationTimestamp);
  plan.attempt = { m, status, waiting, from, ...(enteredAt !== undefined ? { enteredAt } : {}) };
}

/** The waiting status of a denied attempt: Admitted False with the webhook's reason and message. */
export function deniedStatus(attempt: Attempt, reason: string, message: string, now: Date): OwnedStatus {
  const { conditions: _conditions, observedGeneration: _generation, ...fields } = attempt.waiting;
  return new StatusBuilder(attempt.m, now)
    .set({ type: C.Admitted, status: 'False', reason, message })
    .build(fields);
}

function projectedState(
  holder: ServerMaintenance | undefined,
  queued: readonly ServerMaintenance[],
): ServerProjection['state'] {
  if (holder) return 'InMaintenance';
  const states = new Set(queued.map(waitingState));
  if (states.has('Approved')) return 'Approved';
  return states.has('Announced') ? 'Announced' : 'None';
}

function sameProjection(a: ServerProjection, b: ServerProjection): boolean {
  const key = (p: ServerProjection) =>
    JSON.stringify([p.state, p.activeMaintenanceRef?.uid, p.reason, p.class, p.since, p.pending ?? 0]);
  return key(a) === key(b);
}

const refOf = (m: ServerMaintenance) => ({
  namespace: m.metadata.namespace ?? '',
  name: m.metadata.name ?? '',
  uid: uidOf(m),
});

function projectionFor(
  server: Server,
  holder: ServerMaintenance | undefined,
  queued: readonly ServerMaintenance[],
  now: Date,
): ServerProjection | undefined {
  const state = projectedState(holder, queued);
  const old = server.status?.maintenance;
  if (!old && state === 'None' && queued.length === 0) return undefined;
  const subject = (holder ?? queued[0])?.spec;
  const next = compact({
    state,
    activeMaintenanceRef: holder ? refOf(holder) : undefined,
    reason: subject?.reason,
    class: subject?.class,
    since: old?.state === state && old.since ? old.since : rfc3339(now),
    pending: queued.length,
  }) as ServerProjection;
  return old && sameProjection(old, next) ? undefined : next;
}

type ParkRole = 'active' | 'keep' | 'release';

/** Taint for whoever holds the server (or is next); park for the active one, unpark once released. */
function planServer(
  input: ServerInput,
  server: Server,
  taintHolder: ServerMaintenance | undefined,
  park: { role: ParkRole; active?: ServerMaintenance },
  plan: ServerPlan,
): ParkView {
  const want = taintHolder ? uidOf(taintHolder) : undefined;
  if (want !== taintValue(server, input.options.taintKey)) plan.taint = { value: want };
  // A keeper's server stays as it is, for a person; a releaser still restoring its boot is not unparked yet.
  if (park.role === 'keep') return { parked: isParked(server), alreadyParked: false };
  const view = planPark(server, park.active, input.options.parkMode);
  if (view.patch) plan.park = view.patch;
  return view;
}

function parkRole(sets: Sets, blocking: ServerMaintenance | undefined): ParkRole {
  if (sets.active) return 'active';
  if (sets.keeper) return 'keep';
  const stage = sets.releasers.find((r) => r.m === blocking)?.stage;
  return stage === 'boot' ? 'keep' : 'release';
}

/**
 * Decides everything about one server. The reconciler executes the plan in this order: finalizers,
 * statuses, taint (compare-and-swap), park, projection, Completed, ServerBoot deletes, finalizer
 * removal, grant releases, ServerBoot creates, and last the InMaintenance attempt, so a maintenance never
 * starts before its server carries the taint and the previous holder's undo is done.
 */
export function decideServer(input: ServerInput): ServerPlan {
  const plan = emptyPlan();
  const sets = classify(input, plan);
  const server = input.serverGone ? undefined : input.server;
  for (const m of sets.sorted)
    if (!isDeleting(m) && !ours(m) && stateOf(m) !== 'Failed' && !sets.failures.has(uidOf(m)))
      plan.addFinalizer.push(m);
  planFailures(input, sets, plan);
  const { blocking, finishedHolder } = planReleasers(input, sets, plan);
  const holder = sets.active ?? sets.keeper ?? blocking;
  // A holder that finished just now may still look like one to the webhook's cache: its delete event
  // brings us back, and then the next one is tried.
  const candidate = planQueue(input, server, sets, holder, !finishedHolder, plan);
  if (!server) return plan;
  const approved = sets.queued.find((m) => ours(m) && approvalStands(m, server, input.policy));
  // The taint goes on once a maintenance is approved, before it is tried (WS1: the taint write is a
  // compare-and-swap against a concurrent bind); its value names the maintenance holding or next.
  const role = parkRole(sets, blocking);
  const park = planServer(
    input,
    server,
    holder ?? candidate ?? approved,
    { role, ...(sets.active ? { active: sets.active } : {}) },
    plan,
  );
  if (sets.active) planActive(input, sets.active, park, plan);
  const projection = projectionFor(server, holder, sets.queued, input.now);
  if (projection) plan.projection = projection;
  return plan;
}
