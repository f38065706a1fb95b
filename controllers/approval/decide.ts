// The approval controller's decisions, pure functions of (object, cached world, policy, now):
//
// - decideClaim: the announcements on a ServerClaim (one per unfinished maintenance of its server) and
//   the legacy maintenance-needed label;
// - decideApproval: the approval fields of one ServerMaintenance (announcedAt, notBefore, deadline,
//   approval, conditions Announced and Approved).
//
// Whether a maintenance is approved, its deadline and whether a deferral is in force are the contract's
// rules (contract/approval.ts), the same the webhook decides the InMaintenance transition by, so this
// controller and the admission check can never disagree; the webhook decides again from the claim itself.
import type { Condition } from '../../api/schema/common.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { Announcement, ApprovalSource, ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { Policy } from '../../policies/schema.js';
import { Codes } from '../../contract/codes.js';
import { findCondition, makeCondition, type ConditionInput } from '../../contract/conditions.js';
import { MaintenanceConditions as C, qualified } from '../../contract/names.js';
import { earliest, parseTime, rfc3339 } from '../../contract/time.js';
import { compact } from '../shared/compact.js';
import { canonicalJSON } from '../shared/canonical.js';
import { compareQueue, isDeleting, isTerminal, stateOf, uidOf } from '../../contract/lifecycle.js';
import { announcementOf } from '../../contract/announcements.js';
import { LEGACY_NEEDED_LABEL } from '../../contract/legacy-labels.js';
import { approvalRequired, approvalVerdict, deadlineOf, deferralInForce } from '../../contract/approval.js';

/** Whether the server's binding names this claim (the server side is what metal-operator writes first). */
export function isBoundTo(server: Server | undefined, claim: ServerClaim): boolean {
  const ref = server?.spec.serverClaimRef;
  return !!ref && ref.name === claim.metadata.name && ref.namespace === claim.metadata.namespace;
}

/** Maintenances announced to a claim: the unfinished ones of its server, in queue order. */
export function announceable(maintenances: readonly ServerMaintenance[]): ServerMaintenance[] {
  return maintenances.filter((m) => !isDeleting(m) && !isTerminal(m)).sort(compareQueue);
}

function announcementState(m: ServerMaintenance, until: number | undefined): Announcement['state'] {
  if (stateOf(m) === 'InMaintenance') return 'InMaintenance';
  if (m.status?.approval) return 'Approved';
  return until !== undefined ? 'Deferred' : 'Announced';
}

/** The deadline told to the tenant; kept once told, so a later policy change does not move it. */
function deadlineFor(
  m: ServerMaintenance,
  existing: Announcement | undefined,
  announcedAt: string,
  policy: Policy,
) {
  if (!approvalRequired(m, policy)) return undefined;
  return existing?.deadline ?? rfc3339(deadlineOf(m, parseTime(announcedAt) ?? Date.now(), policy));
}

function announcementFor(
  m: ServerMaintenance,
  claim: ServerClaim,
  existing: Announcement | undefined,
  policy: Policy,
  now: Date,
): { announcement: Announcement; wakeAt?: number } {
  const announcedAt = existing?.announcedAt ?? rfc3339(now);
  const deadline = deadlineFor(m, existing, announcedAt, policy);
  const approval = m.status?.approval ?? { source: undefined, approvedBy: undefined, approvedAt: undefined };
  const until = deferralInForce(claim, uidOf(m), parseTime(deadline), now.getTime())?.until;
  const state = announcementState(m, until);
  const { reason = 'Other', class: cls = 'Planned', priority, description, approval: requirements } = m.spec;
  const announcement = compact({
    maintenanceUID: uidOf(m),
    maintenanceName: m.metadata.name ?? '',
    maintenanceNamespace: m.metadata.namespace ?? '',
    reason,
    class: cls,
    priority,
    description: description || undefined,
    announcedAt,
    notBefore: requirements?.notBefore,
    deadline,
    state,
    approvalSource: approval.source,
    approvedBy: approval.approvedBy,
    approvedAt: approval.approvedAt,
    deferredUntil: state === 'Deferred' ? rfc3339(until!) : undefined,
  }) as Announcement;
  return compact({ announcement, wakeAt: until });
}

