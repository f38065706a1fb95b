// bench:webhook's world: a realistic fleet (racks, tenants, budgets) in an InformerWorld, the
// AdmissionReviews sent against it, and a check that each gets the decision it stands for.
import type { BMC } from '../../api/metal/v1alpha1/bmc.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import type { PolicyStore } from '../../lib/policy/store.js';
import { parseAdmissionReview } from '../../webhook/admission.js';
import { MemorySource } from '../../webhook/cache-source.js';
import { InformerWorld, WORLD_INDEXERS } from '../../webhook/informer-world.js';
import { MemoryBudgetStore } from '../../contract/testing/memory-budget-store.js';
import { review, type ReviewType } from '../../webhook/review.js';
import { type BudgetRef } from '../../contract/budgets.js';
import { createGrantor } from '../../webhook/grants/reserve.js';

// ------------------------------------------------------------------ a realistic fleet

export const SERVERS_PER_RACK = 25;
export const CLAIMS_PER_TENANT = 25;
export const METAL_OPERATOR = 'system:serviceaccount:metal-operator-system:metal-operator-controller-manager';
export const MAINTENANCE_CONTROLLER = 'system:serviceaccount:metal-maintenance-system:maintenance-controller';
export const ts = '2026-03-01T10:00:00Z';

export const managedFields = (manager: string, subresource?: string) => ({
  manager,
  operation: 'Update',
  apiVersion: 'metal.ironcore.dev/v1alpha1',
  time: ts,
  fieldsType: 'FieldsV1',
  ...(subresource ? { subresource } : {}),
  fieldsV1: {
    'f:metadata': { 'f:labels': { '.': {}, 'f:rack': {}, 'f:pool': {} } },
    'f:spec': { '.': {}, 'f:systemUUID': {}, 'f:bmcRef': {}, 'f:bootOrder': {} },
  },
});

/** A Server as metal-operator keeps it: discovered hardware, interfaces, conditions, managedFields. */
export function makeServer(i: number, racks: number): Server {
  const name = `srv-${i}`;
  return {
    apiVersion: 'metal.ironcore.dev/v1alpha1',
    kind: 'Server',
    metadata: {
      name,
      uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      resourceVersion: String(1000 + i),
      generation: 3,
      creationTimestamp: ts,
      labels: { rack: `r${i % racks}`, pool: i % 3 === 0 ? 'gpu' : 'general' },
      annotations: { 'metal.ironcore.dev/registered-by': 'metal-registry' },
      managedFields: [managedFields('metal-operator'), managedFields('metal-operator', 'status')],
    },
    spec: {
      systemUUID: `38947555-7742-3448-3784-${String(i).padStart(12, '0')}`,
      bmcRef: { name: `bmc-${i}` },
      ...(i % 100 === 3 ? { unclaimable: true } : {}),
      bootOrder: [
        { name: 'PXE', priority: 1, device: 'NIC.Integrated.1-1-1' },
        { name: 'Disk', priority: 2, device: 'RAID.Integrated.1-1' },
      ],
    },
    status: {
      manufacturer: 'Dell Inc.',
      model: 'PowerEdge R650',
      sku: 'SKU=0A6F',
      serialNumber: `SN${i}`,
      biosVersion: '1.14.1',
      powerState: 'On',
      state: i % 100 === 1 ? 'Error' : i % 2 === 0 ? 'Reserved' : 'Available',
      totalSystemMemory: '512Gi',
      networkInterfaces: [0, 1].map((n) => ({
        name: `eno${n + 1}`,
        macAddress: `b0:7b:25:${String(i % 100).padStart(2, '0')}:00:0${n}`,
        ip: `10.${Math.floor(i / 250) % 250}.${i % 250}.${n + 10}`,
        carrierStatus: 'Up',
        neighbors: [
          { macAddress: 'aa:bb:cc:dd:ee:0f', portID: `Ethernet${i % 48}`, systemName: `leaf-${i % 40}` },
        ],
      })),
      processors: [0, 1].map((n) => ({
        id: `CPU.Socket.${n + 1}`,
        type: 'CPU',
        architecture: 'x86',
        manufacturer: 'Intel',
        model: 'Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz',
        maxSpeedMHz: 4000,
        totalCores: 32,
        totalThreads: 64,
      })),
      storages: [
        {
          name: 'PERC H755',
          state: 'Enabled',
          drives: [0, 1].map((n) => ({
            name: `Disk ${n}`,
            mediaType: 'SSD',
            capacity: '960Gi',
            vendor: 'Samsung',
          })),
        },
      ],
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Discovered',
          message: 'server discovered',
          lastTransitionTime: ts,
        },
      ],
    },
  } as unknown as Server;
}

export interface Fleet {
  world: InformerWorld;
  store: MemoryBudgetStore;
  servers: Server[];
  claims: ServerClaim[];
  maintenances: ServerMaintenance[];
  requests: { placementAllow: Req[]; placementDeny: Req[]; evictionDryRun: Req[] };
}

