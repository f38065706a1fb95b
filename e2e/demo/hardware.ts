// The demo's simulated hardware for the firmware acts: one BMC simulator in the demo's process
// (e2e/sim/bmc), its CA written where the firmware controller reads it, and the BMC objects the
// controller reaches it through. Layout: one single-System BMC per server of the seeded fleet (index =
// the server's place in the plan), then the chassis act 7 adds, several Systems behind each BMC.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '../../api/schema/meta.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import { REDFISH_PATH_PREFIX_ANNOTATION } from '../../controllers/shared/bmc-access.js';
import type { KubeClient } from '../../lib/kube/client.js';
import { BMCResource, BMCSecretResource, ServerResource } from '../../lib/kube/kinds.js';
import type { SimHost } from '../sim/bmc/model.js';
import { startBmcSimulator, type BmcSimulator } from '../sim/bmc/server.js';
import { createOrKeep } from '../sim/fleet/fleet.js';

/** Systems behind each BMC of a chassis rack (act 7): two 3-node chassis and two 2-node ones. */
export const RACK_CHASSIS = [3, 3, 2, 2] as const;
export const CHASSIS_RACKS = 3;
/** 30 servers on 12 BMCs. */
export const CHASSIS_LAYOUT: readonly number[] = Array.from(
  { length: CHASSIS_RACKS },
  () => RACK_CHASSIS,
).flat();

export interface Hardware {
  sim: BmcSimulator;
  /** The simulator's CA (PEM file), pinned by the firmware controller (--bmc-ca-file). */
  caFile: string;
  /** BMC index of the first chassis. */
  chassisBase: number;
}

export async function startHardware(dir: string, fleetServers: number): Promise<Hardware> {
  const sim = await startBmcSimulator({
    count: fleetServers + CHASSIS_LAYOUT.length,
    systems: (i) => (i < fleetServers ? 1 : CHASSIS_LAYOUT[i - fleetServers]!),
    // Slow enough that a flash is seen on screen, fast enough for the demo's four minutes.
    timing: { updateMs: 1500, restartMs: 300, powerOnMs: 200, managerResetOutageMs: 800 },
  });
  const caFile = join(dir, 'bmc-ca.pem');
  writeFileSync(caFile, sim.ca);
  return { sim, caFile, chassisBase: fleetServers };
}

/** The BMC object behind simulated BMC `i`. */
export const bmcName = (i: number) => `bmc-${String(i).padStart(2, '0')}`;

/** Creates BMC `i`'s object and secret (kept if there) and points each server at its System. */
export async function attachBmc(
  admin: KubeClient,
  hw: Hardware,
  i: number,
  servers: readonly string[],
): Promise<void> {
  const name = bmcName(i);
  const { username, password } = hw.sim.credentials;
  await createOrKeep(() =>
    admin.resource(BMCSecretResource).create({
      metadata: { name },
      data: {
        username: Buffer.from(username).toString('base64'),
        password: Buffer.from(password).toString('base64'),
      },
    } as KubeObject),
  );
  await createOrKeep(() =>
    admin.resource(BMCResource).create({
      metadata: { name, annotations: { [REDFISH_PATH_PREFIX_ANNOTATION]: `/bmc/${i}` } },
      spec: {
        access: { ip: '127.0.0.1' },
        protocol: { name: 'Redfish', port: Number(new URL(hw.sim.url).port), scheme: 'https' },
        bmcSecretRef: { name },
      },
    } as KubeObject),
  );
  const systems = hw.sim.servers().filter((s) => s.bmc === i);
  if (systems.length < servers.length)
    throw new Error(`${name} has ${systems.length} Systems, not ${servers.length}`);
  await Promise.all(
    servers.map((server, k) =>
      admin.resource<Server>(ServerResource).patch(server, {
        spec: { bmcRef: { name }, systemURI: `/redfish/v1/Systems/${systems[k]!.system}` },
      }),
    ),
  );
}

/** The simulated System behind a server attachBmc pointed at it (undefined if it was not). */
export function hostOf(hw: Hardware, server: Server): SimHost | undefined {
  const bmc = /^bmc-(\d+)$/.exec(server.spec.bmcRef?.name ?? '')?.[1];
  const system = server.spec.systemURI?.split('/').pop();
  return bmc === undefined || !system ? undefined : hw.sim.bmc(Number(bmc)).host(system);
}
