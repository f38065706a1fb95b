// The active maintenance: park, boot and readiness.
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import { serverBootFromMaintenance } from '../../../contract/boot.js';
import { findCondition, type ConditionInput } from '../../../contract/conditions.js';
import { MaintenanceConditions as C, OPERATION_ANNOTATION } from '../../../contract/names.js';
import { uidOf } from '../../../contract/lifecycle.js';
import { type OwnedStatus, type ParkMode, type ServerInput, type ServerPlan } from './model.js';
import { type ParkView } from './park.js';
import { StatusBuilder, statusChanged } from './status.js';

export function parkConditions(b: StatusBuilder, park: ParkView, mode: ParkMode): boolean {
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

export function bootReadiness(
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

export function grantOf(m: ServerMaintenance, grants: ServerInput['grants']): OwnedStatus['grant'] {
  const held = grants.get(uidOf(m)) ?? [];
  if (held.length === 0) return m.status?.grant;
  const grantedAt = held.map((g) => g.grantedAt).sort()[0]!;
  return { grantedAt, budgets: held.map((g) => g.ref) };
}

export function planActive(
  input: ServerInput,
  active: ServerMaintenance,
  park: ParkView,
  plan: ServerPlan,
): void {
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
