// Undo for deleted and failed maintenances: their failure, their completion and their grants' release.
import type { BudgetRef, ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import { MaintenanceConditions as C } from '../../../contract/names.js';
import { rfc3339 } from '../../../contract/time.js';
import { refKey } from '../../../contract/budgets.js';
import { isDeleting, stateOf, uidOf } from '../../../contract/lifecycle.js';
import { type Sets, enteredStateAt } from './classify.js';
import { type OwnedStatus, type ServerInput, type ServerPlan, outlivesUs } from './model.js';
import { StatusBuilder } from './status.js';

export function refsToRelease(m: ServerMaintenance, grants: ServerInput['grants']): BudgetRef[] {
  const seen = new Map<string, BudgetRef>();
  for (const g of grants.get(uidOf(m)) ?? []) seen.set(refKey(g.ref), g.ref);
  for (const r of m.status?.grant?.budgets ?? []) seen.set(refKey(r), r);
  return [...seen.values()];
}

export function planFailures(input: ServerInput, sets: Sets, plan: ServerPlan): void {
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

export function completedStatus(m: ServerMaintenance, now: Date): OwnedStatus {
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
export function planReleasers(
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
