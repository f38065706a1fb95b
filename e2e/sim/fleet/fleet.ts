// The shape of a simulated fleet (servers in racks, tenants with claims, budgets) as plain objects,
// and seeding it into an API server. planFleet is pure; seedFleet writes. Servers start without
// status (the simulator walks them through Initial -> Discovery -> Available) unless `prebound`,
// which creates them already Reserved and bound, for benchmarks that need 10,000 of them quickly.
import { createHash } from 'node:crypto';
import { ServerKind, type Server } from '../../../api/metal/v1alpha1/server.js';
import {
  ServerClaimKind,
  type ServerClaim,
  type ApprovalMode,
} from '../../../api/metal/v1alpha1/serverclaim.js';
import {
  ServerDisruptionBudgetKind,
  type ServerDisruptionBudget,
} from '../../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import {
  ServerClaimDisruptionBudgetKind,
  type ServerClaimDisruptionBudget,
} from '../../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import { Core, resourceOf } from '../../../lib/kube/resources.js';
import { isAlreadyExists } from '../../../lib/kube/errors.js';
import type { KubeObject } from '../../../api/schema/meta.js';
import { CLAIM_FINALIZER, RACK_LABEL } from './decisions.js';

/** Label on everything the simulator seeds, valued with the fleet name. */
export const FLEET_LABEL = 'fleet-sim.metal.ironcore.dev/fleet';
/** Label on tenant namespaces and claims: the tenant. */
export const TENANT_LABEL = 'fleet-sim.metal.ironcore.dev/tenant';

export type ClaimMode = 'serverRef' | 'rack' | 'any';

export interface FleetOptions {
  name?: string;
  /** Prefix of server and tenant namespace names, so several fleets can share an API server. */
  prefix?: string;
  servers: number;
  racks: number;
  tenants: number;
  /** Claims per tenant; default: 80 % of the servers, spread over the tenants. */
  claimsPerTenant?: number;
  /** How claims pick servers: pinned by serverRef, by a rack selector, or any server. */
  claimMode?: ClaimMode;
  /** Standing approval mode per tenant index (default Manual for all). */
  approvalMode?: (tenant: number) => ApprovalMode;
  /**
   * Servers and claims already bound (servers Reserved and On, the rest Available and Off; claims
   * Bound). Implies serverRef claims.
   */
  prebound?: boolean;
  /** Fleet budget (named after the fleet): maxUnavailable over all its servers; optional per-rack limit. */
  fleetBudget?: number | string;
  rackBudget?: number | string;
  /** Per-tenant ServerClaimDisruptionBudget. */
  tenantBudget?: number | string;
}

