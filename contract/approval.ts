// Approval: whether the claim owner's side lets a maintenance start now. One verdict, one deadline rule
// and one deferral rule, shared by the webhook (which decides the InMaintenance transition from the
// claim itself) and the approval controller (which announces the deadline and writes the verdict to
// status), so the two can never disagree.
import type { MaintenanceClass, ServerMaintenance } from '../api/maintenance/v1alpha1/servermaintenance.js';
import type { Server } from '../api/metal/v1alpha1/server.js';
import type { ApprovalSource, MaintenanceDeferral, ServerClaim } from '../api/metal/v1alpha1/serverclaim.js';
import type { AutoApprovalRule, Policy } from '../policies/schema.js';
import { classPolicy, durationMs } from '../lib/policy/durations.js';
import { announcementOf } from './announcements.js';
import { Codes, type Code } from './codes.js';
import { qualified } from './names.js';
import { parseTime } from './time.js';

export type ApprovalVerdict =
  | { ok: true; source: ApprovalSource; detail?: string }
  | { ok: false; code: Code; message: string; retryAt?: number };

/**
 * The deadline the tenant works against (epoch ms), the one rule for it: `told` (the deadline the
 * announcement told the tenant), else spec.approval.deadline, else announcedAt + the class deadline;
 * never earlier than announcedAt + the class minNotice. The approval controller announces it; the
 * webhook reads the announced one back through effectiveDeadline.
 */
export function deadlineOf(m: ServerMaintenance, announcedAt: number, policy: Policy, told?: string): number {
  const cls = classPolicy(policy, m.spec.class);
  const stated =
    parseTime(told) ?? parseTime(m.spec.approval?.deadline) ?? announcedAt + durationMs(cls.deadline);
  return Math.max(stated, announcedAt + durationMs(cls.minNotice));
}

/**
 * The deadline of a maintenance as announced to the claim (deadlineOf the announcement). Undefined
 * while it is not announced: no deadline runs before the tenant knows.
 */
export function effectiveDeadline(
  m: ServerMaintenance,
  claim: ServerClaim | undefined,
  policy: Policy,
): number | undefined {
  const announcement = announcementOf(claim, m.metadata.uid ?? '');
  const announcedAt = parseTime(announcement?.announcedAt);
  if (announcedAt === undefined) return undefined;
  return deadlineOf(m, announcedAt, policy, announcement?.deadline);
}

/**
 * The claim's deferral of maintenance `uid` while it is in force: before its `until` and before the
 * deadline (a deferral never outlasts the deadline). Undefined otherwise. A deferral in force blocks
 * even an approved maintenance.
 */
export function deferralInForce(
  claim: ServerClaim,
  uid: string,
  deadline: number | undefined,
  now: number,
): { deferral: MaintenanceDeferral; until: number } | undefined {
  const deferral = claim.spec.maintenance?.deferrals?.find((d) => d.maintenanceUID === uid);
  const until = parseTime(deferral?.until);
  if (!deferral || until === undefined || now >= until || (deadline !== undefined && now >= deadline))
    return undefined;
  return { deferral, until };
}

export function approvalRequired(m: ServerMaintenance, policy: Policy): boolean {
  return m.spec.approval?.required ?? classPolicy(policy, m.spec.class).approvalRequired;
}

/** An ownerReference, a consumer label or annotation, or a write by a consumer's field manager. */
export function hasConsumer(claim: ServerClaim, policy: Policy): boolean {
  if ((claim.metadata.ownerReferences ?? []).length > 0) return true;
  const { consumerLabels, consumerFieldManagers } = policy.autoApproval;
  const { labels = {}, annotations = {}, managedFields = [] } = claim.metadata;
  if (consumerLabels.some((k) => Object.hasOwn(labels, k) || Object.hasOwn(annotations, k))) return true;
  return managedFields.some((f) => f.manager !== undefined && consumerFieldManagers.includes(f.manager));
}

function ruleHolds(
  rule: AutoApprovalRule,
  cls: MaintenanceClass,
  claim: ServerClaim,
  answered: boolean,
  policy: Policy,
): boolean {
  if (!rule.classes.includes(cls)) return false;
  if (rule.namespaces && !rule.namespaces.includes(claim.metadata.namespace ?? '')) return false;
  return rule.when === 'NoConsumer' ? !hasConsumer(claim, policy) : !answered;
}