export interface ClaimInput {
  claim: ServerClaim;
  /** The server the claim's serverRef names, as the cache has it. */
  server: Server | undefined;
  /** Maintenances of that server. */
  maintenances: readonly ServerMaintenance[];
  policy: Policy;
  now: Date;
  /** Whether our field manager owns the legacy label on the claim (we remove only what we set). */
  ownsLegacyLabel: boolean;
}

export interface ClaimPlan {
  /** The full list to apply when it differs from the claim's. */
  announcements?: Announcement[];
  /** Set (true) or release (false) the legacy label; undefined: leave it. */
  legacyLabel?: boolean;
  /** Maintenances announced for the first time. */
  announced: ServerMaintenance[];
  requeueAfterMs?: number;
}

function sameAnnouncements(a: readonly Announcement[] | undefined, b: readonly Announcement[]): boolean {
  const key = (list: readonly Announcement[]) =>
    canonicalJSON([...list].sort((x, y) => x.maintenanceUID.localeCompare(y.maintenanceUID)));
  return key(a ?? []) === key(b);
}

/** Set or release the legacy label: set while the legacy window is open, released only if we set it. */
function legacyLabelChange(input: ClaimInput, announcements: number): boolean | undefined {
  // The legacy window is open while the policy still accepts the legacy labels (translate or warn).
  const want = input.policy.legacyLabels.mode !== 'deny' && announcements > 0;
  const has = input.claim.metadata.labels?.[LEGACY_NEEDED_LABEL] === 'true';
  if (want && !has) return true;
  if (!want && input.ownsLegacyLabel) return false;
  return undefined;
}

export function decideClaim(input: ClaimInput): ClaimPlan {
  const { claim, server, policy, now } = input;
  const existing = claim.status?.maintenance?.announcements ?? [];
  const list = isBoundTo(server, claim) ? announceable(input.maintenances) : [];
  const plan: ClaimPlan = { announced: [] };
  const next: Announcement[] = [];
  for (const m of list) {
    const old = existing.find((a) => a.maintenanceUID === uidOf(m));
    const { announcement, wakeAt } = announcementFor(m, claim, old, policy, now);
    next.push(announcement);
    if (!old) plan.announced.push(m);
    if (wakeAt !== undefined)
      plan.requeueAfterMs = earliest(plan.requeueAfterMs, wakeAt - now.getTime() + 100);
  }
  const neverHad = existing.length === 0 && !claim.status?.maintenance;
  if (!sameAnnouncements(existing, next) && !(neverHad && next.length === 0)) plan.announcements = next;
  const label = legacyLabelChange(input, next.length);
  if (label !== undefined) plan.legacyLabel = label;
  return plan;
}

// ---------------------------------------------------------------- approval of one maintenance

/** The ServerMaintenance status fields the approval controller owns. */
export interface ApprovalStatus {
  announcedAt?: string;
  notBefore?: string;
  deadline?: string;
  approval?: { source: ApprovalSource; approvedBy?: string; approvedAt?: string };
  conditions: Condition[];
}

export const APPROVAL_CONDITIONS = [C.Announced, C.Approved] as const;

export interface ApprovalInput {
  m: ServerMaintenance;
  server: Server | undefined;
  claim: ServerClaim | undefined;
  policy: Policy;
  now: Date;
}

export interface ApprovalEvent {
  onClaim: boolean;
  type: 'Normal' | 'Warning';
  reason: string;
  note: string;
}

export interface ApprovalPlan {
  /** The owned status to apply when it changed. */
  status?: ApprovalStatus;
  events: ApprovalEvent[];
  /** The approval source when the maintenance became approved in this decision. */
  approvedBy?: ApprovalSource;
  requeueAfterMs?: number;
}

const APPROVED_REASON: Record<ApprovalSource, string> = {
  Owner: 'OwnerApproved',
  Standing: 'StandingApproval',
  Deadline: 'DeadlineReached',
  Policy: 'PolicyApproved',
  NotRequired: 'NotRequired',
};

const WAITING_REASON: Record<string, string> = {
  [Codes.APPROVAL_MISSING]: 'AwaitingApproval',
  [Codes.DEFERRED]: 'Deferred',
  [Codes.CLAIM_NOT_FOUND]: 'ClaimNotFound',
};

