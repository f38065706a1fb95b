// The approval controller's decision lines (docs/controllers.md, "Logs"): what an operator looks for
// when a server was or was not taken, one line per change of the Approved condition's reason, never
// per reconcile. Pure: the reconciler writes them through its sampled DecisionLog once the status that
// carries the decision is written.
import type { Condition } from '../../api/schema/common.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { DecisionLine } from '../../lib/log-sampling.js';
import { findCondition } from '../../contract/conditions.js';
import { MaintenanceConditions as C, qualified } from '../../contract/names.js';
import type { ApprovalStatus } from './decide.js';

/** Reasons an operator must look at: the server is taken without its owner's answer, or cannot proceed. */
const WARN_REASONS = new Set(['DeadlineReached', 'ClaimNotFound', 'ServerNotFound']);

function approvedLine(
  now: Condition,
  next: ApprovalStatus,
  fields: Record<string, unknown>,
  level: DecisionLine['level'],
): DecisionLine {
  const approval = next.approval;
  if (approval) fields.source = approval.source;
  if (approval?.approvedBy) fields.approvedBy = approval.approvedBy;
  return { level, key: now.reason, fields, msg: `maintenance approved: ${approval?.source ?? now.reason}` };
}

/** The line for a change of the Approved condition from `before` to what `next` carries, if any. */
export function approvalDecisionLines(
  m: ServerMaintenance,
  before: readonly Condition[] | undefined,
  next: ApprovalStatus,
): DecisionLine[] {
  const now = findCondition(next.conditions, C.Approved);
  if (!now) return [];
  const was = findCondition(before, C.Approved);
  if (was?.status === now.status && was.reason === now.reason) return [];
  const maintenance = qualified(m.metadata.namespace, m.metadata.name);
  const level = WARN_REASONS.has(now.reason) ? 'warn' : 'info';
  const fields: Record<string, unknown> = { maintenance, server: m.spec.serverRef.name, reason: now.reason };
  if (was) fields.was = was.reason;
  if (now.status === 'True') return [approvedLine(now, next, fields, level)];
  fields.message = now.message;
  // An approval taken back (a withdrawn owner approval, a claim that turned to manual): the server is
  // no longer free to go, which an operator waiting on it wants to see at warn.
  if (was?.status === 'True')
    return [
      {
        level: 'warn',
        key: 'ApprovalWithdrawn',
        fields,
        msg: `maintenance approval withdrawn: ${now.reason}`,
      },
    ];
  const what = now.reason === 'Deferred' ? 'deferred by its owner' : `not approved: ${now.reason}`;
  return [{ level, key: now.reason, fields, msg: `maintenance ${what}` }];
}
