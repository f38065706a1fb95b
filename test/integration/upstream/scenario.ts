// The upstream suite's situations, made the way they are made in a fleet: a person cordons and taints,
// our maintenance controller holds servers for maintenances (one running, one approved but held back by
// a budget), a legacy maintenance (metal.ironcore.dev, run by upstream's own v0.7.0 controller) holds
// another, and tenants create claims by serverRef and by selector, many at once.
import type { ServerClaim } from '../../../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import type { LegacyServerMaintenance } from '../../../api/legacy/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import { freshNamespace, waitFor } from '../../../e2e/harness/env.js';
import { LegacyServerMaintenanceResource, ServerDisruptionBudgetResource } from '../../../lib/kube/kinds.js';
import { MAINTENANCE_TAINT_KEY } from '../../../contract/names.js';
import type { Upstream } from './harness.js';

/** Every machine's BMC (and so its Server) carries this label; selector claims select it. */
export const POOL_LABEL = 'upstream.test/pool';
/** A label only the budget-held server carries. */
const HELD_LABEL = 'upstream.test/held';
export const CASE_LABEL = 'upstream.test/case';
const IMAGE = 'ghcr.io/ironcore-dev/os-images/gardenlinux:1877.0';

export interface Blocked {
  cordoned: string;
  tainted: string;
  /** Our maintenance InMaintenance: parked by upstream. */
  inMaintenance: string;
  /** Our maintenance Approved, kept from starting by a budget: Available to upstream but for our taint. */
  approved: string;
  /** A legacy maintenance, which upstream's own controller put in place (spec.serverMaintenanceRef, state Maintenance). */
  legacy: string;
  all: string[];
}

let opsNamespace: string | undefined;
async function ops(up: Upstream): Promise<string> {
  opsNamespace ??= await freshNamespace(up.admin, 'upstream-ops');
  return opsNamespace;
}

export async function maintenanceOf(up: Upstream, name: string, server: string): Promise<ServerMaintenance> {
  return up.maintenances.create({
    metadata: { name, namespace: await ops(up) },
    spec: { serverRef: { name: server }, reason: 'FirmwareUpdate', class: 'Planned' },
  });
}

export function waitForMaintenanceState(
  up: Upstream,
  m: ServerMaintenance,
  state: string,
  timeoutMs = 30_000,
): Promise<ServerMaintenance> {
  let last: ServerMaintenance | undefined;
  return waitFor(
    `${m.metadata.name} ${state}`,
    async () => {
      last = await up.maintenances.get(m.metadata.name!, m.metadata.namespace);
      return last.status?.state === state ? last : undefined;
    },
    { timeoutMs, intervalMs: 200 },
  ).catch((e: unknown) => {
    const why = (last?.status?.conditions ?? []).map(
      (c) => `${c.type}=${c.status}/${c.reason}: ${c.message}`,
    );
    throw new Error(`${(e as Error).message}; last: ${last?.status?.state ?? '(none)'}; ${why.join('; ')}`);
  });
}

/** Blocks the first five machines' servers, one per reason, and waits until each block is in place. */
export async function blockServers(up: Upstream): Promise<Blocked> {
  const [cordoned, tainted, inMaintenance, approved, legacy] = up.machines
    .slice(0, 5)
    .map((m) => m.server) as [string, string, string, string, string];
  await up.servers.patch(cordoned, { spec: { unclaimable: true } });
  await up.servers.patch(tainted, {
    spec: { taints: [{ key: 'upstream.test/faulty-dimm', effect: 'NoBind' }] },
  });
  await up.servers.patch(approved, { metadata: { labels: { [HELD_LABEL]: 'true' } } });
  const sdbs = up.admin.resource<ServerDisruptionBudget>(ServerDisruptionBudgetResource);
  await sdbs.create({
    metadata: { name: 'upstream-held' },
    spec: { serverSelector: { matchLabels: { [HELD_LABEL]: 'true' } }, maxUnavailable: 0 },
  });
  await waitFor('budget observed', async () => {
    const b = await sdbs.get('upstream-held');
    return (b.status?.observedGeneration ?? 0) >= (b.metadata.generation ?? 1);
  });
  // Legacy: the kind metal-operator <= v0.7.0 serves and runs itself; for an unclaimed server its
  // controller takes it at once (spec.serverMaintenanceRef, state Maintenance). No taint of ours.
  await up.admin.resource<LegacyServerMaintenance>(LegacyServerMaintenanceResource).create({
    metadata: { name: 'held-legacy', namespace: await ops(up) },
    spec: { policy: 'Enforced', serverRef: { name: legacy }, serverPower: 'Off' },
  });
  const running = await maintenanceOf(up, 'held-running', inMaintenance);
  const held = await maintenanceOf(up, 'held-approved', approved);
  await waitForMaintenanceState(up, running, 'InMaintenance', 60_000);
  await waitForMaintenanceState(up, held, 'Approved', 60_000);
  await waitFor(
    'upstream parked the maintained server; the approved one carries our taint; the legacy one is in Maintenance',
    async () => {
      const [r, a, l] = await Promise.all([
        up.servers.get(inMaintenance),
        up.servers.get(approved),
        up.servers.get(legacy),
      ]);
      return (
        r.status?.state === 'Parked' &&
        a.status?.maintenance?.state === 'Approved' &&
        (a.spec.taints ?? []).some((t) => t.key === MAINTENANCE_TAINT_KEY) &&
        l.spec.serverMaintenanceRef?.name === 'held-legacy' &&
        l.status?.state === 'Maintenance'
      );
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  return {
    cordoned,
    tainted,
    inMaintenance,
    approved,
    legacy,
    all: [cordoned, tainted, inMaintenance, approved, legacy],
  };
}

/**
 * `count` claims in a fresh namespace, created concurrently: one by serverRef for every machine, the
 * rest by selector; each with the typed spec.maintenance (approvalMode alternating Manual, Automatic).
 */
export async function createClaims(up: Upstream, caseName: string, count: number): Promise<ServerClaim[]> {
  const namespace = await freshNamespace(up.admin, caseName);
  const specs = Array.from({ length: count }, (_, i) => {
    const target = up.machines[i];
    return {
      metadata: { name: `${caseName}-c${i}`, namespace, labels: { [CASE_LABEL]: caseName } },
      spec: {
        power: 'On' as const,
        image: IMAGE,
        ...(target
          ? { serverRef: { name: target.server } }
          : { serverSelector: { matchLabels: { [POOL_LABEL]: 'a' } } }),
        maintenance: { approvalMode: i % 2 === 1 ? ('Manual' as const) : ('Automatic' as const) },
      },
    };
  });
  const created: ServerClaim[] = [];
  // Twenty writes in flight: "at once" for the binder, without a client-side thundering herd.
  for (let i = 0; i < specs.length; i += 20)
    created.push(
      ...(await Promise.all(specs.slice(i, i + 20).map((c) => up.claims.create(c as ServerClaim)))),
    );
  return created;
}
