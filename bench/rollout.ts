// Benchmark: a budget-limited rollout through the whole system, and the controllers' memory at scale.
//
//   npm run bench:rollout [-- --servers 1000 --budget 50 --hold 10s --scale 10000]
//
// 1. A fresh control plane, the webhook (2 replicas) and the maintenance, approval and budget
//    controllers, each a process under its own ServiceAccount.
// 2. N claimed servers (the fleet simulator plays metal-operator and, as the actor, holds each
//    maintenance for T once it is Ready, then deletes it) and a fleet ServerDisruptionBudget of K.
// 3. N maintenances created at once (approval not required). Makespan: first create until the last
//    maintenance is gone. Ideal: ceil(N/K)·T. A watch-stream checker records how many maintenances
//    are InMaintenance at once; it must never exceed K. The idle-slot oracle (e2e/harness/idle-slot.ts)
//    reports the longest a maintenance stayed admissible (a free slot in the budget, its server free)
//    without starting, and every wait past 10 s.
// 4. More servers and claims until --scale of each exist; once every controller's cache holds them,
//    each controller's peak RSS (VmHWM from /proc/<pid>/status).
// The last line printed is one JSON object.
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import {
  ServerMaintenanceKind,
  type ServerMaintenance,
} from '../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import { KubeClient } from '../lib/kube/client.js';
import { resourceOf } from '../lib/kube/resources.js';
import { parseDuration } from '../policies/validate.js';
import { controlPlaneUp, installCRDs, scratchControlPlaneDir } from '../e2e/harness/control-plane.js';
import { kubeconfigForBinary } from '../e2e/harness/processes.js';
import { FleetSimulator } from '../e2e/sim/fleet/simulator.js';
import { FLEET_LABEL, inParallel, planFleet, seedFleet } from '../e2e/sim/fleet/fleet.js';
import { LIFECYCLE_CONTROLLERS, Stack, memoryMiB } from '../e2e/demo/stack.js';
import { FleetWatch } from '../e2e/demo/watch.js';
import { IdleSlotOracle, type IdleSlotReport } from '../e2e/harness/idle-slot.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { waitFor } from './wait.js';

const int = (v: string) => Number.parseInt(v, 10);
const o = new Command()
  .option('--servers <n>', 'servers in the rollout (N)', int, 1000)
  .option('--budget <k>', 'fleet budget maxUnavailable (K)', int, 50)
  .option('--hold <duration>', 'how long the simulated actor holds each maintenance (T)', '10s')
  .option('--scale <n>', 'servers and claims cached for the memory measurement', int, 10_000)
  .option('--webhook-replicas <n>', 'webhook replicas', int, 2)
  .option('--records <file>', "write each maintenance's timeline (as the watch saw it) to this JSON file")
  .parse()
  .opts<{
    servers: number;
    budget: number;
    hold: string;
    scale: number;
    webhookReplicas: number;
    records?: string;
  }>();

const holdMs = parseDuration(o.hold);
if (holdMs === undefined) throw new Error(`--hold ${o.hold}: not a duration`);
const log = (msg: string) =>
  console.log(`[bench ${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${msg}`);
const started = Date.now();

const { dir, teardown: cleanup } = scratchControlPlaneDir('bench-rollout-');

/** Objects of a resource in a controller's cache (metal_informer_objects); undefined: it has no such cache. */
async function cached(stack: Stack, controller: string, resource: string): Promise<number | undefined> {
  const text = await stack.metrics(controller).catch(() => '');
  const m = new RegExp(`^metal_informer_objects\\{[^}]*resource="${resource}"[^}]*\\} (\\d+)`, 'm').exec(
    text,
  );
  return m ? Number(m[1]) : undefined;
}

