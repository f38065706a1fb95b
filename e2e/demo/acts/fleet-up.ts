// Act 1: a fleet comes up. The simulated metal-operator discovers the servers and binds the tenants'
// claims; each binding is a write the webhook's placement guard admits.
import { RACK_LABEL } from '../../sim/fleet/decisions.js';
import { planFleet, seedFleet, type FleetPlan } from '../../sim/fleet/fleet.js';
import { createClaim, tenantOwner } from '../objects.js';
import { STANDING_TENANT } from '../announce-plan.js';
import { CLAIMED_SHARE } from '../config.js';
import type { ActContext } from './context.js';

export async function fleetComesUp(c: ActContext): Promise<FleetPlan> {
  c.beginAct(1, 'a fleet comes up');
  const o = c.o;
  const plan = planFleet({
    servers: o.servers,
    racks: o.racks,
    tenants: o.tenants,
    claimsPerTenant: Math.floor((o.servers * CLAIMED_SHARE) / o.tenants),
    claimMode: 'serverRef',
    approvalMode: (t) => (t === STANDING_TENANT ? 'Automatic' : 'Manual'),
    fleetBudget: 4,
    rackBudget: 2,
    tenantBudget: 2,
  });
  await seedFleet(c.admin, plan);
  for (const ns of plan.namespaces) await tenantOwner(c.admin, ns);
  // A claim nobody consumes (no owner reference, no tenant label): the policy approves for it.
  const orphanServer = plan.servers.find(
    (s) =>
      !plan.claims.some((cl) => cl.spec.serverRef?.name === s.metadata.name) &&
      s.metadata.labels?.[RACK_LABEL] === plan.servers[0]!.metadata.labels?.[RACK_LABEL],
  );
  await createClaim(c.admin, {
    metadata: { name: 'orphan-1', namespace: plan.namespaces[3 % plan.namespaces.length] },
    spec: {
      power: 'On',
      image: 'ghcr.io/ironcore-dev/os-images/gardenlinux:1877.0',
      serverRef: { name: orphanServer?.metadata.name ?? plan.servers[1]!.metadata.name! },
    },
  });
  c.log(
    `created ${plan.servers.length} servers in ${o.racks} racks; ${plan.claims.length + 1} claims in ${plan.namespaces.length} tenant namespaces (tenant-b approves standing: Automatic)`,
  );
  c.log('budgets: fleet 4, per rack 2, per tenant 2');
  const w = c.watch;
  await c.until(
    'every server discovered',
    () =>
      w.servers.size >= plan.servers.length &&
      w.servers.list().every((s) => s.status?.state === 'Available' || s.status?.state === 'Reserved'),
    90_000,
  );
  const total = plan.claims.length + 1;
  await c.until(
    'every claim bound',
    () => w.claims!.list().filter((cl) => cl.status?.phase === 'Bound').length >= total,
    60_000,
  );
  c.log(
    `all ${plan.servers.length} servers discovered; ${total} claims bound by the simulated metal-operator, each binding admitted by the placement guard`,
  );
  return plan;
}
