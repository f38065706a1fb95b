// The fleet simulator's decisions, as pure functions of (object, what the caches say, time spent in
// the current step, timings). They imitate what metal-operator does that our system relies on:
// the Server state machine (Initial -> Discovery -> Available -> Reserved), claim binding with
// upstream's claimability rules (serverclaim_controller.go, isServerClaimable), park/unpark (IEP-23),
// power, and release when a claim goes away. A SIMULATOR: tests, benchmarks and the demo use it;
// the product never does.
import type { Server } from '../../../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../../../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import { matchesSelector } from '../../../contract/selectors.js';
import { untoleratedNoBindTaints } from '../../../contract/taints.js';
import { OPERATION_ANNOTATION } from '../../../webhook/rules/contract.js';
import { parseDuration } from '../../../policies/validate.js';

export { OPERATION_ANNOTATION };
/** Controller-owned marker metal-operator sets on a parked server. */
export const PARKED_ANNOTATION = 'metal.ironcore.dev/parked';
/** metal-operator's finalizer on claims: the server is released before the claim goes. */
export const CLAIM_FINALIZER = 'metal.ironcore.dev/serverclaim';
/** Upstream's metadata label prefix; the simulator puts servers into racks with it. */
export const RACK_LABEL = 'metadata.metal.ironcore.dev/rack';
/** Per-maintenance hold time for the simulated actor: a duration ("5s") or "forever". */
export const HOLD_ANNOTATION = 'fleet-sim.metal.ironcore.dev/hold';

export interface SimTimings {
  /** Time a server spends in Initial and in Discovery each. */
  discoveryMs: number;
  /** Time a power transition takes (PoweringOn/PoweringOff before On/Off). */
  powerMs: number;
}

export const DEFAULT_TIMINGS: SimTimings = { discoveryMs: 300, powerMs: 200 };

type PowerState = 'On' | 'Off' | 'PoweringOn' | 'PoweringOff';

/** What the simulated server reconciler writes next for one Server; all parts optional. */
export interface ServerStep {
  /** Merge patch of status fields (state, powerState). */
  status?: { state?: string; powerState?: PowerState };
  /** Annotation changes; null removes. Written after `status`. */
  annotations?: Record<string, string | null>;
  /** Clear spec.serverClaimRef (release). */
  releaseClaim?: boolean;
  /** Nothing to write yet: look again after this long. */
  waitMs?: number;
  /** For logs and tests: why. */
  why: string;
}

/** The claim a server's serverClaimRef names, as the cache sees it. */
export type ClaimLookup = { claim: ServerClaim } | { claim: undefined };

function isParked(server: Server): boolean {
  return server.metadata.annotations?.[PARKED_ANNOTATION] === 'true' || server.status?.state === 'Parked';
}

/**
 * Moves power towards `want` through the transitional state, taking `powerMs`; undefined once there.
 * `elapsedMs` is how long the server has been in its current (transitional) power state.
 */
export function powerStep(
  current: string | undefined,
  want: 'On' | 'Off',
  elapsedMs: number,
  t: SimTimings,
): ServerStep | undefined {
  if (current === want) return undefined;
  if (t.powerMs <= 0) return { status: { powerState: want }, why: `power ${want}: instant` };
  const transitional: PowerState = want === 'On' ? 'PoweringOn' : 'PoweringOff';
  if (current !== transitional) return { status: { powerState: transitional }, why: `power ${want}: start` };
  if (elapsedMs < t.powerMs) return { waitMs: t.powerMs - elapsedMs, why: `power ${want}: in progress` };
  return { status: { powerState: want }, why: `power ${want}: done` };
}

const PARKABLE = new Set(['Available', 'Reserved', 'Discovery']);

function parkStep(server: Server, elapsedMs: number, t: SimTimings): ServerStep | undefined {
  const state = server.status?.state;
  // A server still in Initial is discovered first (it becomes parkable in Discovery); waiting here
  // instead would never let discovery run.
  if (state === 'Initial') return undefined;
  // Also sets the marker: a park that wrote its status but not yet its annotations completes here.
  if (isParked(server))
    return {
      annotations: { [PARKED_ANNOTATION]: 'true', [OPERATION_ANNOTATION]: null },
      why: 'park: already parked',
    };
  if (!PARKABLE.has(state ?? '')) return { waitMs: 1000, why: `park: not parkable in state ${state}` };
  const power = powerStep(server.status?.powerState, 'Off', elapsedMs, t);
  // Instant power (powerMs 0) powers off and parks in one status write, as one reconcile would.
  if (power && t.powerMs > 0) return power;
  return {
    status: { ...power?.status, state: 'Parked' },
    annotations: { [PARKED_ANNOTATION]: 'true', [OPERATION_ANNOTATION]: null },
    why: 'park: powered off and parked',
  };
}

