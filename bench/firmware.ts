// Benchmark: a BIOS and a BMC firmware rollout through the whole system under disruption budgets,
// against the ideal schedule for those budgets, and the firmware controller's memory at scale.
//
//   npm run bench:firmware [-- --servers 1000 --bmcs 400 --budget 50 --rack-budget 5 --flash-ms 30000 --scale 10000]
//
// 1. A fresh control plane, the webhook, the maintenance, approval and budget controllers and the
//    firmware controller, each a compiled process under its own ServiceAccount.
// 2. N servers in racks of --rack-size behind M simulated BMCs (e2e/sim/bmc; the simulator holds
//    each flash for T = --flash-ms), a fleet ServerDisruptionBudget of K and a per-rack one of R.
//    The fleet simulator plays metal-operator (park, unpark); no actor: the firmware controller
//    ends its own maintenances.
// 3. A BIOSVersionSet over the servers and a BMCVersionSet over the BMCs, created at once.
//    Makespan: their creation until both report every child Completed. Ideal: bench/firmware/ideal.ts
//    for the same servers, racks, BMC sharing, K, R and T, computed in this run.
//    peak_in_maintenance: the most maintenances InMaintenance at once, from a watch stream.
//    double_applies: from the simulator's per-server and per-BMC counters.
// 4. With --scale S > N: S - N more servers behind proportionally many BMCs (a second simulator),
//    objects only: a paused BIOSVersionSet and BMCVersionSet over them stamp every child, held, so
//    the firmware controller caches S servers and their firmware objects without flashing them.
//    rss_mib: its VmHWM (peak, /proc/<pid>/status) after that, which also covers the rollout.
// The last line printed is one JSON object.
import { cpus, loadavg } from 'node:os';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Command } from 'commander';
import type { KubeObject } from '../api/schema/meta.js';
import { KubeClient } from '../lib/kube/client.js';
import { BIOSVersionSetResource, BMCVersionSetResource } from '../lib/kube/kinds.js';
import { controlPlaneUp, installCRDs, scratchControlPlaneDir } from '../e2e/harness/control-plane.js';
import { kubeconfigForBinary } from '../e2e/harness/processes.js';
import { FleetSimulator } from '../e2e/sim/fleet/simulator.js';
import { FLEET_LABEL } from '../e2e/sim/fleet/fleet.js';
import { LIFECYCLE_CONTROLLERS, Stack, applyPolicy, memoryMiB } from '../e2e/demo/stack.js';
import { FleetWatch } from '../e2e/demo/watch.js';
import { generateTls } from '../e2e/sim/bmc/tls.js';
import { idealSchedule } from './firmware/ideal.js';
import { countApplies } from './firmware/ledger.js';
import { benchPolicy, holdSummary, slotAccount, type SetStatus } from './firmware/report.js';
import { waitFor } from './wait.js';
import { cpuSeconds, ended, gangsOf } from './firmware/probe.js';
import { seedWorld, type World } from './firmware/world.js';

const int = (v: string) => Number.parseInt(v, 10);
const o = new Command()
  .option('--servers <n>', 'servers in the rollout (N)', int, 1000)
  .option('--bmcs <m>', 'simulated BMCs the servers sit behind (M)', int, 400)
  .option('--budget <k>', 'fleet budget maxUnavailable (K)', int, 50)
  .option('--rack-budget <r>', 'per-rack budget maxUnavailable (R)', int, 5)
  .option('--rack-size <n>', 'servers per rack', int, 50)
  .option('--flash-ms <t>', 'how long the simulator runs each update task (T)', int, 30_000)
  .option(
    '--gang-timeout <duration>',
    "policy firmware.timeouts.admission: a BMC gang's wait admitted in part",
    '60s',
  )
  .option('--max-attempts <n>', 'policy firmware.defaultMaxAttempts (at most 10)', int, 10)
  .option('--poll-interval <s>', "the firmware controller's --poll-interval", '1')
  .option(
    '--scale <n>',
    'servers the firmware controller caches for the memory measurement (0: skip)',
    int,
    10_000,
  )
  .option(
    '--max-wait <s>',
    'give the rollout up after this many seconds and report it unfinished (default 10x ideal + 5 min)',
    int,
  )
  .option('--records <file>', "write each maintenance's timeline (as the watch saw it) to this JSON file")
  .parse()
  .opts<{
    servers: number;
    bmcs: number;
    budget: number;
    rackBudget: number;
    rackSize: number;
    flashMs: number;
    pollInterval: string;
    gangTimeout: string;
    maxAttempts: number;
    scale: number;
    maxWait?: number;
    records?: string;
  }>();

const started = Date.now();
const log = (msg: string) =>
  console.log(`[bench ${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${msg}`);
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