export function ownedApprovalStatus(m: ServerMaintenance): ApprovalStatus {
  const s = m.status ?? {};
  return {
    ...compact({
      announcedAt: s.announcedAt,
      notBefore: s.notBefore,
      deadline: s.deadline,
      approval: s.approval,
    }),
    conditions: APPROVAL_CONDITIONS.flatMap((t) => findCondition(s.conditions, t) ?? []),
  };
}

function canonical(s: ApprovalStatus): string {
  return canonicalJSON([s.announcedAt, s.notBefore, s.deadline, s.approval, s.conditions]);
}

function approvedByText(
  source: ApprovalSource,
  detail: string | undefined,
  claim: ServerClaim | undefined,
): string | undefined {
  switch (source) {
    case 'Owner':
      return detail;
    case 'Standing':
      return `claim ${qualified(claim?.metadata.namespace, claim?.metadata.name)} (approvalMode Automatic)`;
    case 'Policy':
      return detail ? `policy rule ${detail}` : 'policy';
    case 'Deadline':
      return 'deadline';
    default:
      return undefined;
  }
}

function announcedCondition(
  m: ServerMaintenance,
  server: Server | undefined,
  claim: ServerClaim | undefined,
): ConditionInput {
  const no = (reason: string, message: string): ConditionInput => ({
    type: C.Announced,
    status: 'False',
    reason,
    message,
  });
  if (!server) return no('ServerNotFound', `server ${m.spec.serverRef.name} does not exist (yet)`);
  const ref = server.spec.serverClaimRef;
  if (!ref) return no('Unclaimed', 'the server is not claimed; there is nobody to announce to');
  const name = qualified(ref.namespace, ref.name);
  const a = announcementOf(claim, uidOf(m));
  if (!a) return no('NotYetAnnounced', `not yet announced to claim ${name}`);
  const deadline = a.deadline ? `; it proceeds without approval at ${a.deadline}` : '';
  return {
    type: C.Announced,
    status: 'True',
    reason: 'Announced',
    message: `announced to claim ${name} at ${a.announcedAt}${deadline}`,
  };
}

/** Whether the approval decision is frozen: running, finished, or being deleted. */
function frozen(m: ServerMaintenance): boolean {
  return isDeleting(m) || isTerminal(m) || stateOf(m) === 'InMaintenance';
}

type Verdict = ReturnType<typeof approvalVerdict>;

function approvalMessage(
  source: ApprovalSource,
  approvedBy: string | undefined,
  deadline: string | undefined,
): string {
  if (source === 'Deadline')
    return `the deadline ${deadline ?? ''} passed without an answer from the claim owner; proceeding`;
  return `approved: ${source}${approvedBy ? ` (${approvedBy})` : ''}`;
}

function approvedEvents(
  m: ServerMaintenance,
  source: ApprovalSource,
  reason: string,
  note: string,
): ApprovalEvent[] {
  const type = source === 'Deadline' ? 'Warning' : 'Normal';
  const events: ApprovalEvent[] = [{ onClaim: false, type, reason, note }];
  // The tenant sees on the claim when its server was taken without its answer.
  if (source === 'Deadline' || source === 'Policy')
    events.push({ onClaim: true, type, reason, note: `${m.metadata.name ?? ''}: ${note}` });
  return events;
}

/** The Approved condition and approval field for a verdict that approves, and the Events it raises. */
function approvedOutcome(
  input: ApprovalInput,
  verdict: Extract<Verdict, { ok: true }>,
  previous: ApprovalStatus,
  plan: ApprovalPlan,
): { approval: NonNullable<ApprovalStatus['approval']>; condition: ConditionInput } {
  const { m, claim, now } = input;
  const { source } = verdict;
  const owner = source === 'Owner' ? ownerApproval(claim, uidOf(m)) : undefined;
  const kept = previous.approval?.source === source ? previous.approval.approvedAt : undefined;
  const approvedBy = approvedByText(source, verdict.detail, claim);
  const approval = compact({ source, approvedBy, approvedAt: owner?.approvedAt ?? kept ?? rfc3339(now) });
  const reason = APPROVED_REASON[source];
  const message = approvalMessage(source, approvedBy, announcementOf(claim, uidOf(m))?.deadline);
  if (previous.approval?.source !== source) {
    plan.approvedBy = source;
    plan.events.push(...approvedEvents(m, source, reason, message));
  }
  return { approval, condition: { type: C.Approved, status: 'True', reason, message } };
}