export interface FleetPlan {
  name: string;
  /** Servers created Reserved and bound, claims Bound (see FleetOptions.prebound). */
  prebound: boolean;
  namespaces: string[];
  servers: Server[];
  claims: ServerClaim[];
  serverBudgets: ServerDisruptionBudget[];
  claimBudgets: ServerClaimDisruptionBudget[];
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** Deterministic SMBIOS-like UUID from a name. */
function uuidOf(name: string): string {
  const h = createHash('sha1').update(name).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

export function tenantName(i: number): string {
  return i < 26 ? `tenant-${String.fromCharCode(97 + i)}` : `tenant-${i}`;
}

export function rackName(i: number, racks: number): string {
  return `rack-${pad(i + 1, String(racks).length)}`;
}

/** Servers r<rack>-<n>, contiguous per rack; claims <tenant>-<n>, tenants interleaved over racks. */
export function planFleet(o: FleetOptions): FleetPlan {
  const name = o.name ?? 'fleet';
  const prefix = o.prefix ?? '';
  const perRack = Math.ceil(o.servers / o.racks);
  const rw = String(o.racks).length;
  const sw = String(perRack).length;
  const servers: Server[] = [];
  for (let i = 0; i < o.servers; i++) {
    const rack = Math.floor(i / perRack);
    const sname = `${prefix}r${pad(rack + 1, rw)}-${pad((i % perRack) + 1, sw)}`;
    servers.push({
      apiVersion: ServerKind.apiVersion,
      kind: ServerKind.kind,
      metadata: { name: sname, labels: { [RACK_LABEL]: rackName(rack, o.racks), [FLEET_LABEL]: name } },
      spec: { systemUUID: uuidOf(`${name}/${sname}`) },
    });
  }
  const namespaces = Array.from({ length: o.tenants }, (_, t) => `${prefix}${tenantName(t)}`);
  const perTenant = o.claimsPerTenant ?? Math.floor((o.servers * 0.8) / Math.max(1, o.tenants));
  const total = Math.min(o.servers, perTenant * o.tenants);
  const mode: ClaimMode = o.prebound ? 'serverRef' : (o.claimMode ?? 'any');
  const claims: ServerClaim[] = [];
  // Spread: claim k goes to server k * stride, so every rack hosts several tenants.
  const stride = o.servers / Math.max(1, total);
  for (let k = 0; k < total; k++) {
    const t = k % o.tenants;
    const server = servers[Math.floor(k * stride)]!;
    const claim: ServerClaim = {
      apiVersion: ServerClaimKind.apiVersion,
      kind: ServerClaimKind.kind,
      metadata: {
        name: `${namespaces[t]}-${pad(Math.floor(k / o.tenants) + 1, String(perTenant).length)}`,
        namespace: namespaces[t],
        labels: { [FLEET_LABEL]: name, [TENANT_LABEL]: namespaces[t]! },
      },
      spec: {
        power: 'On',
        image: 'ghcr.io/ironcore-dev/os-images/gardenlinux:1877.0',
        ...(o.approvalMode ? { maintenance: { approvalMode: o.approvalMode(t) } } : {}),
      },
    };
    if (mode === 'serverRef') claim.spec.serverRef = { name: server.metadata.name! };
    if (mode === 'rack')
      claim.spec.serverSelector = { matchLabels: { [RACK_LABEL]: server.metadata.labels![RACK_LABEL]! } };
    if (o.prebound) {
      claim.metadata.finalizers = [CLAIM_FINALIZER];
      server.spec.serverClaimRef = { name: claim.metadata.name!, namespace: claim.metadata.namespace! };
    }
    claims.push(claim);
  }
  return { name, prebound: !!o.prebound, namespaces, servers, claims, ...planBudgets(o, name, namespaces) };
}

function planBudgets(o: FleetOptions, name: string, namespaces: string[]) {
  const selector = { matchLabels: { [FLEET_LABEL]: name } };
  const serverBudgets: ServerDisruptionBudget[] = [];
  if (o.fleetBudget !== undefined)
    serverBudgets.push({
      metadata: { name },
      spec: { serverSelector: selector, maxUnavailable: o.fleetBudget },
    });
  if (o.rackBudget !== undefined)
    serverBudgets.push({
      metadata: { name: `${name}-per-rack` },
      spec: { serverSelector: selector, maxUnavailable: o.rackBudget, topologyKey: RACK_LABEL },
    });
  const claimBudgets: ServerClaimDisruptionBudget[] =
    o.tenantBudget === undefined
      ? []
      : namespaces.map((ns) => ({
          metadata: { name: `${ns}-claims`, namespace: ns },
          spec: { claimSelector: selector, maxUnavailable: o.tenantBudget! },
        }));
  return { serverBudgets, claimBudgets };
}

/** Runs `fn` over `items` with at most `concurrency` in flight. */
export async function inParallel<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/** Creates an object, keeping the one already there (seeding is re-runnable). */
export async function createOrKeep<T extends KubeObject>(create: () => Promise<T>): Promise<void> {
  try {
    await create();
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
  }
}

export interface SeedOptions {
  concurrency?: number;
  /** Called after each object is written, for progress displays. */
  onProgress?: (done: number, total: number) => void;
}

/**
 * Creates namespaces, servers, claims and budgets of a plan (existing objects are kept). With
 * `prebound` servers, also writes their status (Reserved, On) and the claims' phase (Bound).
 */
export async function seedFleet(client: KubeClient, plan: FleetPlan, o: SeedOptions = {}): Promise<void> {
  const concurrency = o.concurrency ?? 16;
  const servers = client.resource<Server>(resourceOf(ServerKind));
  const claims = client.resource<ServerClaim>(resourceOf(ServerClaimKind));
  const sdbs = client.resource<ServerDisruptionBudget>(resourceOf(ServerDisruptionBudgetKind));
  const scdbs = client.resource<ServerClaimDisruptionBudget>(resourceOf(ServerClaimDisruptionBudgetKind));
  const total = plan.namespaces.length + plan.servers.length + plan.claims.length;
  let done = 0;
  const tick = () => o.onProgress?.(++done, total);
  for (const ns of plan.namespaces) {
    await createOrKeep(() =>
      client.resource(Core.Namespace).create({ metadata: { name: ns, labels: { [TENANT_LABEL]: ns } } }),
    );
    tick();
  }
  // Claims before the servers bound to them: a server whose claim does not exist gets released.
  await inParallel(plan.claims, concurrency, async (c) => {
    await createOrKeep(() => claims.create(c));
    if (plan.prebound)
      await claims.patch(
        c.metadata.name!,
        { status: { phase: 'Bound' } },
        { namespace: c.metadata.namespace, subresource: 'status' },
      );
    tick();
  });
  await inParallel(plan.servers, concurrency, async (s) => {
    await createOrKeep(() => servers.create(s));
    if (plan.prebound) {
      const status = s.spec.serverClaimRef
        ? { state: 'Reserved', powerState: 'On' }
        : { state: 'Available', powerState: 'Off' };
      await servers.patch(s.metadata.name!, { status }, { subresource: 'status' });
    }
    tick();
  });
  for (const b of plan.serverBudgets) await createOrKeep(() => sdbs.create(b));
  for (const b of plan.claimBudgets) await createOrKeep(() => scdbs.create(b));
}
