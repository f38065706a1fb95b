// The maintenances a firmware object asks for: one per server it touches (one for BIOS kinds,
// every server behind the BMC for BMC kinds), named after the object and its attempt, owned by it,
// reason FirmwareUpdate or SettingsChange, class from policy, serverMaintenancePolicy mapped to
// the typed approval. The gate says whether all of them are InMaintenance (all or none).
import { createHash } from 'node:crypto';
import {
  ServerMaintenanceKind,
  type ServerMaintenance,
} from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { qualified } from '../../contract/names.js';
import {
  ATTEMPT_LABEL,
  OWNER_LABEL,
  type FirmwareContext,
  type FirmwareKindName,
  type FirmwareObject,
  type FirmwareWorld,
} from './model.js';

const API_VERSION: Record<FirmwareKindName, string> = {
  BIOSVersion: 'system.metal.ironcore.dev/v1alpha1',
  BIOSSettings: 'system.metal.ironcore.dev/v1alpha1',
  BMCVersion: 'baseboard.metal.ironcore.dev/v1alpha1',
  BMCSettings: 'baseboard.metal.ironcore.dev/v1alpha1',
};

const SHORT: Record<FirmwareKindName, string> = {
  BIOSVersion: 'biosv',
  BIOSSettings: 'bioss',
  BMCVersion: 'bmcv',
  BMCSettings: 'bmcs',
};

/**
 * A DNS-1123 name for (object, server, attempt): readable when short, hashed when long. The object's
 * uid is in it: a child deleted and re-created under the same name (a Set re-stamping it, a run
 * re-stamping a changed stage) starts again at attempt 0, and the old child's maintenance of that
 * attempt may still be terminating (its finalizer); a shared name would make the create meet the old
 * one, and the new child would call its maintenance lost and burn an attempt.
 */
export function maintenanceName(
  kind: FirmwareKindName,
  obj: string,
  uid: string,
  server: string,
  attempt: number,
): string {
  const tag = uid.replace(/[^a-z0-9]/g, '').slice(0, 8);
  const plain = `${SHORT[kind]}-${obj}${kind.startsWith('BMC') ? `-${server}` : ''}${tag ? `-${tag}` : ''}-${attempt}`;
  if (plain.length <= 63) return plain;
  const hash = createHash('sha256').update(plain).digest('hex').slice(0, 10);
  return `${plain.slice(0, 50).replace(/[-.]+$/, '')}-${hash}`;
}

export function requestMaintenance(
  kind: FirmwareKindName,
  obj: FirmwareObject,
  server: string,
  attempt: number,
  ctx: FirmwareContext,
  /** Servers behind the BMC, for BMC kinds: the attempt's maintenances are admitted as one gang. */
  gangSize?: number,
): ServerMaintenance {
  const policy = obj.spec.serverMaintenancePolicy;
  // A BMC kind touches every server behind the BMC: none of them goes down unless all of them can
  // (the webhook grants the gang whole), so no partial gang holds budget slots while it waits.
  const gang =
    kind.startsWith('BMC') && gangSize !== undefined
      ? { gang: { name: gangName(obj.metadata.uid ?? '', attempt), size: gangSize } }
      : {};
  const what = kind.endsWith('Version')
    ? `${kind} ${obj.spec.version}`
    : `${kind} for version ${obj.spec.version}`;
  return {
    apiVersion: ServerMaintenanceKind.apiVersion,
    kind: ServerMaintenanceKind.kind,
    metadata: {
      name: maintenanceName(kind, obj.metadata.name ?? '', obj.metadata.uid ?? '', server, attempt),
      namespace: ctx.namespace,
      labels: { [OWNER_LABEL]: obj.metadata.uid ?? '', [ATTEMPT_LABEL]: String(attempt) },
      ownerReferences: [
        {
          apiVersion: API_VERSION[kind],
          kind,
          name: obj.metadata.name ?? '',
          uid: obj.metadata.uid ?? '',
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      serverRef: { name: server },
      reason: kind.endsWith('Version') ? 'FirmwareUpdate' : 'SettingsChange',
      class: ctx.policy.class,
      description: `${what} (${qualified(undefined, obj.metadata.name)}, attempt ${attempt + 1})`,
      ...(policy ? { approval: { required: policy === 'OwnerApproval' } } : {}),
      // The pin: a reboot the BMC starts during the update comes back into this image (#938).
      ...(ctx.policy.boot ? { boot: { ...ctx.policy.boot } } : {}),
      ...gang,
    },
  };
}

/** An attempt's gang: the object's uid (36 characters, a DNS label already) and the attempt. */
export const gangName = (uid: string, attempt: number) => `${uid}-a${attempt}`.toLowerCase().slice(0, 63);

export type Gate =
  /** Some maintenances do not exist yet: request them. */
  | { kind: 'request'; missing: ServerMaintenance[] }
  /** Not all InMaintenance yet; `since` is when the first one was (for the admission timeout). */
  | { kind: 'wait'; message: string; admitted: number; total: number }
  /** Every maintenance is InMaintenance: the object may touch the BMC. */
  | { kind: 'open' }
  /** A maintenance failed or vanished after it was admitted. */
  | { kind: 'lost'; message: string };

export function evaluateGate(
  kind: FirmwareKindName,
  obj: FirmwareObject,
  world: FirmwareWorld,
  attempt: number,
  ctx: FirmwareContext,
  requested: boolean,
): Gate {
  const missing: ServerMaintenance[] = [];
  const waiting: string[] = [];
  let admitted = 0;
  for (const server of world.servers) {
    const name = server.metadata.name ?? '';
    const m = world.maintenances.get(name);
    if (!m) {
      if (requested || world.runHeld)
        return { kind: 'lost', message: `the maintenance of server ${name} is gone` };
      missing.push(requestMaintenance(kind, obj, name, attempt, ctx, world.servers.length));
      continue;
    }
    const state = m.status?.state ?? 'Pending';
    if (state === 'Failed' || state === 'Completed' || m.metadata.deletionTimestamp) {
      return {
        kind: 'lost',
        message: `maintenance ${qualified(m.metadata.namespace, m.metadata.name)} is ${m.metadata.deletionTimestamp ? 'being deleted' : state}`,
      };
    }
    if (state === 'InMaintenance') admitted++;
    else waiting.push(`${name}: ${state}${m.status?.message ? ` (${m.status.message})` : ''}`);
  }
  if (missing.length > 0) return { kind: 'request', missing };
  if (waiting.length === 0) return { kind: 'open' };
  return {
    kind: 'wait',
    admitted,
    total: world.servers.length,
    message: `${admitted}/${world.servers.length} maintenances InMaintenance; waiting for ${waiting.slice(0, 5).join(', ')}${waiting.length > 5 ? ', …' : ''}`,
  };
}

/** The delete actions that release every maintenance of this attempt. */
export function releaseAll(world: FirmwareWorld) {
  // A run's maintenances outlive its children's stages: the run releases them.
  if (world.runHeld) return [];
  return [...world.maintenances.values()].map((m) => ({
    kind: 'deleteMaintenance' as const,
    namespace: m.metadata.namespace ?? '',
    name: m.metadata.name ?? '',
    uid: m.metadata.uid,
  }));
}

export function refsOf(missingOrAll: ServerMaintenance[]) {
  return missingOrAll.map((m) => ({ namespace: m.metadata.namespace ?? '', name: m.metadata.name ?? '' }));
}