/** The Approved condition for a maintenance that is not approved (yet), and when to look again. */
function waitingOutcome(
  input: ApprovalInput,
  verdict: Exclude<Verdict, { ok: true }> | undefined,
  plan: ApprovalPlan,
): ConditionInput {
  const { m, now } = input;
  if (!verdict)
    return {
      type: C.Approved,
      status: 'False',
      reason: 'ServerNotFound',
      message: `server ${m.spec.serverRef.name} does not exist (yet)`,
    };
  if (verdict.retryAt !== undefined) plan.requeueAfterMs = Math.max(0, verdict.retryAt - now.getTime()) + 100;
  const reason = WAITING_REASON[verdict.code] ?? 'AwaitingApproval';
  return { type: C.Approved, status: 'False', reason, message: verdict.message };
}

/** The Approved condition, the approval field (when approved) and what it raises. */
function approvedCondition(input: ApprovalInput, previous: ApprovalStatus, plan: ApprovalPlan) {
  const { m, server, claim, policy, now } = input;
  const verdict = server ? approvalVerdict(m, server, claim, policy, now) : undefined;
  if (verdict?.ok) return approvedOutcome(input, verdict, previous, plan);
  return { approval: undefined, condition: waitingOutcome(input, verdict, plan) };
}

/**
 * How long a new maintenance of a claimed server waits for its announcement before its first approval
 * status is written anyway. The claim's reconcile announces it within moments and then looks at the
 * maintenance again: waiting for that makes Announced and Approved one write instead of two.
 */
export const ANNOUNCE_GRACE_MS = 10_000;

/** How much longer a new maintenance waits for its announcement before its first status (see above). */
function announcementGraceLeft(input: ApprovalInput, announced: boolean): number | undefined {
  const { m, server, claim, now } = input;
  if (announced || !claim || !server?.spec.serverClaimRef) return undefined;
  if (findCondition(m.status?.conditions, C.Approved)) return undefined;
  const created = parseTime(m.metadata.creationTimestamp);
  const left = created === undefined ? 0 : created + ANNOUNCE_GRACE_MS - now.getTime();
  return left > 0 ? left : undefined;
}

export function decideApproval(input: ApprovalInput): ApprovalPlan {
  const { m, server, claim, now } = input;
  const plan: ApprovalPlan = { events: [] };
  if (frozen(m)) return plan;
  const previous = ownedApprovalStatus(m);
  const announcement = announcementOf(claim, uidOf(m));
  const never = !findCondition(m.status?.conditions, C.Approved);
  const graceLeft = announcementGraceLeft(input, announcement !== undefined);
  if (graceLeft !== undefined) return { events: [], requeueAfterMs: graceLeft };
  const condition = (c: ConditionInput) => makeCondition(m.status?.conditions, c, now, m.metadata.generation);
  const announced = condition(announcedCondition(m, server, claim));
  const approved = approvedCondition(input, previous, plan);
  const next: ApprovalStatus = {
    ...compact({
      announcedAt: announcement?.announcedAt,
      notBefore: m.spec.approval?.notBefore,
      deadline: announcement?.deadline,
      approval: approved.approval,
    }),
    conditions: [announced, condition(approved.condition)],
  };
  if (announcement && !previous.announcedAt) {
    // Announced and approved in one write (a maintenance that needs no answer): one Event says both.
    const approvedNow = plan.events.find((e) => !e.onClaim && e.type === 'Normal');
    if (approvedNow) approvedNow.note = `${announced.message}; ${approvedNow.note}`;
    else plan.events.push({ onClaim: false, type: 'Normal', reason: 'Announced', note: announced.message });
  }
  if (never || canonical(previous) !== canonical(next)) plan.status = next;
  return plan;
}

function ownerApproval(claim: ServerClaim | undefined, uid: string) {
  return claim?.spec.maintenance?.approvals?.find((a) => a.maintenanceUID === uid);
}