export interface Req {
  type: ReviewType;
  rule: string;
  path: string;
  review: { apiVersion: string; kind: string; request: Record<string, unknown> };
}

/**
 * n Servers and n ServerClaims (half bound), a maintenance on every tenth server, a fleet and a per-rack
 * budget, and a claim budget per tenant.
 */
export function buildFleet(n: number): Fleet {
  const racks = Math.max(1, Math.round(n / SERVERS_PER_RACK));
  const tenants = Math.max(1, Math.round(n / CLAIMS_PER_TENANT));
  const servers = Array.from({ length: n }, (_, i) => makeServer(i, racks));
  const claims: ServerClaim[] = Array.from({ length: n }, (_, i) => ({
    apiVersion: 'metal.ironcore.dev/v1alpha1',
    kind: 'ServerClaim',
    metadata: {
      name: `claim-${i}`,
      namespace: `tenant-${i % tenants}`,
      uid: `c0000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      labels: { app: i % 4 === 0 ? 'db' : 'web' },
    },
    spec: {
      power: 'On',
      image: 'ghcr.io/ironcore-dev/os-images/gardenlinux:1877.2',
      ...(i % 2 === 0 ? { serverRef: { name: `srv-${i}` } } : {}),
    },
    status: { phase: i % 2 === 0 ? 'Bound' : 'Unbound' },
  }));
  for (let i = 0; i < n; i += 2) {
    const c = claims[i]!;
    servers[i]!.spec.serverClaimRef = { namespace: c.metadata.namespace!, name: c.metadata.name! };
  }
  const maintenances: ServerMaintenance[] = [];
  for (let i = 0; i < n; i += 10)
    maintenances.push({
      apiVersion: 'maintenance.metal.ironcore.dev/v1alpha1',
      kind: 'ServerMaintenance',
      metadata: {
        name: `m-${i}`,
        namespace: 'ops',
        uid: `m0000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      },
      spec: { serverRef: { name: `srv-${i}` }, reason: 'FirmwareUpdate', class: 'Emergency', priority: 10 },
      status: { state: 'Approved', announcedAt: ts },
    });
  const observed = { metadata: { generation: 1 }, status: { observedGeneration: 1, grants: [] } };
  const serverBudgets: ServerDisruptionBudget[] = [
    {
      metadata: { ...observed.metadata, name: 'fleet' },
      spec: { serverSelector: {}, maxUnavailable: '10%' },
      status: observed.status,
    },
    {
      metadata: { ...observed.metadata, name: 'racks' },
      spec: { serverSelector: {}, maxUnavailable: 2, topologyKey: 'rack' },
      status: observed.status,
    },
  ];
  const claimBudgets: ServerClaimDisruptionBudget[] = Array.from({ length: tenants }, (_, t) => ({
    metadata: { ...observed.metadata, name: 'db', namespace: `tenant-${t}` },
    spec: { claimSelector: { matchLabels: { app: 'db' } }, maxUnavailable: '50%' },
    status: observed.status,
  }));
  const sources = {
    servers: new MemorySource(WORLD_INDEXERS.servers, servers),
    claims: new MemorySource(WORLD_INDEXERS.claims, claims),
    maintenances: new MemorySource(WORLD_INDEXERS.maintenances, maintenances),
    serverBudgets: new MemorySource(WORLD_INDEXERS.serverBudgets, serverBudgets),
    claimBudgets: new MemorySource(WORLD_INDEXERS.claimBudgets, claimBudgets),
    bmcs: new MemorySource<BMC>(),
  };
  const world = new InformerWorld(sources);
  const store = new MemoryBudgetStore([
    ...serverBudgets.map((b) => ({
      ref: { kind: 'ServerDisruptionBudget' as const, name: b.metadata.name! },
      budget: b,
    })),
    ...claimBudgets.map((b) => ({
      ref: { kind: 'ServerClaimDisruptionBudget' as const, namespace: b.metadata.namespace!, name: 'db' },
      budget: b,
    })),
  ]);
  // As the binary's ApiBudgetStore: its first look at a budget is the informer's copy.
  const cached = Object.assign(store, {
    peek: (ref: BudgetRef) =>
      ref.kind === 'ServerDisruptionBudget'
        ? sources.serverBudgets.getByName(ref.name)
        : sources.claimBudgets.getByName(ref.name, ref.namespace),
  });
  return {
    world,
    store: cached,
    servers,
    claims,
    maintenances,
    requests: makeRequests(servers, claims, maintenances),
  };
}

let uid = 0;
export const admissionReview = (request: Record<string, unknown>) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { uid: `7f0b2c3e-0000-4000-8000-${String(++uid).padStart(12, '0')}`, ...request },
});

