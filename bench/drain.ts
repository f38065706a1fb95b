// Benchmark: draining Nodes under PodDisruptionBudgets through the drain controller, against
// `kubectl drain` (the tool operators use today) on the same shape, in the same run.
//
//   npm run bench:drain [-- --nodes 50 --pods 30 --max-unavailable 1 --pairs 1 --blocked 2]
//
// 1. A real workload cluster (kube-apiserver, etcd, kube-controller-manager, kube-scheduler, kwok)
//    and the lifecycle binaries with the drain controller, wired as docs/drain.md says; claim i is
//    consumed by Node node-i.
// 2. Rounds alternate ours / kubectl (ABBA over --pairs, so neither always goes first). Each round
//    puts a fresh Deployment of P pods on every Node (a nodeSelector only that Node and the spare
//    Nodes satisfy) under a PDB with maxUnavailable M, then drains all N Nodes at once:
//      ours     a ServerMaintenance per server, created at once; a Node's time is from its create
//               until its status.drain.phase is Drained (polled every 100 ms);
//      kubectl  `kubectl drain node-i --ignore-daemonsets` per Node, started at once; a Node's time
//               is the process's wall time. Then `kubectl uncordon`.
//    In our rounds --blocked more Nodes carry a pod under a PDB that never allows a disruption; the
//    time from their maintenance's create until status.drain.blockers names the pod is recorded.
// 3. A sampler lists the pods every 200 ms: a Deployment with fewer than P − M pods running and not
//    terminating is a PDB violation.
// The last line is one JSON object: drain_ratio (median over Nodes of ours / kubectl, paired by Node
// and pair), blocked_reported_s (max), evictions_denied_then_retried (the drain controller's refused
// evictions), pdb_violations; with medians, spread, CPU seconds and the load average.
import { execFile, spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Command } from 'commander';
import { setTimeout as sleep } from 'node:timers/promises';
import { claimProviderID } from '../contract/names.js';
import { waitFor } from './wait.js';
import { Core } from '../lib/kube/resources.js';
import { k8sToolPath } from '../e2e/harness/k8s-tools.js';
import { REPO_ROOT, scratchControlPlaneDir } from '../e2e/harness/control-plane.js';
import { startWorkloadCluster, type Node, type WorkloadCluster } from '../e2e/harness/workload-cluster.js';
import { deploymentObject, podsOf } from '../e2e/harness/testing/workloads.js';
import {
  metricsOf,
  startLifecycle,
  type Fleet,
  type Lifecycle,
} from '../test/integration/lifecycle/harness.js';
import { connectDrain, drainPolicy, SHOP } from '../test/integration/drain/world.js';

const run = promisify(execFile);
const int = (v: string) => Number.parseInt(v, 10);
const o = new Command()
  .option('--nodes <n>', 'Nodes drained per round (N)', int, 50)
  .option('--pods <n>', 'pods per Node, one Deployment (P)', int, 30)
  .option('--max-unavailable <n>', "each Deployment's PDB maxUnavailable (M)", int, 1)
  .option('--pairs <n>', 'round pairs (ours + kubectl each)', int, 1)
  .option('--blocked <n>', 'Nodes per round of ours with a pod no budget ever lets go', int, 2)
  .parse()
  .opts<{ nodes: number; pods: number; maxUnavailable: number; pairs: number; blocked: number }>();

const started = Date.now();
const log = (msg: string) =>
  console.log(`[bench ${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${msg}`);
const nodeName = (i: number) => `node-${i}`;
const ROUND_TIMEOUT_MS = 30 * 60_000;

/** bench/wait.ts's wait with the round's timeout by default. */
const until = (what: string, probe: () => Promise<boolean>, timeoutMs = ROUND_TIMEOUT_MS, everyMs = 250) =>
  waitFor(what, probe, timeoutMs, everyMs);

