// Soak: budget safety under contention, many times over (npm run soak:budget [-- --runs 20]).
//
// Starts its own control plane (scripts/control-plane.sh, CRDs installed), two webhook replicas behind
// the harness balancer, and runs e2e/harness/budget-contention.ts `--runs` times: 200 maintenances over
// 64 servers pushed into InMaintenance by 20 clients as the maintenance controller, a flat budget of 3
// and a per-rack budget of 3, one replica SIGKILLed and restarted in every run (alternating). The
// invariant checker reads the watch streams. Prints one line of figures per run and, last, one JSON
// object; exits 1 on any violation or failed run. Everything it starts is stopped, also on Ctrl-C.
import { Command } from 'commander';
import { controlPlaneUp, installCRDs, scratchControlPlaneDir } from '../e2e/harness/control-plane.js';
import { serviceAccountKubeconfig } from '../e2e/harness/env.js';
import { SYSTEM_NAMESPACE } from '../e2e/harness/processes.js';
import { startWebhook, type WebhookHandle } from '../e2e/harness/webhook.js';
import {
  MAINTENANCE_CONTROLLER_RULES,
  describeRun,
  runBudgetContention,
  type ContentionResult,
} from '../e2e/harness/budget-contention.js';
import { errorMessage } from '../lib/errors.js';
import { KubeClient } from '../lib/kube/client.js';

const opts = new Command('soak-budget')
  .option('--runs <n>', 'contention runs', (v) => Number.parseInt(v, 10), 20)
  .option('--replicas <n>', 'webhook replicas', (v) => Number.parseInt(v, 10), 2)
  .parse()
  .opts<{ runs: number; replicas: number }>();

const { dir, teardown } = scratchControlPlaneDir('metal-soak-');

const log = (line: string) => process.stdout.write(`${line}\n`);
const results: ContentionResult[] = [];
const failures: string[] = [];
let admin: KubeClient | undefined;
let webhook: WebhookHandle | undefined;
const started = Date.now();
try {
  const cp = await controlPlaneUp(dir);
  // The harness helpers find the control plane through this, as under Jest.
  process.env.METAL_TEST_CP_DIR = dir;
  admin = await KubeClient.fromFile(cp.kubeconfig);
  await installCRDs(admin);
  webhook = await startWebhook(admin, { replicas: opts.replicas, controlPlaneDir: dir });
  const { kubeconfig } = await serviceAccountKubeconfig(
    admin,
    SYSTEM_NAMESPACE,
    'maintenance-controller',
    MAINTENANCE_CONTROLLER_RULES,
  );
  log(`soak: ${opts.runs} runs, ${opts.replicas} webhook replicas (setup ${Date.now() - started} ms)`);
  for (let i = 0; i < opts.runs; i++) {
    try {
      const r = await runBudgetContention({
        admin,
        controllerKubeconfig: kubeconfig,
        webhook,
        killReplica: opts.replicas > 1 ? i % opts.replicas : undefined,
      });
      results.push(r);
      log(`${String(i + 1).padStart(2)}/${opts.runs} ${describeRun(r)}`);
      if (r.violations.length > 0) failures.push(`run ${r.run}: ${r.violations.join('; ')}`);
    } catch (e) {
      failures.push(`run ${i + 1}: ${errorMessage(e)}`);
      log(`${String(i + 1).padStart(2)}/${opts.runs} FAILED: ${errorMessage(e)}`);
    }
  }
} catch (e) {
  failures.push(`setup: ${errorMessage(e)}`);
  log(`soak setup failed: ${errorMessage(e)}`);
} finally {
  await webhook?.stop();
  await admin?.close();
  teardown();
}

const peaks: Record<string, { granted: number; inMaintenance: number }> = {};
for (const r of results)
  for (const [domain, p] of Object.entries(r.peaks)) {
    const acc = (peaks[domain] ??= { granted: 0, inMaintenance: 0 });
    acc.granted = Math.max(acc.granted, p.granted);
    acc.inMaintenance = Math.max(acc.inMaintenance, p.inMaintenance);
  }
const sum = (f: (r: ContentionResult) => number) => results.reduce((a, r) => a + f(r), 0);
const durations = results.map((r) => r.durationMs);
const summary = {
  runs: results.length,
  runs_requested: opts.runs,
  violations: failures.length,
  limit: results[0]?.limit,
  maintenances_per_run: results[0]?.maintenances,
  servers_per_run: results[0]?.servers,
  clients: results[0]?.clients,
  granted: sum((r) => r.granted),
  denied: sum((r) => Object.values(r.denied).reduce((a, b) => a + b, 0)),
  unreachable: sum((r) => r.unreachable),
  replicas_killed: results.filter((r) => r.killedAfterMs !== undefined).length,
  max_peak_per_domain: peaks,
  run_ms: { min: Math.min(...durations), max: Math.max(...durations) },
  total_s: Math.round((Date.now() - started) / 1000),
};
for (const f of failures) log(`FAILURE: ${f}`);
log(JSON.stringify(summary));
process.exit(failures.length === 0 && results.length === opts.runs ? 0 : 1);