/** The first auto-approval rule that applies now, and the earliest time one would apply otherwise. */
function autoApproval(
  m: ServerMaintenance,
  claim: ServerClaim,
  announcedAt: number,
  policy: Policy,
  now: number,
): { rule?: string; next?: number } {
  const uid = m.metadata.uid ?? '';
  const owner = claim.spec.maintenance;
  const answered = [...(owner?.approvals ?? []), ...(owner?.deferrals ?? [])].some(
    (x) => x.maintenanceUID === uid,
  );
  let next: number | undefined;
  for (const rule of policy.autoApproval.rules) {
    if (!ruleHolds(rule, m.spec.class ?? 'Planned', claim, answered, policy)) continue;
    const at = announcedAt + durationMs(rule.after);
    if (now >= at) return { rule: rule.name };
    next = Math.min(next ?? Infinity, at);
  }
  return next === undefined ? {} : { next };
}

/** The denial of a deferral in force (see deferralInForce). */
function deferralDenial(
  claim: ServerClaim,
  claimName: string,
  uid: string,
  deadline: number | undefined,
  t: number,
): ApprovalVerdict | undefined {
  const live = deferralInForce(claim, uid, deadline, t);
  if (!live) return undefined;
  return {
    ok: false,
    code: Codes.DEFERRED,
    message: `claim ${claimName} deferred this maintenance until ${live.deferral.until}`,
    retryAt: live.until,
  };
}

/** Approval that does not come from the owner's explicit entry: standing mode, deadline, policy rules. */
function implicitApproval(
  m: ServerMaintenance,
  claim: ServerClaim,
  claimName: string,
  deadline: number | undefined,
  policy: Policy,
  t: number,
): ApprovalVerdict {
  const announcement = announcementOf(claim, m.metadata.uid ?? '');
  if (!announcement) {
    return {
      ok: false,
      code: Codes.APPROVAL_MISSING,
      message: `maintenance is not announced to claim ${claimName} yet; it needs the claim's approval`,
      retryAt: t + 30_000,
    };
  }
  const mode = claim.spec.maintenance?.approvalMode ?? policy.approval.defaultMode;
  if (mode === 'Automatic') return { ok: true, source: 'Standing' };
  if (deadline !== undefined && t >= deadline) return { ok: true, source: 'Deadline' };
  const auto = autoApproval(m, claim, parseTime(announcement.announcedAt) ?? t, policy, t);
  if (auto.rule) return { ok: true, source: 'Policy', detail: auto.rule };
  const retryAt = Math.min(deadline ?? Infinity, auto.next ?? Infinity);
  const when =
    deadline !== undefined ? `; it proceeds without approval at ${new Date(deadline).toISOString()}` : '';
  return {
    ok: false,
    code: Codes.APPROVAL_MISSING,
    message: `claim ${claimName} has not approved this maintenance${when}`,
    ...(Number.isFinite(retryAt) ? { retryAt } : {}),
  };
}

/** Whether the claim owner's side lets the maintenance start now (see docs/webhook.md, "Eviction"). The webhook
 * decides the InMaintenance transition with it; the approval controller writes its outcome to status.. */
export function approvalVerdict(
  m: ServerMaintenance,
  server: Server,
  claim: ServerClaim | undefined,
  policy: Policy,
  now: Date,
): ApprovalVerdict {
  const claimRef = server.spec.serverClaimRef;
  if (!claimRef || !approvalRequired(m, policy)) return { ok: true, source: 'NotRequired' };
  const claimName = qualified(claimRef.namespace, claimRef.name);
  const t = now.getTime();
  if (!claim) {
    return {
      ok: false,
      code: Codes.CLAIM_NOT_FOUND,
      message: `claim ${claimName} of server ${server.metadata.name ?? ''} is not known (yet)`,
      retryAt: t + 10_000,
    };
  }
  const uid = m.metadata.uid ?? '';
  const deadline = effectiveDeadline(m, claim, policy);
  const deferred = deferralDenial(claim, claimName, uid, deadline, t);
  if (deferred) return deferred;
  const approval = claim.spec.maintenance?.approvals?.find((a) => a.maintenanceUID === uid);
  if (approval)
    return { ok: true, source: 'Owner', ...(approval.approvedBy ? { detail: approval.approvedBy } : {}) };
  return implicitApproval(m, claim, claimName, deadline, policy, t);
}