// The ideal first: a shape no schedule can run (a BMC gang larger than a budget) fails here, at once.
const ideal = (w: Pick<World, 'racks' | 'bmcOf'>) =>
  idealSchedule({
    racks: w.racks,
    bmcs: w.bmcOf,
    bios: true,
    bmc: true,
    budget: o.budget,
    rackBudget: o.rackBudget,
    flashMs: o.flashMs,
  });

const { dir, teardown: cleanup } = scratchControlPlaneDir('bench-firmware-');
const cp = await controlPlaneUp(dir);
const admin = await KubeClient.fromFile(cp.kubeconfig);
await installCRDs(admin);
await applyPolicy(admin, benchPolicy(o.flashMs, { admission: o.gangTimeout, attempts: o.maxAttempts }));
log(`control plane up (${dir})`);

const worlds: World[] = [];
let stack: Stack | undefined;
let sim: FleetSimulator | undefined;
let watch: FleetWatch | undefined;
try {
  let t = Date.now();
  const tls = generateTls();
  const world = await seedWorld(admin, {
    name: 'fw',
    servers: o.servers,
    bmcs: o.bmcs,
    rackSize: o.rackSize,
    budget: o.budget,
    rackBudget: o.rackBudget,
    timing: { updateMs: o.flashMs, restartMs: 200, powerOnMs: 200, managerResetOutageMs: 500 },
    tls,
  });
  worlds.push(world);
  const best = ideal(world);
  log(
    `seeded ${o.servers} servers behind ${o.bmcs} BMCs, budgets K=${o.budget} R=${o.rackBudget} in ${Date.now() - t} ms; ` +
      `ideal ${best.rounds} rounds of ${o.flashMs} ms (bound ${best.lowerBoundRounds}${best.exact ? ', exact' : ''})`,
  );
  const caFile = join(mkdtempSync(join(tmpdir(), 'bench-fw-ca-')), 'ca.pem');
  writeFileSync(caFile, tls.ca);

  stack = await Stack.start({
    admin,
    webhookReplicas: 1,
    controllers: [...LIFECYCLE_CONTROLLERS, 'firmware'],
    controllerArgs: {
      firmware: [`--bmc-ca-file=${caFile}`, '--redfish-timeout=5', `--poll-interval=${o.pollInterval}`],
    },
    runtime: 'node',
    say: log,
    controlPlaneDir: dir,
  });
  if (stack.missing.length > 0)
    throw new Error(`cannot measure without: ${stack.missing.map((m) => `${m}-controller`).join(', ')}`);
  const firmware = stack.controllers.find((c) => c.name === 'firmware')!;

  const { kubeconfig } = await kubeconfigForBinary(
    admin,
    'fleet-simulator',
    join(import.meta.dirname, '..', 'e2e', 'sim', 'fleet', 'rbac.yaml'),
  );
  sim = new FleetSimulator({
    client: await KubeClient.fromFile(kubeconfig),
    labelSelector: `${FLEET_LABEL}=fw`,
    timings: { discoveryMs: 0, powerMs: 0 },
  });
  watch = new FleetWatch(admin, { labelSelector: `${FLEET_LABEL}=fw`, budgets: true });
  await Promise.all([sim.start(), watch.start()]);

  // --- rollout -------------------------------------------------------------------------------
  const biosSets = admin.resource<KubeObject & { status?: SetStatus }>(BIOSVersionSetResource);
  const bmcSets = admin.resource<KubeObject & { status?: SetStatus }>(BMCVersionSetResource);
  const cpuBefore = Object.fromEntries(stack.controllers.map((c) => [c.name, cpuSeconds(c.pid)]));
  const t0 = Date.now();
  await Promise.all([
    biosSets.create({
      metadata: { name: 'fw-bios' },
      spec: {
        serverSelector: { matchLabels: world.selector },
        biosVersionTemplate: {
          version: '2.0.0',
          serverMaintenancePolicy: 'Enforced',
          image: { URI: 'https://images.test/bios/2.0.0' },
        },
      },
    } as KubeObject),
    bmcSets.create({
      metadata: { name: 'fw-bmc' },
      spec: {
        bmcSelector: { matchLabels: world.selector },
        bmcVersionTemplate: {
          version: '6.0.0',
          serverMaintenancePolicy: 'Enforced',
          image: { URI: 'https://images.test/bmc/6.0.0' },
        },
      },
    } as KubeObject),
  ]);
  log('BIOSVersionSet and BMCVersionSet created');
  const w = watch;
  let bios: SetStatus = {};
  let bmc: SetStatus = {};
  let lastReport = 0;
  // Stalled: no child finished and no maintenance ended for three flashes and a minute.
  const stallMs = Math.max(3 * o.flashMs + 60_000, 120_000);
  let progress = -1;
  let progressAt = Date.now();
  let stall: { gangs: number; slotsHeld: number; inMaintenance: number } | undefined;
  const completed = await waitFor(
    'both Sets complete',
    async () => {
      bios = (await biosSets.get('fw-bios')).status ?? {};
      bmc = (await bmcSets.get('fw-bmc')).status ?? {};
      if (Date.now() - lastReport > 15_000) {
        lastReport = Date.now();
        log(
          `BIOS ${bios.completedBIOSVersion ?? 0}/${o.servers} (failed ${bios.failedBIOSVersion ?? 0}), ` +
            `BMC ${bmc.completedBMCVersion ?? 0}/${o.bmcs} (failed ${bmc.failedBMCVersion ?? 0}), ` +
            `${w.checker.current} in maintenance (peak ${w.checker.peak}/${o.budget}), load ${loadavg()[0]!.toFixed(2)}`,
        );
      }
      const now = (bios.completedBIOSVersion ?? 0) + (bmc.completedBMCVersion ?? 0) + ended(w);
      if (now !== progress) [progress, progressAt] = [now, Date.now()];
      else if (Date.now() - progressAt > stallMs) {
        stall = { ...gangsOf(w), inMaintenance: w.checker.current };
        throw new Error(
          `no progress for ${stallMs / 1000} s: ${stall.inMaintenance} in maintenance, ` +
            `${stall.slotsHeld} of them held by ${stall.gangs} BMC gangs admitted in part`,
        );
      }
      return bios.completedBIOSVersion === o.servers && bmc.completedBMCVersion === o.bmcs;
    },
    o.maxWait !== undefined ? o.maxWait * 1000 : best.makespanMs * 10 + 300_000,
    500,
  ).then(
    () => true,
    (e: unknown) => {
      log(`rollout did not finish: ${(e as Error).message}`);
      return false;
    },
  );
  const makespanMs = Date.now() - t0;
  const cpu = Object.fromEntries(
    stack.controllers.map((c) => [c.name, round(cpuSeconds(c.pid) - cpuBefore[c.name]!)]),
  );
  const applies = countApplies(world.sim.ledger(), { bios: true, bmc: true });
  const holds = holdSummary([...w.records.values()], o.flashMs, o.budget, makespanMs);
  const slots = slotAccount([...w.records.values()], o.flashMs, o.budget, makespanMs);
  const rackPeaks = w.checker.budgetPeaks().filter((p) => p.budget.endsWith('-per-rack'));
  const rackPeak = Math.max(0, ...rackPeaks.map((p) => p.peak));
  const ratio = makespanMs / best.makespanMs;
  const loadAfterRollout = loadavg().map((x) => round(x, 2));
  log(
    `rollout ${completed ? 'done' : 'unfinished'}: makespan ${(makespanMs / 1000).toFixed(1)} s, ideal ${best.makespanMs / 1000} s, ` +
      `ratio ${ratio.toFixed(3)}, peak ${w.checker.peak}/${o.budget}, rack peak ${rackPeak}/${o.rackBudget}, ` +
      `${applies.doubleApplies} double applies, ${applies.missed} missed`,
  );
  if (o.records)
    writeFileSync(
      o.records,
      JSON.stringify([...w.records.values()].map((r) => ({ ...r, waitedFor: [...r.waitedFor] }))),
    );
  await sim.stop();
  sim = undefined;
  await watch.stop();
  watch = undefined;
  const rolloutHwm = memoryMiB(firmware.pid)?.hwm ?? NaN;

  // --- memory at scale -----------------------------------------------------------------------
  let scaleCached: number | undefined;
  let scaleChildren = 0;
  const more = o.scale - o.servers;
  if (more > 0) {
    t = Date.now();
    const bmcsMore = Math.max(1, Math.round((more * o.bmcs) / o.servers));
    let lastLog = Date.now();
    const big = await seedWorld(admin, {
      name: 'scale',
      servers: more,
      bmcs: bmcsMore,
      rackSize: o.rackSize,
      timing: {},
      tls,
      concurrency: 48,
      onProgress: (done, total) => {
        if (Date.now() - lastLog < 15_000) return;
        lastLog = Date.now();
        log(`seeding the scale fleet: ${done}/${total}`);
      },
    });
    worlds.push(big);
    await biosSets.create({
      metadata: { name: 'scale-bios' },
      spec: {
        paused: true,
        serverSelector: { matchLabels: big.selector },
        biosVersionTemplate: { version: '2.0.0', image: { URI: 'https://images.test/bios/2.0.0' } },
      },
    } as KubeObject);
    await bmcSets.create({
      metadata: { name: 'scale-bmc' },
      spec: {
        paused: true,
        bmcSelector: { matchLabels: big.selector },
        bmcVersionTemplate: { version: '6.0.0', image: { URI: 'https://images.test/bmc/6.0.0' } },
      },
    } as KubeObject);
    log(
      `${o.scale} servers exist (${more} added behind ${bmcsMore} BMCs in ${Date.now() - t} ms); paused Sets over them`,
    );
    const t1 = Date.now();
    await waitFor(
      'every held child stamped',
      async () => {
        const b = (await biosSets.get('scale-bios')).status?.availableBIOSVersion ?? 0;
        const m = (await bmcSets.get('scale-bmc')).status?.availableBMCVersion ?? 0;
        scaleChildren = b + m;
        return b === more && m === bmcsMore;
      },
      1_200_000,
      2000,
    ).catch((e: unknown) => log(`${(e as Error).message}: measuring with ${scaleChildren} children`));
    log(`${scaleChildren} held children stamped in ${Date.now() - t1} ms`);
    const text = await stack.metrics('firmware').catch(() => '');
    const m = /^metal_informer_objects\{[^}]*resource="servers"[^}]*\} (\d+)/m.exec(text);
    scaleCached = m ? Number(m[1]) : undefined;
    await sleep(10_000); // the reconciles of the last children settle
  }
  const mem = memoryMiB(firmware.pid);
  const rss = round(mem?.hwm ?? NaN);
  console.log('');
  console.log(
    `makespan           ${(makespanMs / 1000).toFixed(1)} s  (N=${o.servers}, M=${o.bmcs}, K=${o.budget}, R=${o.rackBudget}, T=${o.flashMs} ms)`,
  );
  console.log(
    `ideal              ${best.makespanMs / 1000} s  (${best.rounds} rounds; bound ${best.lowerBoundRounds}; ${best.work} server-flashes)`,
  );
  console.log(
    `ratio              ${ratio.toFixed(3)}${completed ? '' : ' or more (unfinished)'}  (target ≤ 1.15)`,
  );
  console.log(
    `peak in maint.     ${w.checker.peak}  (budget ${o.budget}); per rack ${rackPeak} (budget ${o.rackBudget})`,
  );
  console.log(
    `double applies     ${applies.doubleApplies}  (target 0; ${applies.missed} targets not flashed)`,
  );
  console.log(
    `firmware RSS       ${rss} MiB peak at ${o.scale > o.servers ? `${o.scale} servers cached (${scaleCached ?? '?'} seen)` : `${o.servers} servers`}; ${round(rolloutHwm)} MiB after the rollout  (target ≤ 200 MiB)`,
  );
  console.log("where a slot's time went:");
  for (const line of holds.lines) console.log(`  ${line}`);
  const pct = (x: number) => `${((x * 1000 * 100) / (o.budget * makespanMs)).toFixed(1)} %`;
  console.log(
    `  of K x makespan: working ${pct(slots.working_s)} (beyond the flash ${pct(slots.beyond_flash_s)}), ` +
      `gangs waiting for their last server ${pct(slots.gang_wait_s)}, gangs released unflashed ${pct(slots.gang_released_s)}, idle ${pct(slots.idle_s)}`,
  );
  console.log(
    `controller CPU in the rollout: ${Object.entries(cpu)
      .map(([k, v]) => `${k} ${v} s`)
      .join(', ')}`,
  );
  console.log(
    JSON.stringify({
      makespan_ratio: round(ratio, 3),
      rollout_completed: completed,
      makespan_s: round(makespanMs / 1000),
      ideal_s: best.makespanMs / 1000,
      ideal_rounds: best.rounds,
      ideal_exact: best.exact,
      peak_in_maintenance: w.checker.peak,
      budget: o.budget,
      rack_peak: rackPeak,
      rack_budget: o.rackBudget,
      double_applies: applies.doubleApplies,
      missed_applies: applies.missed,
      failed: { bios: bios.failedBIOSVersion ?? 0, bmc: bmc.failedBMCVersion ?? 0 },
      done: { bios: bios.completedBIOSVersion ?? 0, bmc: bmc.completedBMCVersion ?? 0 },
      stalled: stall ?? false,
      rss_mib: rss,
      rss_after_rollout_mib: round(rolloutHwm),
      rss_servers: o.scale > o.servers ? o.scale : o.servers,
      rss_servers_cached: scaleCached ?? null,
      rss_held_children: scaleChildren,
      servers: o.servers,
      bmcs: o.bmcs,
      flash_ms: o.flashMs,
      gang_timeout: o.gangTimeout,
      hold: holds.json,
      slots,
      cpu_s: cpu,
      loadavg_after_rollout: loadAfterRollout,
      loadavg_1m: round(loadavg()[0]!, 2),
      cpus: cpus().length,
    }),
  );
} finally {
  await sim?.stop();
  await watch?.stop();
  await stack?.stop();
  for (const w of worlds) await w.sim.close();
  await admin.close();
  cleanup();
}