/** user + system seconds of a process so far (/proc/<pid>/stat, clock ticks of 100 Hz). */
async function cpuSeconds(pid: number | undefined): Promise<number> {
  if (!pid) return 0;
  const { stdout } = await run('cat', [`/proc/${pid}/stat`]);
  const f = stdout.slice(stdout.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : NaN;
};
const round3 = (x: number) => Math.round(x * 1000) / 1000;
const spread = (xs: number[]) => ({
  median: round3(quantile(xs, 0.5)),
  p10: round3(quantile(xs, 0.1)),
  p90: round3(quantile(xs, 0.9)),
  n: xs.length,
});

interface Sampler {
  stop(): Promise<number>;
}

/** Counts samples in which a Deployment of `apps` had fewer than P − M pods running, not terminating. */
function sampleBudgets(wc: WorkloadCluster, apps: string[]): Sampler {
  let violations = 0;
  let on = true;
  const floor = o.pods - o.maxUnavailable;
  const loop = (async () => {
    while (on) {
      const pods = await podsOf(wc.admin, SHOP, '').catch(() => undefined);
      if (pods) {
        const up = new Map<string, number>();
        for (const p of pods)
          if (p.status?.phase === 'Running' && !p.metadata.deletionTimestamp) {
            const app = p.metadata.labels?.app ?? '';
            up.set(app, (up.get(app) ?? 0) + 1);
          }
        for (const a of apps) if ((up.get(a) ?? 0) < floor) violations++;
      }
      await sleep(200);
    }
  })();
  return {
    stop: async () => {
      on = false;
      await loop;
      return violations;
    },
  };
}

/** A round's workloads: Deployment `r<k>-<i>` of P pods on node-i (and the spares) under its PDB. */
async function placeWorkloads(wc: WorkloadCluster, k: number, spares: string[], blocked: number) {
  const apps: string[] = [];
  const nodes = wc.admin.resource(Core.Node);
  const label = (app: string) => `bench.metal/${app}`;
  const all = Array.from({ length: o.nodes }, (_, i) => `r${k}-${i}`);
  const stuck = Array.from({ length: blocked }, (_, j) => `r${k}-stuck-${j}`);
  const place = async (app: string, node: string, replicas: number, maxUnavailable: number) => {
    await nodes.patch(node, { metadata: { labels: { [label(app)]: 'y' } } });
    await wc.admin
      .resource(Core.Deployment)
      .create(deploymentObject(SHOP, app, replicas, { nodeSelector: { [label(app)]: 'y' } }));
    await wc.admin.resource(Core.PodDisruptionBudget).create({
      metadata: { name: app, namespace: SHOP },
      spec: { maxUnavailable, selector: { matchLabels: { app } } },
    } as never);
  };
  for (let i = 0; i < o.nodes; i++) {
    await place(all[i]!, nodeName(i), o.pods, o.maxUnavailable);
    apps.push(all[i]!);
  }
  // The stuck pods' label is on their Node only: they have nowhere else to go, and may not leave.
  for (let j = 0; j < blocked; j++) await place(stuck[j]!, nodeName(o.nodes + j), 1, 0);
  const home = new Map<string, string>([
    ...all.map((a, i): [string, string] => [a, nodeName(i)]),
    ...stuck.map((a, j): [string, string] => [a, nodeName(o.nodes + j)]),
  ]);
  await until(`round ${k}: every pod running on its Node`, async () => {
    const pods = await podsOf(wc.admin, SHOP, '');
    const ok = pods.filter(
      (p) => p.status?.phase === 'Running' && p.spec?.nodeName === home.get(p.metadata.labels?.app ?? ''),
    );
    return ok.length === o.nodes * o.pods + blocked && pods.length === ok.length;
  });
  // Only now may the spares take them: where evicted pods land.
  for (const sp of spares)
    await nodes.patch(sp, { metadata: { labels: Object.fromEntries(all.map((a) => [label(a), 'y'])) } });
  return { apps, stuck };
}

async function removeWorkloads(wc: WorkloadCluster, apps: string[]) {
  for (const a of apps) {
    await wc.admin.resource(Core.Deployment).delete(a, { namespace: SHOP });
    await wc.admin.resource(Core.PodDisruptionBudget).delete(a, { namespace: SHOP });
  }
  await until('the round’s pods gone', async () => (await podsOf(wc.admin, SHOP, '')).length === 0);
}

async function drainCount(lc: Lifecycle, result: string): Promise<number> {
  const text = await metricsOf(lc, 'drain-controller');
  const m = new RegExp(`^metal_drain_evictions_total\\{[^}]*result="${result}"[^}]*\\} (\\d+)`, 'm').exec(
    text,
  );
  return m ? Number(m[1]) : 0;
}

async function oursRound(lc: Lifecycle, f: Fleet, k: number, stuck: number) {
  const names = f.servers.slice(0, o.nodes + stuck).map((_, i) => `r${k}-m${i}`);
  const t0 = new Map<string, number>();
  const done = new Map<number, number>();
  const named = new Map<number, number>();
  for (let i = 0; i < names.length; i++) {
    t0.set(names[i]!, Date.now());
    await lc.maintenance(names[i]!, f.servers[i]!);
  }
  await until(
    `round ${k}: every Node drained, every blocker named`,
    async () => {
      const list = (await lc.maintenances.listAll({ namespace: lc.ns })).items;
      const now = Date.now();
      for (const m of list) {
        const i = names.indexOf(m.metadata.name ?? '');
        if (i < 0) continue;
        if (i < o.nodes && !done.has(i) && m.status?.drain?.phase === 'Drained')
          done.set(i, now - t0.get(names[i]!)!);
        if (
          i >= o.nodes &&
          !named.has(i) &&
          (m.status?.drain?.blockers ?? []).some((b) => b.pod.includes('stuck'))
        )
          named.set(i, now - t0.get(names[i]!)!);
      }
      return done.size === o.nodes && named.size === stuck;
    },
    ROUND_TIMEOUT_MS,
    100,
  );
  // The drained ones start, the simulated actor ends them; the stuck ones are withdrawn.
  for (let i = o.nodes; i < names.length; i++) await lc.maintenances.delete(names[i]!, { namespace: lc.ns });
  await until(`round ${k}: maintenances gone`, async () => {
    const left = (await lc.maintenances.listAll({ namespace: lc.ns })).items.filter((m) =>
      names.includes(m.metadata.name ?? ''),
    );
    return left.length === 0;
  });
  return {
    perNode: Array.from({ length: o.nodes }, (_, i) => done.get(i)! / 1000),
    blocked: [...named.values()].map((ms) => ms / 1000),
  };
}

async function kubectlRound(wc: WorkloadCluster) {
  const bin = k8sToolPath('kubectl');
  let cpu = 0;
  const one = (node: string) =>
    new Promise<number>((resolve, reject) => {
      const t = Date.now();
      // bash's `times` prints the children's user and system time: kubectl's CPU.
      const p = spawn(
        'bash',
        [
          '-c',
          `"$0" --kubeconfig "$1" drain "$2" --ignore-daemonsets --timeout=30m >/dev/null 2>&1; rc=$?; times; exit $rc`,
          bin,
          wc.kubeconfig,
          node,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      p.stdout.on('data', (d: Buffer) => (out += d.toString()));
      p.on('exit', (code) => {
        const wall = (Date.now() - t) / 1000;
        const child = out.trim().split('\n')[1] ?? '';
        for (const m of child.matchAll(/(\d+)m([\d.]+)s/g)) cpu += Number(m[1]) * 60 + Number(m[2]);
        if (code === 0) resolve(wall);
        else reject(new Error(`kubectl drain ${node} exited ${code}`));
      });
    });
  const perNode = await Promise.all(Array.from({ length: o.nodes }, (_, i) => one(nodeName(i))));
  for (let i = 0; i < o.nodes; i++) await run(bin, ['--kubeconfig', wc.kubeconfig, 'uncordon', nodeName(i)]);
  return { perNode, cpu };
}

async function main() {
  // Ctrl-C or a kill: exit through the 'exit' hooks that stop every process the harnesses started.
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));
  const load0 = loadavg();
  log(
    `shape: ${o.nodes} Nodes × ${o.pods} pods, PDB maxUnavailable ${o.maxUnavailable}, ${o.pairs} pair(s), ${o.blocked} blocked; load ${load0.map((x) => x.toFixed(2)).join(' ')} on ${cpus().length} CPUs`,
  );
  // The metal control plane as the integration suites' global setup starts it (e2e/harness/up.ts).
  const { dir, teardown } = scratchControlPlaneDir('bench-drain-cp-');
  process.once('exit', teardown);
  await run(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'e2e', 'harness', 'up.ts'), dir], {
    cwd: REPO_ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  process.env.METAL_TEST_CP_DIR = dir;
  const wc = await startWorkloadCluster('bench-drain-');
  let lc: Lifecycle | undefined;
  try {
    lc = await startLifecycle({ actorHoldMs: 500, extra: ['drain-controller'] });
    const f = await lc.fleet('bench', { servers: o.nodes + o.blocked, claims: 'consumer' });
    await connectDrain(wc, lc, f.tenant);
    await lc.setPolicy({ drain: { ...drainPolicy(f.tenant), timeout: '30m' } } as never);
    await wc.admin.resource(Core.Namespace).create({ metadata: { name: SHOP } });
    const spareCount = Math.ceil((o.nodes * o.pods) / 100) + 1;
    const spares = Array.from({ length: spareCount }, (_, j) => `spare-${j}`);
    await wc.addNodes([
      ...f.claims.map((c, i) => ({ name: nodeName(i), providerID: claimProviderID(c.namespace, c.name) })),
      ...spares.map((name) => ({ name })),
    ]);
    log(`ready: ${f.claims.length} claimed Nodes, ${spareCount} spares`);
    const pid = lc.controllers['drain-controller'].proc.pid;
    const ours: number[][] = [];
    const theirs: number[][] = [];
    const blocked: number[] = [];
    let oursCpu = 0;
    let kubectlCpu = 0;
    let violations = 0;
    const refused0 = await drainCount(lc, 'refused');
    const order = Array.from({ length: o.pairs }, (_, p) =>
      p % 2 === 0 ? ['ours', 'kubectl'] : ['kubectl', 'ours'],
    ).flat();
    for (const [k, method] of order.entries()) {
      const { apps, stuck } = await placeWorkloads(wc, k, spares, method === 'ours' ? o.blocked : 0);
      const sampler = sampleBudgets(wc, apps);
      const t = Date.now();
      if (method === 'ours') {
        const c0 = await cpuSeconds(pid);
        const r = await oursRound(lc, f, k, stuck.length);
        oursCpu += (await cpuSeconds(pid)) - c0;
        ours.push(r.perNode);
        blocked.push(...r.blocked);
        await until(`round ${k}: Nodes uncordoned`, async () =>
          (await wc.admin.resource<Node>(Core.Node).listAll()).items.every((n) => !n.spec?.unschedulable),
        );
      } else {
        const r = await kubectlRound(wc);
        kubectlCpu += r.cpu;
        theirs.push(r.perNode);
      }
      const v = await sampler.stop();
      violations += v;
      const last = method === 'ours' ? ours.at(-1)! : theirs.at(-1)!;
      log(
        `round ${k} ${method}: ${((Date.now() - t) / 1000).toFixed(1)} s, per Node ${JSON.stringify(spread(last))}, violations ${v}`,
      );
      await removeWorkloads(wc, [...apps, ...stuck]);
    }
    const ratios = ours.flatMap((r, p) => r.map((x, i) => x / theirs[p]![i]!));
    const load1 = loadavg();
    const summary = {
      nodes: o.nodes,
      pods: o.pods,
      max_unavailable: o.maxUnavailable,
      pairs: o.pairs,
      drain_ratio: round3(quantile(ratios, 0.5)),
      drain_ratio_spread: spread(ratios),
      ours_s: spread(ours.flat()),
      kubectl_s: spread(theirs.flat()),
      blocked_reported_s: round3(Math.max(0, ...blocked)),
      evictions_denied_then_retried: (await drainCount(lc, 'refused')) - refused0,
      pdb_violations: violations,
      cpu_s: { drain_controller: round3(oursCpu), kubectl: round3(kubectlCpu) },
      loadavg: { start: load0.map(round3), end: load1.map(round3) },
      cpus: cpus().length,
    };
    console.log(JSON.stringify(summary));
  } finally {
    await lc?.stop();
    await wc.stop();
    teardown();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
