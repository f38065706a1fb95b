// The demo's choreography. Acts, each waiting on what the cluster shows (never on sleeps alone):
//   1 a fleet comes up (the simulated metal-operator discovers servers and binds tenants' claims)
//   2 an admin cordons a server; a claim pinned to it stays Unbound
//   3 maintenances announced to tenants: approved by hand, by standing approval, by policy (nobody
//     consumes the claim), by deadline (nobody answers), and one on the cordoned server
//   4 a budget-limited rollout over two racks
//   5 the cordon is lifted and the pinned claim binds
//   6 a BIOSVersionSet across racks, short-circuited by a flash the BMC simulator fails
//   7 a five-stage MaintenancePipeline over 30 chassis servers on 12 BMCs: a failed lane, then a
//     factory reset reported as DriftDetected and repaired
// Each act is a module in acts/; this class owns the plumbing they share (acts/context.ts), starts
// the system and plays them in order. Everything goes through the real API server, webhook and
// controllers; the terminal shows the fleet live, and a summary at the end.
import { KubeClient } from '../../lib/kube/client.js';
import { painter, type Painter } from '../../cli/output.js';
import { main as kubectlMetal } from '../../cli/main.js';
import { kubeconfigForBinary } from '../harness/processes.js';
import { FleetSimulator } from '../sim/fleet/simulator.js';
import type { FleetPlan } from '../sim/fleet/fleet.js';
import { FIRMWARE_CONTROLLERS, LIFECYCLE_CONTROLLERS, Stack, applyPolicy } from './stack.js';
import { OPS_NAMESPACE } from './objects.js';
import { startHardware, type Hardware } from './hardware.js';
import { FleetWatch } from './watch.js';
import { LiveArea, clock } from './screen.js';
import { ACTS, DEMO_POLICY, type DemoOptions, type DemoResult } from './config.js';
import { Aborted, type ActContext } from './acts/context.js';
import { fleetComesUp } from './acts/fleet-up.js';
import { cordon, uncordon } from './acts/cordon.js';
import { announce } from './acts/announce.js';
import { rollout } from './acts/rollout.js';
import { firmwareAct } from './acts/firmware.js';
import { pipelineAct } from './acts/pipeline.js';
import {
  liveFrame,
  logTails,
  newProgress,
  summaryLines,
  type DemoProgress,
  type ReportContext,
} from './report.js';
import { join } from 'node:path';
import type { PrometheusHandle } from '../harness/prometheus.js';
import { figureLines, prometheusDir, queryFigures, stackTargets, startDemoPrometheus } from './prometheus.js';

export class Demo {
  readonly #o: DemoOptions;
  readonly #ui = new LiveArea();
  readonly #p: Painter;
  readonly #s: DemoProgress = newProgress();
  #admin: KubeClient | undefined;
  #stack: Stack | undefined;
  #sim: FleetSimulator | undefined;
  #watch: FleetWatch | undefined;
  #plan: FleetPlan | undefined;
  #timer: NodeJS.Timeout | undefined;
  #prom: PrometheusHandle | undefined;
  #hw: Hardware | undefined;
  /** The summary's figures, queried from Prometheus once the acts are over. */
  #figures: string[] = [];

  constructor(o: DemoOptions) {
    this.#o = o;
    this.#p = painter(this.#ui.isTTY && !process.env.NO_COLOR);
  }

  // --- plumbing ------------------------------------------------------------------------------