/** Prometheus text -> samples (name, labels, value); enough of the format for our own /metrics. */
function samples(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  const out: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

interface Work {
  cpu_s: number;
  reconciles: number;
  writes: number;
  writes_by: Record<string, number>;
  queue_wait_mean_ms: number;
  queue_wait_over_1s: number;
  reconcile_mean_ms: number;
  requeues: Record<string, number>;
  ratelimited: number;
  ratelimit_delay_s: number;
  conflicts: number;
  /** InMaintenance attempts by result (maintenance controller). */
  attempts: Record<string, number>;
}

/**
 * What each controller did, from its /metrics: load-independent counts (reconciles, API writes,
 * planned requeues by reason, retries the token bucket delayed) next to the queue waits and CPU.
 */
async function work(stack: Stack): Promise<Record<string, Work>> {
  const out: Record<string, Work> = {};
  for (const c of stack.controllers) {
    const all = samples(await stack.metrics(c.name).catch(() => ''));
    const sum = (name: string, f: (l: Record<string, string>) => boolean = () => true) =>
      all.filter((x) => x.name === name && f(x.labels)).reduce((a, x) => a + x.value, 0);
    /** Values of one metric summed by a key made of its labels (undefined: left out). */
    const by = (name: string, key: (l: Record<string, string>) => string | undefined) => {
      const r: Record<string, number> = {};
      for (const x of all) {
        const k = x.name === name ? key(x.labels) : undefined;
        if (k !== undefined) r[k] = (r[k] ?? 0) + x.value;
      }
      return r;
    };
    const writes_by = by('metal_api_requests_total', (l) =>
      ['GET', 'LIST'].includes(l.verb ?? '')
        ? undefined
        : `${l.verb} ${l.resource}${l.code?.startsWith('2') ? '' : ` ${l.code}`}`,
    );
    const waits = sum('metal_workqueue_queue_duration_seconds_count');
    const le1 = sum('metal_workqueue_queue_duration_seconds_bucket', (l) => l.le === '1');
    out[c.name] = {
      cpu_s: cpuSeconds(c.pid),
      reconciles: sum('metal_reconcile_total'),
      writes: Object.values(writes_by).reduce((a, b) => a + b, 0),
      writes_by,
      queue_wait_mean_ms: Math.round((sum('metal_workqueue_queue_duration_seconds_sum') / waits) * 1000),
      queue_wait_over_1s: waits - le1,
      reconcile_mean_ms: Math.round(
        (sum('metal_reconcile_duration_seconds_sum') / sum('metal_reconcile_duration_seconds_count')) * 1000,
      ),
      requeues: by('metal_reconcile_requeues_total', (l) => `${l.controller}/${l.reason}`),
      ratelimited: sum('metal_workqueue_ratelimit_delay_seconds_count'),
      ratelimit_delay_s: Math.round(sum('metal_workqueue_ratelimit_delay_seconds_sum') * 10) / 10,
      conflicts: sum('metal_status_conflicts_total'),
      attempts: {
        ...by('metal_maintenance_admission_attempts_total', (l) => l.result),
        ...by('metal_maintenance_decisions_denied_total', (l) => `denied ${l.reason}`),
      },
    };
  }
  return out;
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/**
 * Where a slot's time goes, per maintenance: admission to Ready (park), the hold, the delete to gone
 * (finalizer: unpark, untaint), and gone to grant released; plus the slot time no maintenance held.
 */
function breakdown(w: FleetWatch, sim: FleetSimulator, k: number, t0: number, makespanMs: number): string[] {
  const rs = [...w.records.values()].filter((r) => r.inMaintenanceAt && r.deletedAt);
  // The ideal schedule starts the first K at once; how long ours took to fill the budget is idle slot time.
  const wave = [...rs].sort((a, b) => a.inMaintenanceAt! - b.inMaintenanceAt!).slice(0, k);
  const firstWave = wave.map((r) => r.inMaintenanceAt! - t0);
  const approved = wave.filter((r) => r.approvedAt);
  const ready = rs.filter((r) => r.readyAt).map((r) => r.readyAt! - r.inMaintenanceAt!);
  const hold = rs.filter((r) => r.readyAt && r.deletingAt).map((r) => r.deletingAt! - r.readyAt!);
  const cleanup = rs.filter((r) => r.deletingAt).map((r) => r.deletedAt! - r.deletingAt!);
  const occupied = rs.reduce((a, r) => a + (r.deletedAt! - r.inMaintenanceAt!), 0);
  const idle = (k * makespanMs - occupied) / Math.max(1, rs.length);
  // A refill, slot by slot: the i-th release makes room for the (K+i)-th grant.
  const releases = rs.filter((r) => r.releasedAt).sort((a, b) => a.releasedAt! - b.releasedAt!);
  const grants = rs.filter((r) => r.grantedAt).sort((a, b) => a.grantedAt! - b.grantedAt!);
  const nextGrant = releases
    .map((r, i) => (grants[k + i]?.grantedAt ?? NaN) - r.releasedAt!)
    .filter((x) => !Number.isNaN(x));
  return [
    `  InMaintenance -> Ready (park)          ${seconds(mean(ready))} mean`,
    `    of which the simulator's park        ${seconds(mean(sim.stats.parkMs))} mean (request seen -> parked)`,
    `  Ready -> delete (the actor's hold)     ${seconds(mean(hold))} mean`,
    `  delete -> gone (finalizer)             ${seconds(mean(cleanup))} mean`,
    `    of which the simulator's unpark      ${seconds(mean(sim.stats.unparkMs))} mean`,
    `  slot idle per maintenance (refill)     ${seconds(idle)} mean over ${k} slots`,
    `    gone -> grant released (ledger)      ${seconds(mean(releases.map((r) => r.releasedAt! - r.deletedAt!)))} mean`,
    `    release -> next grant                ${seconds(mean(nextGrant))} mean, ${seconds(median(nextGrant))} median`,
    `    grant -> InMaintenance               ${seconds(mean(grants.filter((r) => r.inMaintenanceAt).map((r) => r.inMaintenanceAt! - r.grantedAt!)))} mean`,
    `    of which filling the first wave      ${seconds(firstWave.at(-1) ?? NaN)} until all ${k} ran ` +
      `(${seconds(mean(firstWave))} mean after the first create)`,
    `      created -> approved                ${seconds(mean(approved.map((r) => r.approvedAt! - r.createdAt)))} mean`,
    `      approved -> InMaintenance          ${seconds(mean(approved.map((r) => r.inMaintenanceAt! - r.approvedAt!)))} mean`,
  ];
}

const cp = await controlPlaneUp(dir);
const admin = await KubeClient.fromFile(cp.kubeconfig);
await installCRDs(admin);
log(`control plane up (${dir})`);
const stack = await Stack.start({
  admin,
  webhookReplicas: o.webhookReplicas,
  controllers: LIFECYCLE_CONTROLLERS,
  runtime: 'node',
  say: log,
  controlPlaneDir: dir,
});
let sim: FleetSimulator | undefined;
let watch: FleetWatch | undefined;
try {
  if (stack.missing.length > 0)
    throw new Error(`cannot measure without: ${stack.missing.map((m) => `${m}-controller`).join(', ')}`);

  // --- rollout -------------------------------------------------------------------------------
  const fleet = planFleet({
    name: 'rollout',
    prefix: 'a-',
    servers: o.servers,
    racks: Math.ceil(o.servers / 50),
    tenants: 4,
    claimsPerTenant: o.servers / 4,
    prebound: true,
    fleetBudget: o.budget,
  });
  let t = Date.now();
  await seedFleet(admin, fleet, { concurrency: 32 });
  log(
    `seeded ${fleet.servers.length} claimed servers and a fleet budget of ${o.budget} in ${Date.now() - t} ms`,
  );
  const { kubeconfig } = await kubeconfigForBinary(
    admin,
    'fleet-simulator',
    join(import.meta.dirname, '..', 'e2e', 'sim', 'fleet', 'rbac.yaml'),
  );
  sim = new FleetSimulator({
    client: await KubeClient.fromFile(kubeconfig),
    labelSelector: `${FLEET_LABEL}=rollout`,
    timings: { discoveryMs: 0, powerMs: 0 },
    actor: { holdMs },
  });
  watch = new FleetWatch(admin, { labelSelector: `${FLEET_LABEL}=rollout`, budgets: true });
  const rolloutServers = new Set(fleet.servers.map((s) => s.metadata.name!));
  const oracle = new IdleSlotOracle({
    budgets: [
      { name: 'fleet', domainOf: new Map([...rolloutServers].map((s) => [s, ''])), maxUnavailable: o.budget },
    ],
  });
  const feed = (m: ServerMaintenance, deleted: boolean) => {
    if (rolloutServers.has(m.spec.serverRef.name)) oracle.onMaintenance(m, deleted, Date.now());
  };
  watch.maintenances.on({
    add: (m) => feed(m, false),
    update: (_o, m) => feed(m, false),
    delete: (m) => feed(m, true),
  });
  // An ended maintenance holds its slot until its finalizer releases the grant: the oracle reads the ledger.
  const fleetBudgets = new Set(fleet.serverBudgets.map((b) => b.metadata.name!));
  const ledger = (b: ServerDisruptionBudget) => {
    if (fleetBudgets.has(b.metadata.name!))
      oracle.onLedger(b.metadata.name!, b.status?.grants ?? [], Date.now());
  };
  watch.serverBudgets?.on({ add: ledger, update: (_o, b) => ledger(b) });
  const oracleTick = setInterval(() => oracle.tick(Date.now()), 250);
  await Promise.all([sim.start(), watch.start()]);

  const maintenances = admin.resource<ServerMaintenance>(resourceOf(ServerMaintenanceKind));
  const t0 = Date.now();
  await inParallel(fleet.servers, 32, async (s) => {
    await maintenances.create({
      metadata: { name: `fw-${s.metadata.name}`, namespace: 'default' },
      spec: {
        serverRef: { name: s.metadata.name! },
        reason: 'FirmwareUpdate',
        class: 'Urgent',
        approval: { required: false },
      },
    });
  });
  log(`created ${fleet.servers.length} maintenances in ${Date.now() - t0} ms`);
  const w = watch;
  let lastReport = 0;
  // A contended machine can be far slower than ideal; give up only at 10x, and report what finished.
  const idealMs = Math.ceil(o.servers / o.budget) * holdMs;
  const doneCount = () => [...w.records.values()].filter((r) => r.deletedAt).length;
  const completed = await waitFor(
    'every maintenance done',
    () => {
      const done = doneCount();
      if (Date.now() - lastReport > 10_000) {
        lastReport = Date.now();
        log(
          `${done}/${o.servers} done, ${w.checker.current} in maintenance (peak ${w.checker.peak}/${o.budget})`,
        );
      }
      return done >= o.servers;
    },
    idealMs * 10 + 300_000,
    200,
  ).then(
    () => true,
    (e: unknown) => {
      log(`rollout did not finish: ${(e as Error).message}; reporting the ${doneCount()} that did`);
      return false;
    },
  );
  const done = doneCount();
  const lastDeleted = Math.max(...[...w.records.values()].map((r) => r.deletedAt ?? 0));
  // Unfinished: a lower bound, the time so far.
  const makespanMs = (completed ? lastDeleted : Date.now()) - t0;
  const peak = w.checker.peak;
  log(
    `rollout ${completed ? 'done' : `stopped at ${done}/${o.servers}`}: makespan ${(makespanMs / 1000).toFixed(1)} s, ideal ${(idealMs / 1000).toFixed(1)} s, peak in maintenance ${peak}/${o.budget}`,
  );
  const slots = breakdown(w, sim, o.budget, t0, makespanMs);
  if (o.records)
    writeFileSync(
      o.records,
      JSON.stringify([...w.records.values()].map((r) => ({ ...r, waitedFor: [...r.waitedFor] }))),
    );
  clearInterval(oracleTick);
  oracle.tick(Date.now());
  const idle: IdleSlotReport = oracle.report();
  log(
    `idle-slot oracle: longest admissible wait ${(idle.longestWaitMs / 1000).toFixed(1)} s (${idle.longestWaiter ?? '-'}), ` +
      `${idle.violations.length} over 10 s${idle.violations.length ? `: ${idle.violations.slice(0, 3).join('; ')}` : ''}`,
  );
  const did = await work(stack);
  const loadAfterRollout = loadavg().map((x) => Math.round(x * 100) / 100);
  await sim.stop();
  sim = undefined;
  await watch.stop();
  watch = undefined;

  // --- memory at scale -----------------------------------------------------------------------
  const more = o.scale - o.servers;
  t = Date.now();
  if (more > 0) {
    const big = planFleet({
      name: 'scale',
      prefix: 'b-',
      servers: more,
      racks: Math.ceil(more / 50),
      tenants: 20,
      claimsPerTenant: more / 20,
      prebound: true,
    });
    let lastLog = Date.now();
    await seedFleet(admin, big, {
      concurrency: 48,
      onProgress: (done, total) => {
        if (Date.now() - lastLog < 15_000) return;
        lastLog = Date.now();
        log(`seeding: ${done}/${total}`);
      },
    });
  }
  log(`${o.scale} servers and claims exist (${Date.now() - t} ms to add ${Math.max(0, more)})`);
  await waitFor(
    'controllers cache every server and claim',
    async () => {
      for (const c of stack.controllers)
        for (const resource of ['servers', 'serverclaims']) {
          const n = await cached(stack, c.name, resource);
          if (n !== undefined && n < o.scale) return false;
        }
      return true;
    },
    300_000,
    1000,
  );
  await sleep(5000); // let the reconciles the new objects caused settle
  const rss: Record<
    string,
    { peak_mib: number; rss_mib: number; servers_cached?: number; claims_cached?: number }
  > = {};
  for (const c of stack.controllers) {
    const mem = memoryMiB(c.pid);
    rss[c.name] = {
      peak_mib: Math.round((mem?.hwm ?? NaN) * 10) / 10,
      rss_mib: Math.round((mem?.rss ?? NaN) * 10) / 10,
      servers_cached: await cached(stack, c.name, 'servers'),
      claims_cached: await cached(stack, c.name, 'serverclaims'),
    };
    const r = rss[c.name]!;
    log(
      `${c.name}-controller: peak RSS ${r.peak_mib} MiB (now ${r.rss_mib} MiB), caches ${r.servers_cached ?? 'no'} servers / ${r.claims_cached ?? 'no'} claims`,
    );
  }
  const largest = Math.max(...Object.values(rss).map((r) => r.peak_mib));
  const ratio = makespanMs / idealMs;
  console.log('');
  console.log(
    `makespan           ${(makespanMs / 1000).toFixed(1)} s  (N=${o.servers}, K=${o.budget}, T=${o.hold})`,
  );
  console.log(`ideal ceil(N/K)·T  ${(idealMs / 1000).toFixed(1)} s`);
  console.log(
    `ratio              ${ratio.toFixed(3)}${completed ? '' : ' or more (unfinished)'}  (target ≤ 1.15)`,
  );
  console.log(`peak in maint.     ${peak}  (budget ${o.budget}${peak > o.budget ? ', EXCEEDED' : ''})`);
  console.log(
    `admissible wait    ${(idle.longestWaitMs / 1000).toFixed(1)} s longest, ${idle.violations.length} over 10 s  (target 0)`,
  );
  console.log(
    `controller RSS     ${largest} MiB peak, largest of ${stack.controllers.length}  (target ≤ 200 MiB, ${o.scale} servers and claims)`,
  );
  console.log("where a slot's time went:");
  for (const line of slots) console.log(line);
  console.log(
    `what the controllers did in the rollout (load average after it: ${loadAfterRollout.join(' ')}):`,
  );
  for (const [name, d] of Object.entries(did)) {
    console.log(
      `  ${name.padEnd(12)} cpu ${d.cpu_s.toFixed(1)} s, ${d.reconciles} reconciles (mean ${d.reconcile_mean_ms} ms), ` +
        `${d.writes} writes (${(d.writes / o.servers).toFixed(1)}/maintenance), queue wait mean ${d.queue_wait_mean_ms} ms ` +
        `(${d.queue_wait_over_1s} waits > 1 s), ${d.ratelimited} retries delayed by the token bucket (${d.ratelimit_delay_s} s), ` +
        `${d.conflicts} write conflicts`,
    );
    const top = (r: Record<string, number>) =>
      Object.entries(r)
        .sort(([, a], [, b]) => b - a)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ');
    console.log(`    writes: ${top(d.writes_by)}`);
    if (Object.keys(d.requeues).length > 0) console.log(`    requeues: ${top(d.requeues)}`);
    if (Object.keys(d.attempts).length > 0) console.log(`    InMaintenance attempts: ${top(d.attempts)}`);
  }
  console.log(
    JSON.stringify({
      makespan_ratio: Math.round(ratio * 1000) / 1000,
      rollout_completed: completed,
      rollout_done: done,
      makespan_s: Math.round(makespanMs / 100) / 10,
      ideal_s: idealMs / 1000,
      peak_in_maintenance: peak,
      longest_admissible_wait_s: Math.round(idle.longestWaitMs / 100) / 10,
      idle_slot_violations: idle.violations.length,
      budget: o.budget,
      servers: o.servers,
      hold_s: holdMs / 1000,
      rss_mib: largest,
      rss_by_controller: rss,
      scale: o.scale,
      work: did,
      loadavg_after_rollout: loadAfterRollout,
      // Other work on the machine skews every figure above; say how busy it was.
      loadavg_1m: Math.round(loadavg()[0]! * 100) / 100,
      cpus: cpus().length,
    }),
  );
} finally {
  await sim?.stop();
  await watch?.stop();
  await stack.stop();
  await admin.close();
  cleanup();
}