function unparkStep(server: Server, claim: ClaimLookup, elapsedMs: number, t: SimTimings): ServerStep {
  if (!isParked(server)) return { annotations: { [OPERATION_ANNOTATION]: null }, why: 'unpark: not parked' };
  const state = server.spec.serverClaimRef ? 'Reserved' : 'Available';
  // Instant power: back in service with the power its claim wants, in the same write.
  const want = state === 'Reserved' && claim.claim ? claim.claim.spec.power : undefined;
  const power = t.powerMs <= 0 && want ? powerStep(server.status?.powerState, want, elapsedMs, t) : undefined;
  return {
    status: { ...power?.status, state },
    annotations: { [PARKED_ANNOTATION]: null, [OPERATION_ANNOTATION]: null },
    why: 'unpark: back in service',
  };
}

function operationStep(
  server: Server,
  claim: ClaimLookup,
  op: string,
  elapsedMs: number,
  t: SimTimings,
): ServerStep | undefined {
  if (op === 'park') return parkStep(server, elapsedMs, t);
  if (op === 'unpark') return unparkStep(server, claim, elapsedMs, t);
  return undefined; // other operations (retry, restarts, …) are not simulated
}

function discoveryStep(state: string, elapsedMs: number, t: SimTimings): ServerStep | undefined {
  if (state !== 'Initial' && state !== 'Discovery') return undefined;
  if (elapsedMs < t.discoveryMs) return { waitMs: t.discoveryMs - elapsedMs, why: `${state}: in progress` };
  return state === 'Initial'
    ? { status: { state: 'Discovery', powerState: 'On' }, why: 'discovery: booted the discovery image' }
    : { status: { state: 'Available', powerState: 'Off' }, why: 'discovery: done, available' };
}

function claimGone(lookup: ClaimLookup): boolean {
  return !lookup.claim || !!lookup.claim.metadata.deletionTimestamp;
}

function releaseStep(server: Server, elapsedMs: number, t: SimTimings): ServerStep {
  if (!isParked(server)) {
    const power = powerStep(server.status?.powerState, 'Off', elapsedMs, t);
    if (power) return power;
  }
  const retain = server.spec.reclaimPolicy === 'Retain';
  const state = isParked(server) ? 'Parked' : retain ? 'Released' : 'Available';
  // Retain keeps the reference until a human clears it (IEP-17); Recycle clears it.
  return retain
    ? { status: { state }, why: 'release: retained' }
    : { status: { state }, releaseClaim: true, why: 'release: claim gone' };
}

/**
 * The next step of the simulated server reconciler. `claim` is what the cache holds for the claim
 * `spec.serverClaimRef` names (ignored when there is no ref); `elapsedMs` is how long the server has
 * shown its current (state, powerState).
 */
export function planServer(server: Server, claim: ClaimLookup, elapsedMs: number, t: SimTimings): ServerStep {
  const state = server.status?.state;
  if (!state) return { status: { state: 'Initial', powerState: 'Off' }, why: 'new server' };
  const op = server.metadata.annotations?.[OPERATION_ANNOTATION];
  const opStep = op ? operationStep(server, claim, op, elapsedMs, t) : undefined;
  if (opStep) return opStep;
  if (server.spec.serverClaimRef && claimGone(claim) && state !== 'Released')
    return releaseStep(server, elapsedMs, t);
  // Parked: no binding, no power healing (isServerParkingOrParked upstream).
  if (isParked(server) || state === 'Error' || state === 'Released')
    return { why: `${state}: nothing to do` };
  return discoveryStep(state, elapsedMs, t) ?? serviceStep(server, state, claim, elapsedMs, t);
}

/** Available <-> Reserved with the binding, and power as the claim (or no claim: Off) wants. */
function serviceStep(
  server: Server,
  state: string,
  claim: ClaimLookup,
  elapsedMs: number,
  t: SimTimings,
): ServerStep {
  const ref = server.spec.serverClaimRef;
  if (state === 'Available' && ref) return { status: { state: 'Reserved' }, why: 'claimed: reserved' };
  if (state === 'Reserved' && !ref)
    return { status: { state: 'Available' }, why: 'reference cleared: available' };
  const want = state === 'Reserved' && claim.claim ? claim.claim.spec.power : 'Off';
  return powerStep(server.status?.powerState, want, elapsedMs, t) ?? { why: 'steady' };
}

/**
 * upstream isServerClaimable: unbound (or bound to this claim), Available, not cordoned, powered
 * Off, and every NoBind taint tolerated. Returns why not, or undefined when claimable.
 */
export function notClaimableReason(server: Server, claim: ServerClaim): string | undefined {
  const ref = server.spec.serverClaimRef;
  if (ref && !(ref.name === claim.metadata.name && ref.namespace === claim.metadata.namespace))
    return 'bound';
  if (server.status?.state !== 'Available') return `state ${server.status?.state ?? 'unset'}`;
  if (server.spec.unclaimable === true) return 'unclaimable';
  if (server.status?.powerState !== 'Off') return `power ${server.status?.powerState ?? 'unset'}`;
  if (untoleratedNoBindTaints(server.spec.taints, claim.spec.tolerations).length > 0) return 'tainted';
  return undefined;
}

export function isServerClaimable(server: Server, claim: ServerClaim): boolean {
  return notClaimableReason(server, claim) === undefined;
}