  #log(line: string): void {
    this.#ui.log(`${this.#p.dim(clock(Date.now() - this.#s.started))} ${line}`);
  }

  #say(command: string): void {
    this.#log(this.#p.cyan(`$ ${command}`));
  }

  async #until<T>(what: string, probe: () => T | undefined | false, timeoutMs: number): Promise<T> {
    return this.#poll(what, () => Promise.resolve(probe()), timeoutMs, 200);
  }

  async #poll<T>(
    what: string,
    probe: () => Promise<T | undefined | false>,
    timeoutMs: number,
    intervalMs = 500,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.#o.signal.aborted) throw new Aborted('interrupted');
      const v = await probe();
      if (v !== undefined && v !== false) return v;
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }

  async #pause(ms: number): Promise<void> {
    await this.#until('a pause', () => false, ms).catch((e: unknown) => {
      if (e instanceof Aborted) throw e;
    });
  }

  #beginAct(n: number, title: string): void {
    this.#s.act = n;
    this.#s.title = title;
    this.#log(this.#p.bold(`── act ${n}/${ACTS}: ${title}`));
  }

  /** kubectl metal, in-process, as the given identity. */
  async #kubectlMetal(kubeconfig: string, args: string[]): Promise<void> {
    this.#say(`kubectl metal ${args.join(' ')}`);
    const out: string[] = [];
    const code = await kubectlMetal(['--kubeconfig', kubeconfig, '--no-color', ...args], {
      out: (t) => out.push(t),
      err: (t) => out.push(t),
    });
    for (const l of out.join('\n').split('\n').filter(Boolean)) this.#log(`  ${l}`);
    if (code !== 0) throw new Error(`kubectl metal ${args.join(' ')} exited ${code}`);
  }

  // --- acts ----------------------------------------------------------------------------------

  async run(): Promise<DemoResult> {
    this.#timer = setInterval(() => this.#ui.render(this.#frame()), this.#ui.isTTY ? 250 : 15_000);
    try {
      await this.#playActs();
    } catch (e) {
      if (!(e instanceof Aborted)) this.#s.problems.push((e as Error).message);
      else this.#s.problems.push('interrupted');
      this.#log(this.#p.red(`stopped: ${(e as Error).message}`));
      for (const l of logTails(this.#o.logDir, (e as Error).message)) this.#log(l);
    } finally {
      clearInterval(this.#timer);
      this.#ui.render(this.#frame(), true);
      this.#ui.done();
    }
    this.#figures = await this.#queryFigures();
    const lines = this.#summary();
    const kept = this.#o.keep && !this.#o.signal.aborted && !!this.#stack;
    if (kept) {
      for (const line of [...lines, '', ...this.#keepLines()]) console.log(line);
      await new Promise<void>((resolve) => this.#o.signal.addEventListener('abort', () => resolve()));
    }
    await this.#teardown();
    return {
      ok: this.#s.problems.length === 0,
      lines: kept ? ['stopped what the demo started.'] : lines,
      kept,
    };
  }

  /** The acts asked for, in order (acts/); 3 and 4 need every lifecycle controller. */
  async #playActs(): Promise<void> {
    await this.#setup();
    const c = this.#context();
    const plan = (this.#plan = await fleetComesUp(c));
    const acts = this.#o.acts;
    const cordoned = acts.has(2) ? await cordon(c, plan) : '';
    const missing = this.#stack!.missing;
    if (missing.length === 0) {
      if (acts.has(3)) await announce(c, plan, cordoned);
      if (acts.has(4)) await rollout(c);
    } else if (acts.has(3) || acts.has(4)) {
      this.#s.problems.push(
        `acts 3 and 4 skipped: missing ${missing.map((m) => `${m}-controller`).join(', ')}`,
      );
      this.#log(this.#p.yellow(`acts 3 and 4 need ${LIFECYCLE_CONTROLLERS.join(', ')} controllers; skipped`));
    }
    if (acts.has(5)) await uncordon(c, plan, cordoned, 5);
    await this.#firmwareActs(c, plan);
  }

  /** Acts 6 and 7: they need the lifecycle controllers and the firmware (and pipeline) controller. */
  async #firmwareActs(c: ActContext, plan: FleetPlan): Promise<void> {
    const acts = this.#o.acts;
    const stack = this.#stack!;
    for (const [act, needs] of [
      [6, ['firmware']],
      [7, ['firmware', 'pipeline']],
    ] as const) {
      if (!acts.has(act)) continue;
      const missing = [...stack.missing, ...needs.filter((n) => !stack.has(n) && !stack.missing.includes(n))];
      if (missing.length) {
        this.#s.problems.push(
          `act ${act} skipped: missing ${missing.map((m) => `${m}-controller`).join(', ')}`,
        );
        continue;
      }
      if (act === 6) await firmwareAct(c, plan);
      else await pipelineAct(c, this.#o.racks);
    }
  }

  /** What the acts see of the demo. */
  #context(): ActContext {
    return {
      o: this.#o,
      p: this.#p,
      s: this.#s,
      admin: this.#admin!,
      watch: this.#watch!,
      stack: this.#stack!,
      hardware: this.#hw,
      log: (l) => this.#log(l),
      say: (cmd) => this.#say(cmd),
      until: (what, probe, ms) => this.#until(what, probe, ms),
      pause: (ms) => this.#pause(ms),
      poll: (what, probe, ms) => this.#poll(what, probe, ms),
      beginAct: (n, t) => this.#beginAct(n, t),
      kubectlMetal: (k, a) => this.#kubectlMetal(k, a),
    };
  }

  /** What --keep prints: how to reach the running system. */
  #keepLines(): string[] {
    const ns = this.#plan?.namespaces[0] ?? 'tenant-a';
    return [
      this.#p.bold('The system keeps running; Ctrl-C stops it and removes everything.'),
      'In another terminal:',
      `  export KUBECONFIG=${this.#o.kubeconfig}`,
      `  export PATH=${join(import.meta.dirname, '..', '..', 'cli')}:$PATH   # kubectl-metal, the plugin`,
      '  kubectl get servers',
      `  kubectl get serverclaims -n ${ns}`,
      '  kubectl get serverdisruptionbudgets',
      '  kubectl get servermaintenances -A',
      '  kubectl metal status',
      ...(this.#o.acts.has(7) ? ['  kubectl metal pipeline status chassis-baseline'] : []),
      `Logs: ${this.#o.logDir}/<binary>.log; control plane: ${this.#o.controlPlaneDir}/kube-apiserver.log, etcd.log`,
    ];
  }

  async #setup(): Promise<void> {
    this.#s.title = 'starting the system';
    const admin = (this.#admin = await KubeClient.fromFile(this.#o.kubeconfig));
    await applyPolicy(admin, DEMO_POLICY);
    this.#log('policy: deadlines 30 s (Urgent), claims without a consumer auto-approved after 15 s');
    this.#log(
      `logs: one file per binary in ${this.#o.logDir}; the control plane's in ${this.#o.controlPlaneDir}`,
    );
    // Acts 6 and 7 flash simulated BMCs: the simulator first, its CA pinned by the firmware controller.
    const firmwareActs = this.#o.acts.has(6) || this.#o.acts.has(7);
    if (firmwareActs) this.#hw = await startHardware(this.#o.controlPlaneDir, this.#o.servers);
    this.#stack = await Stack.start({
      admin,
      logLevel: 'info',
      webhookReplicas: this.#o.webhookReplicas,
      controllers: firmwareActs ? [...LIFECYCLE_CONTROLLERS, ...FIRMWARE_CONTROLLERS] : LIFECYCLE_CONTROLLERS,
      ...(this.#hw
        ? {
            controllerArgs: {
              firmware: [`--bmc-ca-file=${this.#hw.caFile}`, '--redfish-timeout=2', '--poll-interval=0.3'],
            },
          }
        : {}),
      say: (m) => this.#log(m),
      // The demo's kubeconfig lives in its control plane's directory (scripts/control-plane.sh).
      controlPlaneDir: this.#o.controlPlaneDir,
    });
    this.#prom = await startDemoPrometheus(prometheusDir(this.#o.controlPlaneDir), this.#stack);
    this.#log(
      `prometheus: scraping ${stackTargets(this.#stack).length} binaries at ${this.#prom.url}, the shipped alert rules loaded`,
    );
    const { kubeconfig } = await kubeconfigForBinary(
      admin,
      'fleet-simulator',
      join(import.meta.dirname, '..', 'sim', 'fleet', 'rbac.yaml'),
    );
    this.#sim = new FleetSimulator({
      client: await KubeClient.fromFile(kubeconfig),
      timings: { discoveryMs: 1500, powerMs: 400 },
      // Only the ops maintenances: the firmware and pipeline controllers end their own.
      actor: { holdMs: 5000, namespace: OPS_NAMESPACE },
    });
    this.#watch = new FleetWatch(admin, { full: true, trace: true });
    await Promise.all([this.#sim.start(), this.#watch.start()]);
    this.#log(
      'fleet simulator: playing metal-operator (discovery, binding, power, park) as ServiceAccount fleet-simulator',
    );
  }

  // --- what it shows (report.ts) -----------------------------------------------------------

  #report(): ReportContext {
    return {
      painter: this.#p,
      isTTY: this.#ui.isTTY,
      watch: this.#watch,
      plan: this.#plan,
      racks: this.#o.racks,
      complete: this.#stack?.missing.length === 0,
      denials: this.#sim?.stats.denials ?? {},
    };
  }

  #frame(): string[] {
    return liveFrame(this.#s, this.#report());
  }

  #summary(): string[] {
    return summaryLines(this.#s, { ...this.#report(), prometheus: this.#figures });
  }

  /** The figures from Prometheus; a failed query is a problem of the run, named. */
  async #queryFigures(): Promise<string[]> {
    if (!this.#prom) return [];
    try {
      return figureLines(await queryFigures(this.#prom));
    } catch (e) {
      this.#s.problems.push(`prometheus: ${(e as Error).message}`);
      return [];
    }
  }

  async #teardown(): Promise<void> {
    await this.#sim?.stop().catch(() => undefined);
    await this.#watch?.stop().catch(() => undefined);
    await this.#prom?.stop();
    await this.#stack?.stop();
    await this.#hw?.sim.close().catch(() => undefined);
    await this.#admin?.close();
  }
}
