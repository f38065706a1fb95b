// Benchmark: the admission webhook against the limit of its transport.
//
//   npm run bench:webhook [-- --duration 5 --concurrency 32 --connections 32 --rate 1000 --ladder]
//
// Two HTTPS servers with the same certificate in this process: the webhook (createWebhookServer over an
// InformerWorld holding 10,000 Servers and 10,000 ServerClaims, a MemoryBudgetStore whose first look
// at a budget is the informer's copy as in the binary, the default policy, an info-level logger whose
// denial lines are sampled as the binary's are, `--log-sampling` to change that) and a
// bare fastify endpoint answering a fixed "allowed" AdmissionReview (the limit: TLS, HTTP and JSON
// parsing, no decision). A load generator (undici, in its own process) sends
// realistic AdmissionReviews in equal shares: placement allow (bind a claim to a free Server), placement
// deny (bind to a cordoned Server), eviction dry-run (a ServerMaintenance status write to InMaintenance
// under a fleet, a per-rack and a tenant budget). Measured:
//   throughput  closed loop, `--concurrency` requests in flight, rounds alternating webhook and limit
//   latency     open loop at `--rate` req/s (from the scheduled send time: no coordinated omission)
//   ladder      with --ladder: the webhook's work step by step, each step against the limit
//   decisions   in process, JSON body → parse → review() per request, 100 vs 10,000 Servers and claims;
//               warm (back to back) and cold (caches flushed before each, as between two requests)
// With --hold webhook|limit it only loads that server for one window and stops: a profiler outside the
// process (scripts/profile-webhook.sh, perf) then sees that server's work alone.
// The last line printed is one JSON object: throughput_ratio, p99_ms, scale_ratio and the raw figures.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { fork } from 'node:child_process';
import { setImmediate as immediate, setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { fastify, type FastifyReply } from 'fastify';
import { Agent, request } from 'undici';
import type { BMC } from '../api/metal/v1alpha1/bmc.js';
import type { Server } from '../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import { makeServingCertificate } from '../e2e/harness/webhook.js';
import { PolicyStore } from '../lib/policy/store.js';
import { DEFAULT_POLICY } from '../policies/schema.js';
import { parseAdmissionReview, toAdmissionResponse, type AdmissionRequest } from '../webhook/admission.js';
import { MemorySource } from '../webhook/cache-source.js';
import { InformerWorld, WORLD_INDEXERS } from '../webhook/informer-world.js';
import { MemoryBudgetStore } from '../contract/testing/memory-budget-store.js';
import {
  checkObject,
  decide,
  review,
  type ReviewDeps,
  type ReviewOutcome,
  type ReviewType,
} from '../webhook/review.js';
import {
  createWebhookServer,
  DEFAULT_BODY_LIMIT,
  keepJsonBodiesAsText,
  parseJsonBody,
} from '../webhook/server.js';
import { perTurn } from '../webhook/per-turn.js';
import { bufferedLogger } from '../webhook/log.js';
import { DEFAULT_LOG_SAMPLING, parseLogSampling, type LogSampling } from '../lib/log-sampling.js';
import { type BudgetRef } from '../contract/budgets.js';
import { createGrantor } from '../webhook/grants/reserve.js';

// ------------------------------------------------------------------ load generator (child process)

interface LoadJob {
  url: string;
  ca: string;
  connections: number;
  requests: { path: string; body: string }[];
  durationMs: number;
  /** Closed loop with this many in flight, or open loop at `rate` req/s. */
  concurrency?: number;
  rate?: number;
}

interface LoadResult {
  completed: number;
  errors: number;
  elapsedMs: number;
  latencies: Float64Array;
  /** Open loop only: ms between each request's due time and its send. */
  lateness: Float64Array;
  /** The generator's own CPU (µs) over the run: near elapsedMs × 1000 means it, not the server, set the pace. */
  cpuUs: number;
}

// One agent per server for the generator's life: its TLS connections stay open from one measurement to
// the next, as the API server keeps its connections to a webhook. A fresh agent per measurement opened
// its connections inside the measured window: at 1,000 req/s on a slow machine the handshakes at its
// start delayed more than 1 % of a 2 s run's requests, and the p99 measured them.
const agents = new Map<string, Agent>();

function agentFor(job: LoadJob): Agent {
  let agent = agents.get(job.url);
  if (!agent) {
    agent = new Agent({ connect: { ca: job.ca }, connections: job.connections, keepAliveTimeout: 30_000 });
    agents.set(job.url, agent);
  }
  return agent;
}

async function generateLoad(job: LoadJob): Promise<LoadResult> {
  const agent = agentFor(job);
  const latencies: number[] = [];
  /** Open loop: how long after its due time each request left (the generator's own delay). */
  const lateness: number[] = [];
  let completed = 0;
  let errors = 0;
  let next = 0;
  const send = async (scheduledAt: number) => {
    const r = job.requests[next++ % job.requests.length]!;
    try {
      const res = await request(`${job.url}${r.path}`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json' },
        body: r.body,
      });
      await res.body.text();
      if (res.statusCode !== 200) errors++;
      else {
        completed++;
        latencies.push(performance.now() - scheduledAt);
      }
    } catch {
      errors++;
    }
  };
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const end = start + job.durationMs;
  if (job.rate) {
    // Open loop: request i is due at start + i/rate, sent then whether or not earlier ones returned.
    // Between sends the loop yields with setImmediate (I/O is polled on every turn), not a 1 ms timer:
    // a timer fires 1–2 ms late, and since latency counts from the due time, that lateness was charged
    // to the server (the bare limit showed a 1.9 ms p50). How late each send still left is recorded.
    const inFlight = new Set<Promise<void>>();
    const interval = 1000 / job.rate;
    let sent = 0;
    for (let now = start; now < end; now = performance.now()) {
      for (let dueAt = start + sent * interval; dueAt <= now; dueAt = start + sent * interval) {
        lateness.push(now - dueAt);
        const p = send(dueAt).finally(() => inFlight.delete(p));
        inFlight.add(p);
        sent++;
      }
      // Far from the next send, sleep; close to it, spin through the event loop.
      const wait = start + sent * interval - performance.now();
      await (wait > 3 ? delay(wait - 2) : immediate());
    }
    await Promise.all(inFlight);
  } else {
    const loop = async () => {
      while (performance.now() < end) await send(performance.now());
    };
    await Promise.all(Array.from({ length: job.concurrency ?? 32 }, loop));
  }
  const elapsedMs = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  return {
    cpuUs: cpu.user + cpu.system,
    completed,
    errors,
    elapsedMs,
    latencies: Float64Array.from(latencies),
    lateness: Float64Array.from(lateness),
  };
}

