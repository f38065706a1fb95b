// The budget controller's decision lines (docs/controllers.md, "Logs"): a domain of a budget running
// out of room or having room again, a budget paused or resumed, a grant dropped. One line per change,
// read from the status as it was and as it is written, never per reconcile. Pure: the reconciler
// writes them through its sampled DecisionLog once the write succeeded.
import type { LedgerEntry } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { DomainStatus } from '../../api/maintenance/v1alpha1/disruptionbudget-common.js';
import type { Condition } from '../../api/schema/common.js';
import type { DecisionLine } from '../../lib/log-sampling.js';
import type { AnyBudget } from '../../contract/budgets.js';
import { findCondition } from '../../contract/conditions.js';
import { BudgetConditions } from '../../contract/names.js';
import type { ComputedStatus, ExpiryReason } from './decide.js';

/** `kind namespace/name`, the budget field of every line. */
export function budgetName(kind: string, namespace: string, name: string): string {
  return `${kind} ${namespace ? `${namespace}/` : ''}${name}`;
}

function domainLine(budget: string, d: DomainStatus, exhausted: boolean): DecisionLine {
  const fields = {
    budget,
    domain: d.name,
    expected: d.expected,
    unavailable: d.unavailable,
    granted: d.granted,
  };
  return exhausted
    ? {
        level: 'warn',
        key: 'BudgetExhausted',
        fields,
        msg: 'budget exhausted: no more disruptions allowed in domain',
      }
    : {
        level: 'info',
        key: 'BudgetRoom',
        fields: { ...fields, allowed: d.allowed },
        msg: 'budget has room again in domain',
      };
}

/**
 * Per domain, a line when its `allowed` crosses zero; a domain seen for the first time only when it
 * starts with no room. A pause or its end is one line for the budget.
 */
export function budgetStatusLines(
  budget: string,
  before: AnyBudget['status'],
  next: ComputedStatus,
): DecisionLine[] {
  const lines: DecisionLine[] = [];
  const was = new Map((before?.domains ?? []).map((d) => [d.name, d]));
  for (const d of next.domains) {
    const prev = was.get(d.name);
    const hadRoom = prev ? prev.allowed > 0 : true;
    if (hadRoom !== d.allowed > 0) lines.push(domainLine(budget, d, d.allowed === 0));
  }
  const paused = (c: readonly Condition[] | undefined) =>
    findCondition(c, BudgetConditions.DisruptionAllowed)?.reason === 'Paused';
  const pausedBefore = paused(before?.conditions);
  const pausedNow = paused(next.conditions);
  if (pausedNow !== pausedBefore)
    lines.push(
      pausedNow
        ? { level: 'warn', key: 'BudgetPaused', fields: { budget }, msg: 'budget paused: it grants nothing' }
        : { level: 'info', key: 'BudgetResumed', fields: { budget }, msg: 'budget resumed' },
    );
  return lines;
}

/** A line per dropped grant: at warn for one whose maintenance never started within the TTL. */
export function grantExpiryLines(
  budget: string,
  drop: readonly { entry: LedgerEntry; reason: ExpiryReason }[],
): DecisionLine[] {
  return drop.map(({ entry, reason }) => {
    const fields = {
      budget,
      maintenance: `${entry.maintenance.namespace}/${entry.maintenance.name}`,
      server: entry.server,
      grantedAt: entry.grantedAt,
      reason,
    };
    return reason === 'ttl'
      ? {
          level: 'warn',
          key: 'GrantExpired',
          fields,
          msg: 'grant expired: its maintenance did not reach InMaintenance within the grant TTL',
        }
      : { level: 'info', key: 'GrantReleased', fields, msg: 'grant dropped: its maintenance has ended' };
  });
}
