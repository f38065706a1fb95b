// The queue of waiting maintenances: which one is tried, and what the others are told.
import type { Server } from '../../../api/metal/v1alpha1/server.js';
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import type { Policy } from '../../../policies/schema.js';
import { findCondition, type ConditionInput } from '../../../contract/conditions.js';
import { MaintenanceConditions as C } from '../../../contract/names.js';
import { earliest, parseTime, rfc3339 } from '../../../contract/time.js';
import { nameOf, stateOf, uidOf, waitingState } from '../../../contract/lifecycle.js';
import { approvalRequired } from '../../../contract/approval.js';
import { bootReadiness, parkConditions } from './active.js';
import { type Sets, enteredStateAt } from './classify.js';
import {
  type Attempt,
  FIRST_STATUS_GRACE_MS,
  type OwnedStatus,
  type ServerInput,
  type ServerPlan,
  ours,
} from './model.js';
import { isParked } from './park.js';
import { StatusBuilder, statusChanged } from './status.js';

export function approvalStands(m: ServerMaintenance, server: Server, policy: Policy): boolean {
  const source = m.status?.approval?.source;
  if (!source) return false;
  return !(source === 'NotRequired' && server.spec.serverClaimRef && approvalRequired(m, policy));
}

export const notBeforeOf = (m: ServerMaintenance) =>
  parseTime(m.spec.approval?.notBefore) ?? parseTime(m.status?.notBefore);

/** The first approved maintenance in queue order that may be tried now, and when the next could be. */
export function pickCandidate(
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

export function waitingCondition(
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

export function planQueue(
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

export function planAttempt(
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
