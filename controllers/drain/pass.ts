// Small rules of the drain reconciler's passes, kept apart from its I/O (reconciler.ts): when to look
// at a claim again, which phases warn, whether a status write would change anything.
import type { ReconcileResult } from '../../lib/kube/controller.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { DrainPhase } from '../../api/maintenance/v1alpha1/drain-status.js';
import { MaintenanceConditions } from '../../contract/names.js';
import { findCondition, type makeCondition } from '../../contract/conditions.js';
import type { DrainPlan, DrainSettlement, WorkloadView } from './decide.js';
import { WorkloadUnavailable } from './workload.js';

export function unreachable(e: Error): WorkloadView {
  const message =
    e instanceof WorkloadUnavailable ? e.message : `workload cluster API unreachable: ${e.message}`;
  return { kind: 'unreachable', message: message.slice(0, 1024) };
}

/** When to look at a claim again after a pass. */
export function nextPass(
  plan: DrainPlan,
  s: DrainSettlement,
  view: WorkloadView['kind'],
  seen: boolean,
  now: number,
): ReconcileResult | undefined {
  // Level-triggered on our own write: until the cached claim shows what we hold (an apply just
  // made, or one refused), look again shortly rather than wait for a change that may not come.
  if (!seen && plan.active.length > 0) return { requeueAfterMs: 2000, reason: 'claim not yet confirmed' };
  if (plan.active.length === 0) {
    // An unreachable cluster is asked again, in case we still have to uncordon.
    if (view === 'unreachable') return { requeueAfterMs: 10_000, reason: 'unreachable' };
    if (plan.waitUntil !== undefined) return { requeueAfterMs: plan.waitUntil - now, reason: 'lead time' };
    // A GEP-31 handshake of ours still on the Node: MCM's last step is watched for by polling.
    return plan.handshake?.pending
      ? { requeueAfterMs: 2000, reason: 'in-place update finishing' }
      : undefined;
  }
  return s.requeueAfterMs !== undefined ? { requeueAfterMs: s.requeueAfterMs, reason: s.phase } : undefined;
}

/** Phases announced with a Warning Event. */
export const WARNING_PHASES = new Set<DrainPhase>(['TimedOut', 'Unreachable', 'NodeNotFound', 'Proceeded']);

export function sameCondition(m: ServerMaintenance, c: ReturnType<typeof makeCondition>): boolean {
  const old = findCondition(m.status?.conditions, MaintenanceConditions.Drained);
  return old?.status === c.status && old.reason === c.reason && old.message === c.message;
}

export function sameDrain(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}