/**
 * Whether a server is a candidate for a claim at all: the named server for a serverRef (which must
 * also match a selector, if any), a selector match, or every server for a "best effort" claim.
 */
export function isCandidate(server: Server, claim: ServerClaim): boolean {
  const { serverRef, serverSelector } = claim.spec;
  if (serverRef && serverRef.name !== server.metadata.name) return false;
  if (serverSelector) return matchesSelector(serverSelector, server.metadata.labels);
  return true;
}

/** First claimable candidate in `servers` order (upstream: first match wins, no scoring). */
export function chooseServer(
  servers: Iterable<Server>,
  claim: ServerClaim,
  skip: ReadonlySet<string> = new Set(),
): Server | undefined {
  for (const s of servers) {
    if (skip.has(s.metadata.name ?? '')) continue;
    if (isCandidate(s, claim) && isServerClaimable(s, claim)) return s;
  }
  return undefined;
}

/** What the simulated claim reconciler does next for one claim. */
export type ClaimStep =
  | { kind: 'addFinalizer' }
  | { kind: 'removeFinalizer' }
  | { kind: 'phase'; phase: 'Bound' | 'Unbound' }
  | { kind: 'recordServerRef'; server: string }
  | { kind: 'bind'; server: string }
  | { kind: 'wait'; why: string };

/**
 * `bound` is the server whose serverClaimRef names this claim (from the cache), if any; `choose`
 * picks a claimable server when the claim needs one.
 */
export function planClaim(
  claim: ServerClaim,
  bound: Server | undefined,
  choose: () => Server | undefined,
): ClaimStep {
  const ours = (claim.metadata.finalizers ?? []).includes(CLAIM_FINALIZER);
  if (claim.metadata.deletionTimestamp) {
    if (!ours) return { kind: 'wait', why: 'deleting; not ours' };
    return bound
      ? { kind: 'wait', why: 'deleting; waiting for the server to be released' }
      : { kind: 'removeFinalizer' };
  }
  if (!ours) return { kind: 'addFinalizer' };
  if (bound) return boundClaimStep(claim, bound);
  if (!claim.status?.phase) return { kind: 'phase', phase: 'Unbound' };
  if (claim.status.phase === 'Bound') return { kind: 'phase', phase: 'Unbound' }; // its server went away
  const server = choose();
  if (!server) return { kind: 'wait', why: 'no claimable server' };
  return { kind: 'bind', server: server.metadata.name ?? '' };
}

function boundClaimStep(claim: ServerClaim, bound: Server): ClaimStep {
  if (!claim.spec.serverRef) return { kind: 'recordServerRef', server: bound.metadata.name ?? '' };
  const ready = bound.status?.state === 'Reserved' || bound.status?.state === 'Parked';
  if (!ready) return { kind: 'wait', why: 'waiting for the server to be reserved' };
  return claim.status?.phase === 'Bound' ? { kind: 'wait', why: 'bound' } : { kind: 'phase', phase: 'Bound' };
}

/** The reference a bound server carries. */
export function claimRefOf(claim: ServerClaim): { name: string; namespace: string } {
  return { name: claim.metadata.name ?? '', namespace: claim.metadata.namespace ?? '' };
}

/** Hold time of a maintenance for the simulated actor: its annotation, else the default; undefined = forever. */
export function holdMsOf(m: ServerMaintenance, defaultMs: number): number | undefined {
  const text = m.metadata.annotations?.[HOLD_ANNOTATION];
  if (text === undefined) return defaultMs;
  if (text === 'forever') return undefined;
  return parseDuration(text) ?? defaultMs;
}

/** When the simulated actor may start: at InMaintenance, or (like real actors) once Ready=True too. */
export type ActorStart = 'Ready' | 'InMaintenance';

/**
 * Whether the actor may work on a maintenance now. Real actors start on the maintenance's Ready
 * condition (parked, boot requested), not on the state alone (docs/proposals/ws3-servermaintenance.md).
 */
export function actorMayStart(m: ServerMaintenance, startOn: ActorStart): boolean {
  if (m.metadata.deletionTimestamp || m.status?.state !== 'InMaintenance') return false;
  if (startOn === 'InMaintenance') return true;
  return (m.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/**
 * The simulated actor (what a firmware controller does upstream): once it may start, do the work
 * for the hold time, then delete the maintenance ("done"). `startedMs` is when it was first seen
 * startable (epoch ms).
 */
export function planHold(
  m: ServerMaintenance,
  nowMs: number,
  startedMs: number | undefined,
  defaultHoldMs: number,
  startOn: ActorStart = 'Ready',
): { kind: 'delete' } | { kind: 'wait'; ms?: number } {
  if (!actorMayStart(m, startOn)) return { kind: 'wait' };
  const hold = holdMsOf(m, defaultHoldMs);
  if (hold === undefined) return { kind: 'wait' };
  const since = startedMs ?? nowMs;
  const left = since + hold - nowMs;
  return left <= 0 ? { kind: 'delete' } : { kind: 'wait', ms: left };
}
