// Objects and waits shared by the boot controller's integration tests: a Server whose BMC is one
// simulated BMC (BMC + BMCSecret + path-prefix annotation), maintenances in a given state,
// ServerBoots, and polling of their status.
import { ServerBootKind, type ServerBoot } from '../../../api/maintenance/v1alpha1/serverboot.js';
import {
  ServerMaintenanceKind,
  type ServerMaintenance,
} from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import { BMCKind, type BMC } from '../../../api/metal/v1alpha1/bmc.js';
import { BMCSecretKind, type BMCSecret } from '../../../api/metal/v1alpha1/bmcsecret.js';
import { ServerKind, type Server } from '../../../api/metal/v1alpha1/server.js';
import type { Condition } from '../../../api/schema/common.js';
import { uniqueName, waitFor } from '../../../e2e/harness/env.js';
import type { BmcSimulator } from '../../../e2e/sim/bmc/server.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import { Core, resourceOf } from '../../../lib/kube/resources.js';
import type { KubeObject } from '../../../api/schema/meta.js';
import { REDFISH_PATH_PREFIX_ANNOTATION } from '../../../controllers/boot/model.js';

export const servers = (c: KubeClient) => c.resource<Server>(resourceOf(ServerKind));
export const bmcs = (c: KubeClient) => c.resource<BMC>(resourceOf(BMCKind));
export const secrets = (c: KubeClient) => c.resource<BMCSecret>(resourceOf(BMCSecretKind));
export const maintenances = (c: KubeClient) =>
  c.resource<ServerMaintenance>(resourceOf(ServerMaintenanceKind));
export const boots = (c: KubeClient) => c.resource<ServerBoot>(resourceOf(ServerBootKind));

export interface SimServer {
  name: string;
  index: number;
}

/** A Server reached through BMC object -> simulated BMC `index`; optionally claimed. */
export async function simServer(
  admin: KubeClient,
  sim: BmcSimulator,
  index: number,
  opts: { claimed?: { namespace: string; name: string } } = {},
): Promise<SimServer> {
  const name = uniqueName(`srv${index}`);
  const port = Number(new URL(sim.url).port);
  await secrets(admin).create({
    metadata: { name },
    data: {
      username: Buffer.from(sim.credentials.username).toString('base64'),
      password: Buffer.from(sim.credentials.password).toString('base64'),
    },
  });
  await bmcs(admin).create({
    metadata: { name, annotations: { [REDFISH_PATH_PREFIX_ANNOTATION]: `/bmc/${index}` } },
    spec: {
      access: { ip: '127.0.0.1' },
      protocol: { name: 'Redfish', port, scheme: 'https' },
      bmcSecretRef: { name },
    },
  });
  await servers(admin).create({
    metadata: { name },
    spec: {
      systemUUID: name,
      bmcRef: { name },
      ...(opts.claimed ? { serverClaimRef: opts.claimed } : {}),
    },
  });
  return { name, index };
}

/** A ServerMaintenance for `server` whose status says `state` (written as the test's admin). */
export async function maintenance(
  admin: KubeClient,
  namespace: string,
  server: string,
  state: string,
): Promise<ServerMaintenance> {
  const name = uniqueName('sm');
  const created = await maintenances(admin).create({
    metadata: { name, namespace },
    spec: { serverRef: { name: server }, reason: 'FirmwareUpdate', class: 'Emergency' },
  });
  return setMaintenanceState(admin, created, state);
}

export async function setMaintenanceState(
  admin: KubeClient,
  m: ServerMaintenance,
  state: string,
): Promise<ServerMaintenance> {
  const current = await maintenances(admin).get(m.metadata.name!, m.metadata.namespace);
  return maintenances(admin).replaceStatus({ ...current, status: { ...current.status, state } });
}

export async function createBoot(
  admin: KubeClient,
  namespace: string,
  spec: ServerBoot['spec'],
  name = uniqueName('boot'),
): Promise<ServerBoot> {
  return boots(admin).create({ metadata: { name, namespace }, spec });
}

export function condition(b: ServerBoot | undefined, type: string): Condition | undefined {
  return b?.status?.conditions?.find((c) => c.type === type);
}

/** Polls the boot until `pred` holds; the failure message shows the last status. */
export async function waitForBoot(
  admin: KubeClient,
  b: ServerBoot,
  what: string,
  pred: (b: ServerBoot) => boolean,
  timeoutMs = 20_000,
): Promise<ServerBoot> {
  let last: ServerBoot | undefined;
  try {
    return await waitFor(
      what,
      async () => {
        last = await boots(admin).get(b.metadata.name!, b.metadata.namespace);
        return pred(last) ? last : undefined;
      },
      { timeoutMs, intervalMs: 100 },
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}; last status: ${JSON.stringify(last?.status)}`, { cause: e });
  }
}

export const inPhase = (phase: string) => (b: ServerBoot) => b.status?.phase === phase;

export interface EventLike extends KubeObject {
  reason: string;
  note?: string;
  type: string;
  regarding: { name?: string; kind?: string };
}

export async function eventsOf(admin: KubeClient, b: ServerBoot): Promise<EventLike[]> {
  const list = await admin.resource<EventLike>(Core.Event).list({ namespace: b.metadata.namespace });
  return list.items.filter((e) => e.regarding.kind === 'ServerBoot' && e.regarding.name === b.metadata.name);
}
