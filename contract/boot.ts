// ServerMaintenance.spec.boot -> the ServerBoot that carries it out, and the labels that tie the two.
// The maintenance controller calls this and creates the result (AlreadyExists means it is there) and
// finds its boots by BOOT_MAINTENANCE_UID_LABEL; the boot controller does the rest. The ServerBoot is owned by its maintenance, so deleting the maintenance deletes the
// boot, and the boot's finalizer restores the server's boot settings on the way out.
import { createHash } from 'node:crypto';
import { MAINTENANCE_GROUP, MAINTENANCE_VERSION } from '../api/maintenance/v1alpha1/group.js';
import type { ServerMaintenance } from '../api/maintenance/v1alpha1/servermaintenance.js';
import { defineError } from '../lib/errors.js';
import type { ServerBoot } from '../api/maintenance/v1alpha1/serverboot.js';

/** Name of the ServerMaintenance a ServerBoot was made for. */
export const BOOT_MAINTENANCE_LABEL = 'maintenance.metal.ironcore.dev/maintenance';
/** uid of that maintenance: the name can be reused, the uid cannot. */
export const BOOT_MAINTENANCE_UID_LABEL = 'maintenance.metal.ironcore.dev/maintenance-uid';
/** The server the boot is for, to list a server's boots with a selector. */
export const BOOT_SERVER_LABEL = 'maintenance.metal.ironcore.dev/server';

export const maintenanceNotStored = defineError(
  'METAL_ERR_BOOT_MAINTENANCE_NOT_STORED',
  (what: string) => `a ServerBoot can only be made for a stored ServerMaintenance: ${what} is missing`,
);

const MAX_NAME = 253;
const MAX_LABEL = 63;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function hash(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/** `text` if it fits in `max`, else a prefix of it plus a hash of all of it (stable, unique). */
function fit(text: string, max: number): string {
  if (text.length <= max) return text;
  const suffix = `-${hash(text, 10)}`;
  return text.slice(0, max - suffix.length).replace(/[-_.]+$/, '') + suffix;
}

/** A label value for `text`: itself when valid, else a fitted form that is. */
export function labelValue(text: string): string {
  if (text.length <= MAX_LABEL && LABEL_VALUE.test(text)) return text;
  const fitted = fit(text, MAX_LABEL).replace(/^[^A-Za-z0-9]+/, '');
  return LABEL_VALUE.test(fitted) ? fitted : hash(text, 20);
}

/** The ServerBoot of a maintenance is `<maintenance>-boot` (shortened with a hash past 253). */
export function serverBootName(maintenanceName: string): string {
  return fit(`${maintenanceName}-boot`, MAX_NAME);
}

export interface FromMaintenanceOptions {
  /** spec.phaseTimeout of the boot; unset: the boot controller's policy default. */
  phaseTimeout?: string;
}

/**
 * The ServerBoot for `m`, or undefined when the maintenance names no boot image. Pinned and
 * restored: while the maintenance lasts every reboot comes back into the image, and the previous
 * boot settings return when it ends.
 */
export function serverBootFromMaintenance(
  m: ServerMaintenance,
  options: FromMaintenanceOptions = {},
): ServerBoot | undefined {
  const boot = m.spec.boot;
  if (!boot) return undefined;
  const { name, namespace, uid } = m.metadata;
  if (!name) throw maintenanceNotStored('metadata.name');
  if (!namespace) throw maintenanceNotStored('metadata.namespace');
  if (!uid) throw maintenanceNotStored('metadata.uid');
  const server = m.spec.serverRef.name;
  return {
    apiVersion: `${MAINTENANCE_GROUP}/${MAINTENANCE_VERSION}`,
    kind: 'ServerBoot',
    metadata: {
      name: serverBootName(name),
      namespace,
      labels: {
        [BOOT_MAINTENANCE_LABEL]: labelValue(name),
        [BOOT_MAINTENANCE_UID_LABEL]: uid,
        [BOOT_SERVER_LABEL]: labelValue(server),
      },
      ownerReferences: [
        {
          apiVersion: `${MAINTENANCE_GROUP}/${MAINTENANCE_VERSION}`,
          kind: 'ServerMaintenance',
          name,
          uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      serverRef: { name: server },
      maintenanceRef: { name },
      method: boot.method ?? 'VirtualMedia',
      image: boot.image,
      pin: true,
      restore: true,
      ...(options.phaseTimeout ? { phaseTimeout: options.phaseTimeout } : {}),
    },
  };
}