export const metal = { group: 'metal.ironcore.dev', version: 'v1alpha1' };
export const maint = { group: 'maintenance.metal.ironcore.dev', version: 'v1alpha1' };

/** metal-operator binding a claim to a Server: the UPDATE that sets spec.serverClaimRef. */
export function bindReview(server: Server, claim: ServerClaim): Req {
  const object = structuredClone(server);
  object.spec.serverClaimRef = { namespace: claim.metadata.namespace!, name: claim.metadata.name! };
  return {
    type: 'validate',
    rule: 'placement',
    path: '/validate/placement',
    review: admissionReview({
      kind: { ...metal, kind: 'Server' },
      resource: { ...metal, resource: 'servers' },
      requestKind: { ...metal, kind: 'Server' },
      requestResource: { ...metal, resource: 'servers' },
      name: server.metadata.name,
      operation: 'UPDATE',
      userInfo: {
        username: METAL_OPERATOR,
        uid: 'u-metal-operator',
        groups: ['system:serviceaccounts', 'system:authenticated'],
      },
      object,
      oldObject: server,
      dryRun: false,
      options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'metal-operator' },
    }),
  };
}

/** The maintenance controller's status write into InMaintenance, as a dry run. */
export function evictionReview(m: ServerMaintenance): Req {
  const object = structuredClone(m);
  object.status = { ...object.status, state: 'InMaintenance', startedAt: ts };
  return {
    type: 'validate',
    rule: 'eviction',
    path: '/validate/eviction',
    review: admissionReview({
      kind: { ...maint, kind: 'ServerMaintenance' },
      resource: { ...maint, resource: 'servermaintenances' },
      subResource: 'status',
      name: m.metadata.name,
      namespace: m.metadata.namespace,
      operation: 'UPDATE',
      userInfo: {
        username: MAINTENANCE_CONTROLLER,
        groups: ['system:serviceaccounts', 'system:authenticated'],
      },
      object,
      oldObject: m,
      dryRun: true,
      options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1', dryRun: ['All'] },
    }),
  };
}

/** 64 requests of each kind, spread over the whole fleet. */
export function makeRequests(servers: Server[], claims: ServerClaim[], maintenances: ServerMaintenance[]) {
  const n = servers.length;
  const pick = (count: number, ok: (i: number) => boolean) => {
    const out: number[] = [];
    for (let k = 0; out.length < count; k++) {
      const i = Math.floor(((k * 7919) % n) + (k * n) / (count * 4)) % n;
      if (ok(i)) out.push(i);
      if (k > n * 10) break;
    }
    return out;
  };
  // Free: odd, available, not cordoned; cordoned: i % 100 === 3 (odd, unclaimed).
  const free = pick(64, (i) => i % 2 === 1 && i % 100 !== 1 && i % 100 !== 3);
  const cordoned = servers.filter((_, i) => i % 100 === 3);
  const unbound = (i: number) => claims[i % 2 === 1 ? i : i + 1] ?? claims[1]!;
  return {
    placementAllow: free.map((i) => bindReview(servers[i]!, unbound(i))),
    placementDeny: Array.from({ length: 64 }, (_, k) => {
      const s = cordoned[k % cordoned.length]!;
      return bindReview(s, unbound(Number(s.metadata.name!.slice(4))));
    }),
    evictionDryRun: Array.from({ length: 64 }, (_, k) =>
      evictionReview(maintenances[(k * 37) % maintenances.length]!),
    ),
  };
}

/** The mixed workload as the generator sends it: path and JSON body. */
export const wireRequests = (f: Fleet) =>
  mixed(f).map((r) => ({ path: r.path, body: JSON.stringify(r.review) }));

export const mixed = (f: Fleet): Req[] =>
  f.requests.placementAllow.flatMap((a, k) => [
    a,
    f.requests.placementDeny[k]!,
    f.requests.evictionDryRun[k]!,
  ]);

/** Checks that each request gets the decision it stands for, so the benchmark measures real work. */
export async function verify(f: Fleet, policies: PolicyStore): Promise<void> {
  const decide = async (r: Req) =>
    (
      await review(r.type, r.rule, parseAdmissionReview(r.review), {
        world: f.world,
        policies,
        grant: createGrantor(f.store),
        clock: () => new Date(ts),
      })
    ).decision;
  for (const r of f.requests.placementAllow)
    if (!(await decide(r)).allowed) throw new Error('a placement-allow request was denied');
  for (const r of f.requests.placementDeny) {
    const d = await decide(r);
    if (d.allowed || d.code !== 'METAL_ERR_SERVER_UNCLAIMABLE')
      throw new Error(`placement deny got ${d.code}`);
  }
  for (const r of f.requests.evictionDryRun) {
    const d = await decide(r);
    if (!d.allowed) throw new Error(`eviction dry-run denied: ${d.code} ${d.message}`);
  }
  if (f.store.writes !== 0) throw new Error('a dry run wrote to a budget');
}
