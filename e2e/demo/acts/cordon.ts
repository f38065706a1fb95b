// Act 2: an admin cordons a free server; a claim pinned to it stays Unbound. Act 5 lifts the cordon
// and the pinned claim binds.
import { KubeClient } from '../../../lib/kube/client.js';
import { RACK_LABEL } from '../../sim/fleet/decisions.js';
import { TENANT_LABEL, type FleetPlan } from '../../sim/fleet/fleet.js';
import { createClaim, tenantOwner } from '../objects.js';
import type { ActContext } from './context.js';

/** The tenant namespace whose owner pins a claim to the cordoned server. */
const pinnedNamespace = (plan: FleetPlan) => plan.namespaces[plan.namespaces.length - 1]!;

export async function cordon(c: ActContext, plan: FleetPlan): Promise<string> {
  c.beginAct(2, 'an admin cordons a server');
  const w = c.watch;
  const racks = [...new Set(w.servers.list().map((s) => s.metadata.labels?.[RACK_LABEL] ?? ''))].sort();
  const rack = racks[Math.min(2, racks.length - 1)];
  const free = w.servers
    .list()
    .filter(
      (s) =>
        s.metadata.labels?.[RACK_LABEL] === rack && !s.spec.serverClaimRef && s.status?.state === 'Available',
    )
    .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))[0];
  if (!free) throw new Error(`no free server in ${rack} to cordon`);
  const name = free.metadata.name!;
  await c.kubectlMetal(c.o.kubeconfig, ['cordon', name]);
  await c.until(
    `${name} cordoned in the cache`,
    () => w.servers.getByName(name)?.spec.unclaimable === true,
    10_000,
  );
  const ns = pinnedNamespace(plan);
  const owner = await tenantOwner(c.admin, ns);
  c.say(`(as ${ns}'s owner) create ServerClaim pinned with spec.serverRef ${name}`);
  const ownerClient = await KubeClient.fromFile(owner);
  try {
    await createClaim(ownerClient, {
      metadata: { name: 'pinned', namespace: ns, labels: { [TENANT_LABEL]: ns } },
      spec: {
        power: 'On',
        image: 'ghcr.io/ironcore-dev/os-images/gardenlinux:1877.0',
        serverRef: { name },
      },
    });
  } finally {
    await ownerClient.close();
  }
  await c.pause(3000);
  const pinned = w.claims!.getByName('pinned', ns);
  if (pinned?.status?.phase === 'Bound') c.s.problems.push('the claim pinned to a cordoned server was bound');
  c.log(
    `${ns}/pinned stays ${pinned?.status?.phase ?? 'Unbound'}: ${name} is cordoned (new bindings refused; bound claims elsewhere untouched)`,
  );
  return name;
}

export async function uncordon(c: ActContext, plan: FleetPlan, cordoned: string, act: number): Promise<void> {
  c.beginAct(act, 'the cordon is lifted');
  await c.kubectlMetal(c.o.kubeconfig, ['uncordon', cordoned]);
  const ns = pinnedNamespace(plan);
  await c.until(
    'the pinned claim to bind',
    () => c.watch.claims!.getByName('pinned', ns)?.status?.phase === 'Bound',
    30_000,
  );
  c.log(`${ns}/pinned is Bound to ${cordoned}`);
}