const LOADGEN_FLAG = '--load-generator';
const isLoadGenerator = process.argv.includes(LOADGEN_FLAG);

if (isLoadGenerator) {
  process.on('message', (job: LoadJob | 'exit') => {
    if (job === 'exit')
      return void Promise.all([...agents.values()].map((a) => a.close())).finally(() => process.exit(0));
    void generateLoad(job).then((r) => process.send!(r));
  });
}

interface Generator {
  run(job: LoadJob): Promise<LoadResult>;
  close(): Promise<void>;
}

/**
 * One load generator process for the whole benchmark: its own event loop and, unlike a worker thread,
 * its own CPU account, so process.cpuUsage() here measures the servers alone.
 */
function startGenerator(): Generator {
  const child = fork(fileURLToPath(import.meta.url), [LOADGEN_FLAG], {
    execArgv: ['--import', 'tsx'],
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let pending: { resolve: (r: LoadResult) => void; reject: (e: Error) => void } | undefined;
  child.on('message', (r) => pending?.resolve(r as LoadResult));
  child.on('exit', (code) => pending?.reject(new Error(`load generator exited with ${code}`)));
  return {
    run: (job) =>
      new Promise((resolve, reject) => {
        pending = { resolve, reject };
        child.send(job);
      }),
    close: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.send('exit');
      await exited;
    },
  };
}

// ------------------------------------------------------------------ a realistic fleet

const SERVERS_PER_RACK = 25;
const CLAIMS_PER_TENANT = 25;
const METAL_OPERATOR = 'system:serviceaccount:metal-operator-system:metal-operator-controller-manager';
const MAINTENANCE_CONTROLLER = 'system:serviceaccount:metal-maintenance-system:maintenance-controller';
const ts = '2026-03-01T10:00:00Z';

const managedFields = (manager: string, subresource?: string) => ({
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
function makeServer(i: number, racks: number): Server {
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

interface Fleet {
  world: InformerWorld;
  store: MemoryBudgetStore;
  servers: Server[];
  claims: ServerClaim[];
  maintenances: ServerMaintenance[];
  requests: { placementAllow: Req[]; placementDeny: Req[]; evictionDryRun: Req[] };
}

interface Req {
  type: ReviewType;
  rule: string;
  path: string;
  review: { apiVersion: string; kind: string; request: Record<string, unknown> };
}

/**
 * n Servers and n ServerClaims (half bound), a maintenance on every tenth server, a fleet and a per-rack
 * budget, and a claim budget per tenant.
 */
function buildFleet(n: number): Fleet {
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
const admissionReview = (request: Record<string, unknown>) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { uid: `7f0b2c3e-0000-4000-8000-${String(++uid).padStart(12, '0')}`, ...request },
});

const metal = { group: 'metal.ironcore.dev', version: 'v1alpha1' };
const maint = { group: 'maintenance.metal.ironcore.dev', version: 'v1alpha1' };

/** metal-operator binding a claim to a Server: the UPDATE that sets spec.serverClaimRef. */
function bindReview(server: Server, claim: ServerClaim): Req {
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
function evictionReview(m: ServerMaintenance): Req {
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
function makeRequests(servers: Server[], claims: ServerClaim[], maintenances: ServerMaintenance[]) {
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

// ------------------------------------------------------------------ measurements

const percentile = (sorted: Float64Array, p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

type Measured = Awaited<ReturnType<typeof measure>>;

/** A load job, with how busy this (the servers') thread was per request meanwhile. */
async function measure(gen: Generator, job: LoadJob) {
  const before = performance.eventLoopUtilization();
  const cpu0 = process.cpuUsage();
  const r = await gen.run(job);
  const cpu = process.cpuUsage(cpu0);
  const elu = performance.eventLoopUtilization(before);
  const n = Math.max(1, r.completed);
  return {
    ...summarize(r),
    busyUsPerRequest: (elu.active * 1000) / n,
    elu: elu.utilization,
    /** CPU of this process (the servers, their GC and I/O threads) per request. */
    cpuUsPerRequest: (cpu.user + cpu.system) / n,
    /** Share of one core the load generator used: near 1 means it, not the server, may set the pace. */
    generatorBusy: r.cpuUs / (r.elapsedMs * 1000),
  };
}

function summarize(r: LoadResult) {
  const sorted = r.latencies.slice().sort();
  return {
    rps: (r.completed * 1000) / r.elapsedMs,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    /** Open loop: the generator's own delay in sending, p99 (part of every latency above). */
    lateP99: percentile(r.lateness.slice().sort(), 99),
    errors: r.errors,
    n: r.completed,
  };
}

/** The mixed workload as the generator sends it: path and JSON body. */
const wireRequests = (f: Fleet) => mixed(f).map((r) => ({ path: r.path, body: JSON.stringify(r.review) }));

const mixed = (f: Fleet): Req[] =>
  f.requests.placementAllow.flatMap((a, k) => [
    a,
    f.requests.placementDeny[k]!,
    f.requests.evictionDryRun[k]!,
  ]);

/** Checks that each request gets the decision it stands for, so the benchmark measures real work. */
async function verify(f: Fleet, policies: PolicyStore): Promise<void> {
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

/**
 * Per-decision latency (µs) in process: JSON body → parse → review(), rounds alternating between the worlds. Per
 * world: percentiles over all calls; the ratio is the median of the per-round ratios of medians (a
 * round of each world back to back sees the same machine). `before` runs ahead of each decision,
 * outside the timing.
 */
async function decisionLatency(
  fleets: Fleet[],
  policies: PolicyStore,
  rounds: number,
  perRound: number,
  before?: () => void,
) {
  const samples = fleets.map(() => [] as number[]);
  const roundMedians = fleets.map(() => [] as number[]);
  // mixed() interleaves placement allow, placement deny, eviction dry-run.
  const byKind = fleets.map(() => [[], [], []] as number[][]);
  // As the server gets them: a fresh JSON body per request (pre-parsed objects shared across iterations
  // would stay cache-hot, and alias the small world's own objects, flattering it).
  const reqs = fleets.map((f) => mixed(f).map((r) => ({ ...r, body: JSON.stringify(r.review) })));
  const run = async (k: number, count: number, record: boolean) => {
    const f = fleets[k]!;
    const deps = { world: f.world, policies, grant: createGrantor(f.store), clock: () => new Date(ts) };
    const round: number[] = [];
    for (let j = 0; j < count; j++) {
      const r = reqs[k]![j % reqs[k]!.length]!;
      before?.();
      const t0 = process.hrtime.bigint();
      await review(r.type, r.rule, parseAdmissionReview(JSON.parse(r.body)), deps);
      const us = Number(process.hrtime.bigint() - t0) / 1000;
      round.push(us);
      if (record) byKind[k]![j % 3]!.push(us);
    }
    if (!record) return;
    samples[k]!.push(...round);
    roundMedians[k]!.push(percentile(Float64Array.from(round).sort(), 50));
  };
  for (let k = 0; k < fleets.length; k++) await run(k, perRound, false); // warm-up
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let round = 0; round < rounds; round++)
    for (let k = 0; k < fleets.length; k++) {
      // Each world's round starts on a collected heap, so one round's garbage is not the next one's pause.
      gc?.();
      await run(k, perRound, true);
    }
  const perWorld = samples.map((s) => {
    const sorted = Float64Array.from(s).sort();
    return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), n: s.length };
  });
  const ratios = roundMedians[1]!.map((m, i) => m / roundMedians[0]![i]!);
  const kinds = byKind.map((ks) => ks.map((xs) => median(xs)));
  return { perWorld, ratio: median(ratios), ratios, kinds };
}

/** A copy in random order (Fisher–Yates). */
function shuffled<T>(xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Writes 16 MB, one byte per cache line: afterwards the world's maps and objects are no longer in any
 * cache, as in the server, where TLS, HTTP and a 4.4 KB JSON.parse run between two decisions.
 */
function coldCaches(): () => void {
  const junk = new Uint8Array(16 * 1024 * 1024);
  return () => {
    for (let i = 0; i < junk.length; i += 64) junk[i] = (junk[i]! + 1) & 0xff;
  };
}

// ------------------------------------------------------------------ the limit

/** A fastify HTTPS server as the limit runs: the webhook's TLS, keep-alive and body limit, nothing else. */
const bareServer = (tls: { key: Buffer; cert: Buffer }) =>
  fastify({ https: tls, keepAliveTimeout: 90_000, bodyLimit: DEFAULT_BODY_LIMIT });

/** The limit's fixed answer. */
const ALLOWED = (uid: string) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response: { uid, allowed: true },
});

// ------------------------------------------------------------------ where the webhook's time goes

/**
 * Servers that each do a longer prefix of the webhook's work per review, from the envelope alone up to
 * the decision's own answer; the next step is the webhook itself (metrics, timing, the denial log
 * line). Measured against the limit in the same round, each step's ratio shows what the work it adds
 * costs under load, cache effects included (an in-process loop keeps caches warm and shows far less).
 */
const LADDER = [
  { step: 'envelope', adds: 'AdmissionReview envelope checked, a fixed "allowed" with its uid' },
  { step: '+ object check', adds: "the object's shape against its kind's schema" },
  { step: '+ rules', adds: 'the rule decides from the world (eviction: its dry-run grant)' },
  { step: '+ answer', adds: "the decision's own answer (denial status, warnings, audit)" },
] as const;

/**
 * After a 1 s warm-up of each step, each round: the limit, then every step in random order; a
 * step's ratio is over its own round's limit. Returns the runs per step (in the order of `urls`)
 * and the failed requests.
 */
async function ladderRounds(
  urls: string[],
  limitUrl: string,
  rounds: number,
  closed: (url: string, durationMs?: number) => Promise<Measured>,
): Promise<{ runs: { ratio: number; cpuUs: number }[][]; errors: number }> {
  for (const url of urls) await closed(url, 1000);
  const runs = urls.map(() => [] as { ratio: number; cpuUs: number }[]);
  let errors = 0;
  for (let round = 0; round < rounds; round++) {
    const l = await closed(limitUrl);
    errors += l.errors;
    for (const k of shuffled(urls.map((_, k) => k))) {
      const m = await closed(urls[k]!);
      runs[k]!.push({ ratio: m.rps / l.rps, cpuUs: m.cpuUsPerRequest });
      errors += m.errors;
    }
  }
  return { runs, errors };
}

interface LadderReview {
  type: ReviewType;
  rule: string;
  body: string;
  reply: FastifyReply;
  request?: AdmissionRequest;
  outcome?: ReviewOutcome | Promise<ReviewOutcome>;
}

async function ladderServer(level: number, deps: ReviewDeps, tls: { key: Buffer; cert: Buffer }) {
  const app = bareServer(tls);
  // As the webhook does it: bodies parsed, then decided, then answered in one batch per turn. A pure
  // decision costs no promise.
  keepJsonBodiesAsText(app);
  const enqueue = perTurn<LadderReview>((batch) => {
    for (const r of batch) {
      r.request = parseAdmissionReview(parseJsonBody(r.body));
      if (level === 1) checkObject(r.request);
      if (level >= 2) r.outcome = decide(r.type, r.rule, r.request, deps);
    }
    for (const { request, outcome, reply } of batch) {
      const uid = request!.uid;
      const answer = ({ decision, audit }: ReviewOutcome) =>
        reply.send(level === 3 ? toAdmissionResponse(uid, decision, audit) : ALLOWED(uid));
      if (!outcome) void reply.send(ALLOWED(uid));
      else if (outcome instanceof Promise) void outcome.then(answer);
      else void answer(outcome);
    }
  });
  app.post<{ Params: { type: ReviewType; rule: string } }>('/:type/:rule', (req, reply) => {
    enqueue({ type: req.params.type, rule: req.params.rule, body: req.body as string, reply });
    return reply;
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return app;
}

// ------------------------------------------------------------------ the servers under test

/** The webhook as deployed and the limit, listening on 127.0.0.1 with the same certificate. */
async function startServers(
  served: Fleet,
  policies: PolicyStore,
  tls: { key: Buffer; cert: Buffer },
  logSampling: LogSampling | false,
) {
  // The webhook's buffered info-level logger (denials are logged, sampled as in the binary), into /dev/null.
  const log = bufferedLogger('webhook', { level: 'info', dest: '/dev/null' });
  // One grantor over the served store, for the webhook and the ladder's steps alike.
  const grant = createGrantor(served.store);
  const webhook = createWebhookServer({
    world: served.world,
    policies,
    grant,
    isReady: () => true,
    logger: log.logger,
    tls,
    logSampling,
  });
  await webhook.app.listen({ host: '127.0.0.1', port: 0 });
  const limit = bareServer(tls);
  limit.post('/:type/:rule', (req, reply) =>
    reply.send(ALLOWED((req.body as { request: { uid: string } }).request.uid)),
  );
  await limit.listen({ host: '127.0.0.1', port: 0 });
  const urlOf = (app: { server: { address(): unknown } }) =>
    `https://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  return { webhook, limit, log, grant, urlOf };
}

/**
 * `--hold`: one server under the closed-loop load for one window, announced on stdout as it starts, so
 * that a profiler outside this process (scripts/profile-webhook.sh) sees that server's work alone.
 * Prints one JSON line with its throughput and CPU per request; exits non-zero on failed requests.
 */
async function hold(
  side: 'webhook' | 'limit',
  opts: BenchOptions,
  { served, policies, tls, caPem, connections }: RunSetup,
): Promise<void> {
  const { webhook, limit, log, urlOf } = await startServers(served, policies, tls, opts.logSampling);
  const url = urlOf(side === 'webhook' ? webhook.app : limit);
  const load = { ca: caPem, connections, concurrency: opts.concurrency, durationMs: opts.duration * 1000 };
  const requests = wireRequests(served);
  const gen = startGenerator();
  try {
    await measure(gen, { ...load, url, requests, durationMs: 2000 }); // warm-up: JIT, TLS sessions
    process.stdout.write(`holding ${side} for ${load.durationMs / 1000}s\n`);
    const m = await measure(gen, { ...load, url, requests });
    process.stdout.write(
      `${JSON.stringify({ side, rps: Math.round(m.rps), cpu_us_per_request: Number(m.cpuUsPerRequest.toFixed(1)), errors: m.errors })}\n`,
    );
    if (m.errors > 0) process.exitCode = 1;
  } finally {
    await gen.close();
    log.close();
    await Promise.all([webhook.app.close(), limit.close()]);
  }
}

// ------------------------------------------------------------------ main

interface BenchOptions {
  duration: number;
  rounds: number;
  connections?: number;
  concurrency: number;
  rate: number;
  small: number;
  large: number;
  serve: string;
  ladder?: boolean;
  hold?: string;
  logSampling: LogSampling | false;
}

/** What a run needs from the setup: the two fleets, verified, the one served, and the certificate. */
interface RunSetup {
  small: Fleet;
  large: Fleet;
  served: Fleet;
  policies: PolicyStore;
  tls: { key: Buffer; cert: Buffer };
  caPem: string;
  connections: number;
  buildMs: number;
}

/** Every measurement, then the report; the last line printed is the JSON summary. */
async function fullRun(
  opts: BenchOptions,
  { small, large, served, policies, tls, caPem, connections, buildMs }: RunSetup,
) {
  const decisions = await decisionLatency([small, large], policies, 9, 3000);
  const cold = await decisionLatency([small, large], policies, 5, 600, coldCaches());
  const [dSmall, dLarge] = decisions.perWorld as [
    (typeof decisions.perWorld)[0],
    (typeof decisions.perWorld)[0],
  ];

  const { webhook, limit, log, grant, urlOf } = await startServers(served, policies, tls, opts.logSampling);
  const requests = wireRequests(served);
  const bodyBytes = Math.round(requests.reduce((a, r) => a + r.body.length, 0) / requests.length);
  const job = (url: string, extra: Partial<LoadJob>): LoadJob => ({
    url,
    ca: caPem,
    connections,
    requests,
    durationMs: opts.duration * 1000,
    ...extra,
  });

  const gen = startGenerator();
  const closed = (url: string, durationMs = opts.duration * 1000) =>
    measure(gen, job(url, { concurrency: opts.concurrency, durationMs }));
  // Warm both servers (JIT, TLS sessions) before measuring.
  await closed(urlOf(webhook.app), 2000);
  await closed(urlOf(limit), 2000);
  // Short rounds in pairs, in random order: two rounds of a pair see about the same background load,
  // so the median of the per-pair ratios is robust to a busy machine.
  const pairs: { w: Measured; l: Measured }[] = [];
  for (let round = 0; round < opts.rounds; round++) {
    if (Math.random() < 0.5) {
      const w = await closed(urlOf(webhook.app));
      pairs.push({ w, l: await closed(urlOf(limit)) });
    } else {
      const l = await closed(urlOf(limit));
      pairs.push({ l, w: await closed(urlOf(webhook.app)) });
    }
  }
  const ratio = median(pairs.map((p) => p.w.rps / p.l.rps));
  // The webhook's work step by step (see ladderRounds), the webhook itself as the last step.
  const ladder: { step: string; adds: string; ratio: number; cpuUs: number }[] = [];
  let ladderErrors = 0;
  if (opts.ladder) {
    const deps: ReviewDeps = {
      world: served.world,
      policies,
      grant,
      clock: () => new Date(),
    };
    const steps = await Promise.all(LADDER.map((_, level) => ladderServer(level, deps, tls)));
    const urls = [...steps.map(urlOf), urlOf(webhook.app)];
    const byStep = await ladderRounds(urls, urlOf(limit), opts.rounds, closed);
    ladderErrors = byStep.errors;
    await Promise.all(steps.map((app) => app.close()));
    const named = [...LADDER, { step: 'webhook', adds: 'metrics, timing and the denial log line' }];
    for (const [k, runs] of byStep.runs.entries())
      ladder.push({
        ...named[k]!,
        ratio: median(runs.map((r) => r.ratio)),
        cpuUs: median(runs.map((r) => r.cpuUs)),
      });
  }
  // What the throughput ratio would be with a core to each server: the inverse ratio of their CPU per
  // request. Immune to time slices stolen by other processes, unlike req/s on a shared machine.
  const cpuRatio = median(pairs.map((p) => p.l.cpuUsPerRequest / p.w.cpuUsPerRequest));
  const medianRound = (side: 'w' | 'l') => {
    const sorted = [...pairs].sort((a, b) => a[side].rps - b[side].rps);
    return sorted[Math.floor(sorted.length / 2)]![side];
  };
  const w = medianRound('w');
  const l = medianRound('l');
  // Latency at a fixed rate: three open-loop runs; the median run's percentiles.
  const atRates: ReturnType<typeof summarize>[] = [];
  for (let k = 0; k < 3; k++)
    atRates.push(summarize(await gen.run(job(urlOf(webhook.app), { rate: opts.rate }))));
  const atRate = [...atRates].sort((a, b) => a.p99 - b.p99)[1]!;
  const limitAtRate = summarize(await gen.run(job(urlOf(limit), { rate: opts.rate })));
  await gen.close();
  log.close();
  await webhook.app.close();
  await limit.close();

  const f = (x: number, d = 2) => x.toFixed(d);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const row = (name: string, m: Measured) =>
    `  ${name} ${f(m.rps, 0).padStart(6)} req/s  p50 ${f(m.p50)} ms  p99 ${f(m.p99)} ms  ` +
    `server CPU ${f(m.cpuUsPerRequest, 1)} µs/req, event loop busy ${f(m.elu * 100, 0)}%, generator CPU ${f(m.generatorBusy * 100, 0)}%  errors ${m.errors}`;
  out(
    `worlds: ${opts.small} and ${opts.large} Servers + ServerClaims (built in ${buildMs} ms); HTTP against ${served === large ? opts.large : opts.small}`,
  );
  out(
    `workload: placement allow / placement deny / eviction dry-run in equal shares, ~${bodyBytes} B per review`,
  );
  const sampling = opts.logSampling;
  out(
    `webhook log: info, denial lines ${sampling ? `sampled ${sampling.initial}:${sampling.thereafter} per rule and code a second, as the binary's default` : 'all written (--log-sampling off)'}`,
  );
  out(
    `throughput (closed loop, ${opts.concurrency} in flight over ${connections} TLS connections, ${opts.rounds} paired rounds of ${opts.duration}s; median round):`,
  );
  out(row('webhook', w));
  out(row('limit  ', l));
  out(`  ratio   ${f(ratio, 3)} (median of pairs: ${pairs.map((p) => f(p.w.rps / p.l.rps, 2)).join(' ')})`);
  out(
    `  CPU per request, limit/webhook ${f(cpuRatio, 3)} (median of pairs: ${pairs.map((p) => f(p.l.cpuUsPerRequest / p.w.cpuUsPerRequest, 2)).join(' ')})`,
  );

  if (ladder.length > 0) {
    out(`where the webhook's CPU goes (each step against the limit in its round; median of ${opts.rounds}):`);
    for (const s of ladder)
      out(`  ${s.step.padEnd(15)} ${f(s.ratio, 3)}  ${f(s.cpuUs, 1).padStart(5)} µs/req  ${s.adds}`);
  }
  out(`latency at ${opts.rate} req/s (open loop, ${opts.duration}s; median of 3 runs by p99):`);
  out(
    `  webhook p50 ${f(atRate.p50)} ms  p99 ${f(atRate.p99)} ms  (${f(atRate.rps, 0)} req/s, errors ${atRate.errors}; p99 of the runs ${atRates.map((a) => f(a.p99)).join(' / ')})`,
  );
  out(
    `  limit   p50 ${f(limitAtRate.p50)} ms  p99 ${f(limitAtRate.p99)} ms  (${f(limitAtRate.rps, 0)} req/s)`,
  );
  out(
    `  the generator sent late by p99 ${f(atRate.lateP99, 3)} ms (webhook run) / ${f(limitAtRate.lateP99, 3)} ms (limit run), included above`,
  );
  out(
    `decision latency in process (JSON body → parse → review; ${dSmall.n} decisions per world, 9 alternating rounds):`,
  );
  out(`  ${String(opts.small).padStart(6)} objects  p50 ${f(dSmall.p50, 1)} µs  p99 ${f(dSmall.p99, 1)} µs`);
  out(`  ${String(opts.large).padStart(6)} objects  p50 ${f(dLarge.p50, 1)} µs  p99 ${f(dLarge.p99, 1)} µs`);
  out(
    `  ratio   ${f(decisions.ratio, 3)} (median of rounds: ${decisions.ratios.map((x) => f(x, 2)).join(' ')})`,
  );
  const [ks, kl] = decisions.kinds as [number[], number[]];
  out(
    `  p50 by kind (small/large µs): placement allow ${f(ks[0]!, 1)}/${f(kl[0]!, 1)}, ` +
      `placement deny ${f(ks[1]!, 1)}/${f(kl[1]!, 1)}, eviction dry-run ${f(ks[2]!, 1)}/${f(kl[2]!, 1)}`,
  );
  const [cs, cl] = cold.perWorld as [(typeof cold.perWorld)[0], (typeof cold.perWorld)[0]];
  const [cks, ckl] = cold.kinds as [number[], number[]];
  out(
    `  the same with cold caches (16 MB written before each; ${cs.n} per world, 5 rounds): ` +
      `p50 ${f(cs.p50, 1)} → ${f(cl.p50, 1)} µs, ratio ${f(cold.ratio, 3)}; by kind ` +
      `${f(cks[0]!, 1)}/${f(ckl[0]!, 1)}, ${f(cks[1]!, 1)}/${f(ckl[1]!, 1)}, ${f(cks[2]!, 1)}/${f(ckl[2]!, 1)}`,
  );
  out(
    JSON.stringify({
      throughput_ratio: Number(f(ratio, 3)),
      p99_ms: Number(f(atRate.p99, 3)),
      scale_ratio: Number(f(decisions.ratio, 3)),
      scale_ratio_cold: Number(f(cold.ratio, 3)),
      webhook_rps: Math.round(w.rps),
      limit_rps: Math.round(l.rps),
      webhook_p50_ms: Number(f(w.p50, 3)),
      webhook_p99_ms: Number(f(w.p99, 3)),
      limit_p50_ms: Number(f(l.p50, 3)),
      limit_p99_ms: Number(f(l.p99, 3)),
      cpu_ratio: Number(f(cpuRatio, 3)),
      webhook_cpu_us_per_request: Number(f(w.cpuUsPerRequest, 1)),
      limit_cpu_us_per_request: Number(f(l.cpuUsPerRequest, 1)),
      generator_busy: { webhook: Number(f(w.generatorBusy)), limit: Number(f(l.generatorBusy)) },
      rate: opts.rate,
      p50_ms_at_rate: Number(f(atRate.p50, 3)),
      send_late_p99_ms: Number(f(atRate.lateP99, 3)),
      decision_p50_us: { [opts.small]: Number(f(dSmall.p50, 1)), [opts.large]: Number(f(dLarge.p50, 1)) },
      errors: pairs.reduce((a, p) => a + p.w.errors + p.l.errors, 0) + atRate.errors + ladderErrors,
      ...(ladder.length > 0
        ? { ladder: Object.fromEntries(ladder.map((s) => [s.step, Number(f(s.ratio, 3))])) }
        : {}),
    }),
  );
}

if (!isLoadGenerator) {
  const opts = new Command('bench-webhook')
    .option('--duration <s>', 'seconds per load measurement', Number, 2)
    .option('--rounds <n>', 'paired throughput rounds (webhook and limit back to back)', Number, 7)
    .option(
      '--connections <n>',
      'TLS connections of the load generator (default: one per request in flight)',
      Number,
    )
    .option('--concurrency <n>', 'requests in flight (throughput)', Number, 32)
    .option('--rate <n>', 'requests/s for the latency measurement', Number, 1000)
    .option('--small <n>', 'Servers and claims in the small world', Number, 100)
    .option('--large <n>', 'Servers and claims in the large world', Number, 10_000)
    .option('--serve <world>', 'world behind the HTTP measurements: large | small', 'large')
    .option('--ladder', "also measure the webhook's work step by step against the limit (where 0.8 goes)")
    .option(
      '--hold <side>',
      'after the warm-up, load only this server (webhook | limit) for --duration seconds, print its ' +
        'figures and stop: a window for a profiler outside the process (scripts/profile-webhook.sh)',
    )
    .option(
      '--log-sampling <initial:thereafter|off>',
      "the webhook's denial lines, as the binary's flag (off: every line)",
      parseLogSampling,
      DEFAULT_LOG_SAMPLING,
    )
    .parse()
    .opts<BenchOptions>();
  if (opts.hold !== undefined && opts.hold !== 'webhook' && opts.hold !== 'limit') {
    process.stderr.write(`--hold must be webhook or limit, not ${JSON.stringify(opts.hold)}\n`);
    process.exit(2);
  }
  // The API server calls a webhook over HTTP/1.1 only (its webhook client pins ALPN to http/1.1), with
  // Go's client, which never pipelines: each call in flight has a connection of its own. With fewer
  // connections than requests in flight, the rest would wait in the generator and the server would see
  // fewer.
  const connections = opts.connections ?? opts.concurrency;

  const dir = mkdtempSync(join(tmpdir(), 'bench-webhook-'));
  try {
    const { certDir, caPem } = makeServingCertificate(dir);
    const tls = { key: readFileSync(join(certDir, 'tls.key')), cert: readFileSync(join(certDir, 'tls.crt')) };
    const policies = new PolicyStore({ initial: DEFAULT_POLICY });
    const t0 = Date.now();
    const small = buildFleet(opts.small);
    const large = buildFleet(opts.large);
    const buildMs = Date.now() - t0;
    await verify(small, policies);
    await verify(large, policies);

    const served = opts.serve === 'small' ? small : large;
    const setup: RunSetup = { small, large, served, policies, tls, caPem, connections, buildMs };
    if (opts.hold) await hold(opts.hold, opts, setup);
    else await fullRun(opts, setup);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
