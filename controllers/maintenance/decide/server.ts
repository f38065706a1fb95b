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
import type {
  Server,
  ServerMaintenanceStatus as ServerProjection,
} from '../../../api/metal/v1alpha1/server.js';
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import { rfc3339 } from '../../../contract/time.js';
import { compact } from '../../shared/compact.js';
import { isDeleting, isTerminal, stateOf, uidOf, waitingState } from '../../../contract/lifecycle.js';
import { planActive } from './active.js';
import { type Sets, classify } from './classify.js';
import { type ServerInput, type ServerPlan, emptyPlan, ours } from './model.js';
import { type ParkView, isParked, planPark, taintValue } from './park.js';
import { approvalStands, planQueue } from './queue.js';
import { planFailures, planReleasers } from './release.js';

export function projectedState(
  holder: ServerMaintenance | undefined,
  queued: readonly ServerMaintenance[],
): ServerProjection['state'] {
  if (holder) return 'InMaintenance';
  const states = new Set(queued.map(waitingState));
  if (states.has('Approved')) return 'Approved';
  return states.has('Announced') ? 'Announced' : 'None';
}

export function sameProjection(a: ServerProjection, b: ServerProjection): boolean {
  const key = (p: ServerProjection) =>
    JSON.stringify([p.state, p.activeMaintenanceRef?.uid, p.reason, p.class, p.since, p.pending ?? 0]);
  return key(a) === key(b);
}

export const refOf = (m: ServerMaintenance) => ({
  namespace: m.metadata.namespace ?? '',
  name: m.metadata.name ?? '',
  uid: uidOf(m),
});

export function projectionFor(
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

/**
 * Whether the placement rule refuses the server for this waiting maintenance once this plan's statuses
 * are written: it is Approved (or becomes so: the approval controller answered) and not over.
 */
export const refusesPlacement = (m: ServerMaintenance) =>
  !isTerminal(m) && (stateOf(m) === 'Approved' || waitingState(m) === 'Approved');

/**
 * Whom the taint names when nobody holds or is tried: the first approved maintenance of ours. The taint
 * goes on once a maintenance is approved, before it is tried (WS1: the taint write is a compare-and-swap
 * against a concurrent bind). It covers every maintenance the placement rule refuses the server for,
 * also one whose approval does not stand or that is not ours yet: the reconciler writes a new taint
 * before the statuses and removes one after the last of them (issue 29: upstream's binder skips what
 * carries it, so it never meets our refusal).
 */
function nextToTaint(input: ServerInput, server: Server, sets: Sets): ServerMaintenance | undefined {
  return (
    sets.queued.find((m) => ours(m) && approvalStands(m, server, input.policy)) ??
    sets.queued.find(refusesPlacement)
  );
}

export type ParkRole = 'active' | 'keep' | 'release';

/** Taint for whoever holds the server (or is next); park for the active one, unpark once released. */
export function planServer(
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

export function parkRole(sets: Sets, blocking: ServerMaintenance | undefined): ParkRole {
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
  const role = parkRole(sets, blocking);
  const park = planServer(
    input,
    server,
    holder ?? candidate ?? nextToTaint(input, server, sets),
    { role, ...(sets.active ? { active: sets.active } : {}) },
    plan,
  );
  if (sets.active) planActive(input, sets.active, park, plan);
  const projection = projectionFor(server, holder, sets.queued, input.now);
  if (projection) plan.projection = projection;
  return plan;
}
