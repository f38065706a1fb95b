// The benchmark's fleet: N servers in racks (planFleet, with the fleet and per-rack budgets) behind
// M simulated BMCs (spread as evenly as the simulator spreads them), one BMC object per simulated
// BMC, each server's bmcRef and systemURI pointing at its System.
import type { KubeObject } from '../../api/schema/meta.js';
import { REDFISH_PATH_PREFIX_ANNOTATION } from '../../controllers/shared/bmc-access.js';
import type { KubeClient } from '../../lib/kube/client.js';
import { BMCResource, BMCSecretResource } from '../../lib/kube/kinds.js';
import type { SimTiming } from '../../e2e/sim/bmc/model.js';
import type { SimTls } from '../../e2e/sim/bmc/tls.js';
import { spread, startBmcSimulator, type BmcSimulator } from '../../e2e/sim/bmc/server.js';
import {
  FLEET_LABEL,
  createOrKeep,
  inParallel,
  planFleet,
  seedFleet,
  type FleetPlan,
} from '../../e2e/sim/fleet/fleet.js';
import { RACK_LABEL } from '../../e2e/sim/fleet/decisions.js';

export interface WorldOptions {
  /** Fleet label value and object name prefix, so a second fleet can share the API server. */
  name: string;
  servers: number;
  bmcs: number;
  rackSize: number;
  budget?: number;
  rackBudget?: number;
  timing: Partial<SimTiming>;
  /** One certificate for every world, so the controller pins one CA. */
  tls: SimTls;
  concurrency?: number;
  onProgress?: (done: number, total: number) => void;
}

export interface World {
  plan: FleetPlan;
  sim: BmcSimulator;
  /** BMC object name of simulated BMC i. */
  bmcNames: string[];
  /** Per server (plan order): its rack and its simulated BMC's index, for the ideal schedule. */
  racks: string[];
  bmcOf: number[];
  /** Label selecting exactly this world's servers and BMC objects. */
  selector: Record<string, string>;
}

export async function seedWorld(admin: KubeClient, o: WorldOptions): Promise<World> {
  const sim = await startBmcSimulator({
    count: o.bmcs,
    systems: spread(o.servers, o.bmcs),
    timing: o.timing,
    tls: o.tls,
  });
  try {
    const simServers = sim.servers();
    if (simServers.length !== o.servers)
      throw new Error(`simulator has ${simServers.length} servers, asked for ${o.servers}`);
    const plan = planFleet({
      name: o.name,
      prefix: `${o.name}-`,
      servers: o.servers,
      racks: Math.ceil(o.servers / o.rackSize),
      tenants: 0,
      claimsPerTenant: 0,
      prebound: true,
      ...(o.budget !== undefined ? { fleetBudget: o.budget } : {}),
      ...(o.rackBudget !== undefined ? { rackBudget: o.rackBudget } : {}),
    });
    const selector = { [FLEET_LABEL]: o.name };
    const bmcNames = Array.from({ length: o.bmcs }, (_, i) => `${o.name}-bmc-${i}`);
    const secret = `${o.name}-bmc`;
    await createOrKeep(() =>
      admin.resource(BMCSecretResource).create({
        metadata: { name: secret },
        data: {
          username: Buffer.from(sim.credentials.username).toString('base64'),
          password: Buffer.from(sim.credentials.password).toString('base64'),
        },
      } as KubeObject),
    );
    const port = Number(new URL(sim.url).port);
    const indexes = bmcNames.map((_, i) => i);
    await inParallel(indexes, o.concurrency ?? 32, async (i) => {
      const name = bmcNames[i]!;
      await createOrKeep(() =>
        admin.resource(BMCResource).create({
          metadata: {
            name,
            labels: selector,
            annotations: { [REDFISH_PATH_PREFIX_ANNOTATION]: `/bmc/${i}` },
          },
          spec: {
            access: { ip: '127.0.0.1' },
            protocol: { name: 'Redfish', port, scheme: 'https' },
            bmcSecretRef: { name: secret },
          },
        } as KubeObject),
      );
    });
    // Server i sits on the simulator's i-th System: consecutive servers share a BMC, and planFleet's
    // racks are consecutive too, so a BMC's servers share a rack unless its gang straddles a boundary.
    plan.servers.forEach((s, i) => {
      const at = simServers[i]!;
      s.spec.bmcRef = { name: bmcNames[at.bmc]! };
      s.spec.systemURI = `/redfish/v1/Systems/${at.system}`;
    });
    await seedFleet(admin, plan, {
      concurrency: o.concurrency ?? 32,
      ...(o.onProgress ? { onProgress: o.onProgress } : {}),
    });
    return {
      plan,
      sim,
      bmcNames,
      racks: plan.servers.map((s) => s.metadata.labels![RACK_LABEL]!),
      bmcOf: simServers.map((s) => s.bmc),
      selector,
    };
  } catch (e) {
    await sim.close();
    throw e;
  }
}
