// The maintenance gate: may this boot touch its server now, must it wait, or has its reason to
// exist ended? The webhook refuses a ServerBoot on a claimed server without that server's
// InMaintenance maintenance; the controller checks again on every reconcile because the world
// moves after admission (the maintenance completes, the server gets claimed).
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { ServerBoot } from './model.js';

export type Gate =
  | { kind: 'open' }
  /** Not yet: the boot waits in Pending (nothing was changed). */
  | { kind: 'hold'; reason: string; message: string }
  /** The boot is over: restore and complete. */
  | { kind: 'end'; reason: string; message: string };

/** True once the boot may have changed something on the machine. */
export function hasStarted(boot: ServerBoot): boolean {
  const phase = boot.status?.phase ?? 'Pending';
  return phase !== 'Pending';
}

function maintenanceGate(
  boot: ServerBoot,
  server: Server,
  m: ServerMaintenance | undefined,
  started: boolean,
): Gate {
  const name = `${boot.metadata.namespace ?? ''}/${boot.spec.maintenanceRef?.name ?? ''}`;
  const stop = (reason: string, message: string, holdReason = reason): Gate =>
    started ? { kind: 'end', reason, message } : { kind: 'hold', reason: holdReason, message };
  if (!m) return stop('MaintenanceGone', `maintenance ${name} does not exist`, 'MaintenanceNotFound');
  if (m.spec.serverRef.name !== server.metadata.name) {
    return stop('MaintenanceMismatch', `maintenance ${name} is for server ${m.spec.serverRef.name}`);
  }
  const state = m.status?.state ?? 'Pending';
  if (m.metadata.deletionTimestamp) {
    return { kind: 'end', reason: 'MaintenanceEnded', message: `maintenance ${name} is being deleted` };
  }
  if (state === 'InMaintenance') return { kind: 'open' };
  if (state === 'Completed' || state === 'Failed') {
    return { kind: 'end', reason: 'MaintenanceEnded', message: `maintenance ${name} is ${state}` };
  }
  return stop(
    'MaintenanceEnded',
    started
      ? `maintenance ${name} left InMaintenance (now ${state})`
      : `maintenance ${name} is ${state}, not InMaintenance`,
    'WaitingForMaintenance',
  );
}

export function evaluateGate(
  boot: ServerBoot,
  server: Server | undefined,
  m: ServerMaintenance | undefined,
): Gate {
  const started = hasStarted(boot);
  if (!server) {
    const message = `server ${boot.spec.serverRef.name} does not exist`;
    return started
      ? { kind: 'end', reason: 'ServerGone', message }
      : { kind: 'hold', reason: 'ServerNotFound', message };
  }
  if (boot.spec.maintenanceRef) return maintenanceGate(boot, server, m, started);
  const claim = server.spec.serverClaimRef;
  if (!claim) return { kind: 'open' };
  const message = `server ${server.metadata.name} is claimed by ${claim.namespace}/${claim.name} and the boot names no maintenance (spec.maintenanceRef)`;
  return started
    ? { kind: 'end', reason: 'ServerClaimed', message }
    : { kind: 'hold', reason: 'ClaimedWithoutMaintenance', message };
}
