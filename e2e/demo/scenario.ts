// The demo's choreography. Acts, each waiting on what the cluster shows (never on sleeps alone):
//   1 a fleet comes up (the simulated metal-operator discovers servers and binds tenants' claims)
//   2 an admin cordons a server; a claim pinned to it stays Unbound
//   3 maintenances announced to tenants: approved by hand, by standing approval, by policy (nobody
//     consumes the claim), by deadline (nobody answers), and one on the cordoned server
//   4 a budget-limited rollout over two racks
//   5 the cordon is lifted and the pinned claim binds
// Everything goes through the real API server, webhook and controllers; the terminal shows the fleet
// live, and a summary at the end.
import { KubeClient } from '../../lib/kube/client.js';
import { painter, type Painter } from '../../cli/output.js';
import { main as kubectlMetal } from '../../cli/main.js';
import { ensureNamespace, kubeconfigForBinary } from '../harness/processes.js';
import { FleetSimulator } from '../sim/fleet/simulator.js';
import { RACK_LABEL } from '../sim/fleet/decisions.js';
import { TENANT_LABEL, planFleet, seedFleet, type FleetPlan } from '../sim/fleet/fleet.js';
import { LIFECYCLE_CONTROLLERS, Stack, applyPolicy } from './stack.js';
import { OPS_NAMESPACE, createClaim, createMaintenance, tenantOwner } from './objects.js';
import { FleetWatch } from './watch.js';
import { STANDING_TENANT, announcePlan } from './announce-plan.js';
import { LiveArea, clock } from './screen.js';
import { CLAIMED_SHARE, DEMO_POLICY, type DemoOptions, type DemoResult } from './config.js';
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

class Aborted extends Error {}

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
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.#o.signal.aborted) throw new Aborted('interrupted');
      const v = probe();
      if (v !== undefined && v !== false) return v;
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 200));
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
    this.#log(this.#p.bold(`── act ${n}/5: ${title}`));
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

  /** The acts asked for, in order; 3 and 4 need every lifecycle controller. */
  async #playActs(): Promise<void> {
    await this.#setup();
    await this.#fleetComesUp();
    const acts = this.#o.acts;
    const cordoned = acts.has(2) ? await this.#cordon() : '';
    const missing = this.#stack!.missing;
    if (missing.length === 0) {
      if (acts.has(3)) await this.#announce(cordoned);
      if (acts.has(4)) await this.#rolloutAct();
    } else if (acts.has(3) || acts.has(4)) {
      this.#s.problems.push(
        `acts 3 and 4 skipped: missing ${missing.map((m) => `${m}-controller`).join(', ')}`,
      );
      this.#log(this.#p.yellow(`acts 3 and 4 need ${LIFECYCLE_CONTROLLERS.join(', ')} controllers; skipped`));
    }
    if (acts.has(5)) await this.#uncordon(cordoned);
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
    this.#stack = await Stack.start({
      admin,
      logLevel: 'info',
      webhookReplicas: this.#o.webhookReplicas,
      controllers: LIFECYCLE_CONTROLLERS,
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
      actor: { holdMs: 5000 },
    });
    this.#watch = new FleetWatch(admin, { full: true, trace: true });
    await Promise.all([this.#sim.start(), this.#watch.start()]);
    this.#log(
      'fleet simulator: playing metal-operator (discovery, binding, power, park) as ServiceAccount fleet-simulator',
    );
  }

  async #fleetComesUp(): Promise<void> {
    this.#beginAct(1, 'a fleet comes up');
    const o = this.#o;
    const plan = (this.#plan = planFleet({
      servers: o.servers,
      racks: o.racks,
      tenants: o.tenants,
      claimsPerTenant: Math.floor((o.servers * CLAIMED_SHARE) / o.tenants),
      claimMode: 'serverRef',
      approvalMode: (t) => (t === STANDING_TENANT ? 'Automatic' : 'Manual'),
      fleetBudget: 4,
      rackBudget: 2,
      tenantBudget: 2,
    }));
    await seedFleet(this.#admin!, plan);
    for (const ns of plan.namespaces) await tenantOwner(this.#admin!, ns);
    // A claim nobody consumes (no owner reference, no tenant label): the policy approves for it.
    const orphanServer = plan.servers.find(
      (s) =>
        !plan.claims.some((c) => c.spec.serverRef?.name === s.metadata.name) &&
        s.metadata.labels?.[RACK_LABEL] === plan.servers[0]!.metadata.labels?.[RACK_LABEL],
    );
    await createClaim(this.#admin!, {
      metadata: { name: 'orphan-1', namespace: plan.namespaces[3 % plan.namespaces.length] },
      spec: {
        power: 'On',
        image: 'ghcr.io/ironcore-dev/os-images/gardenlinux:1877.0',
        serverRef: { name: orphanServer?.metadata.name ?? plan.servers[1]!.metadata.name! },
      },
    });
    this.#log(
      `created ${plan.servers.length} servers in ${o.racks} racks; ${plan.claims.length + 1} claims in ${plan.namespaces.length} tenant namespaces (tenant-b approves standing: Automatic)`,
    );
    this.#log('budgets: fleet 4, per rack 2, per tenant 2');
    const w = this.#watch!;
    await this.#until(
      'every server discovered',
      () =>
        w.servers.size >= plan.servers.length &&
        w.servers.list().every((s) => s.status?.state === 'Available' || s.status?.state === 'Reserved'),
      90_000,
    );
    const total = plan.claims.length + 1;
    await this.#until(
      'every claim bound',
      () => w.claims!.list().filter((c) => c.status?.phase === 'Bound').length >= total,
      60_000,
    );
    this.#log(
      `all ${plan.servers.length} servers discovered; ${total} claims bound by the simulated metal-operator, each binding admitted by the placement guard`,
    );
  }

  async #cordon(): Promise<string> {
    this.#beginAct(2, 'an admin cordons a server');
    const w = this.#watch!;
    const racks = [...new Set(w.servers.list().map((s) => s.metadata.labels?.[RACK_LABEL] ?? ''))].sort();
    const rack = racks[Math.min(2, racks.length - 1)];
    const free = w.servers
      .list()
      .filter(
        (s) =>
          s.metadata.labels?.[RACK_LABEL] === rack &&
          !s.spec.serverClaimRef &&
          s.status?.state === 'Available',
      )
      .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))[0];
    if (!free) throw new Error(`no free server in ${rack} to cordon`);
    const name = free.metadata.name!;
    await this.#kubectlMetal(this.#o.kubeconfig, ['cordon', name]);
    await this.#until(
      `${name} cordoned in the cache`,
      () => w.servers.getByName(name)?.spec.unclaimable === true,
      10_000,
    );
    const ns = this.#plan!.namespaces[this.#plan!.namespaces.length - 1]!;
    const owner = await tenantOwner(this.#admin!, ns);
    this.#say(`(as ${ns}'s owner) create ServerClaim pinned with spec.serverRef ${name}`);
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
    await this.#pause(3000);
    const pinned = w.claims!.getByName('pinned', ns);
    if (pinned?.status?.phase === 'Bound')
      this.#s.problems.push('the claim pinned to a cordoned server was bound');
    this.#log(
      `${ns}/pinned stays ${pinned?.status?.phase ?? 'Unbound'}: ${name} is cordoned (new bindings refused; bound claims elsewhere untouched)`,
    );
    return name;
  }

  async #announce(cordoned: string): Promise<void> {
    this.#beginAct(3, 'maintenances announced to tenants');
    await ensureNamespace(this.#admin!, OPS_NAMESPACE);
    const owner = this.#plan!.claims[0]!;
    const orphan = this.#watch!.claims!.getByName(
      'orphan-1',
      this.#plan!.namespaces[3 % this.#plan!.namespaces.length],
    )!;
    const plan = announcePlan(this.#plan!, orphan, cordoned);
    for (const { row, server, spec } of plan) {
      row.key = await createMaintenance(this.#admin!, row.label, server, spec, '5s');
      this.#s.rows.push(row);
    }
    this.#log(
      `created ${plan.length} maintenances (Urgent: deadline 30 s) in namespace ${OPS_NAMESPACE}; the approval controller announces them on the claims`,
    );
    const w = this.#watch!;
    const first = this.#s.rows[0]!;
    await this.#until(
      `${first.label} announced`,
      () =>
        w.maintenances.get(first.key)?.status?.state === 'Announced' ||
        w.records.get(first.key)?.approvalSource,
      60_000,
    );
    await this.#pause(4000);
    const ns = owner.metadata.namespace!;
    await this.#kubectlMetal(await tenantOwner(this.#admin!, ns), [
      '-n',
      ns,
      'approve',
      owner.metadata.name!,
      first.label,
    ]);
    await this.#until(
      'every announced maintenance done',
      () => this.#s.rows.every((r) => w.records.get(r.key)?.deletedAt),
      180_000,
    );
    for (const r of this.#s.rows) {
      const got = w.records.get(r.key)?.approvalSource;
      if (got !== r.expect)
        this.#s.problems.push(`${r.label}: approved by ${got ?? 'nothing'}, expected ${r.expect}`);
    }
    const s = w.servers.getByName(cordoned);
    if (s?.spec.unclaimable !== true)
      this.#s.problems.push(`the admin cordon on ${cordoned} did not survive its maintenance`);
    else
      this.#log(
        `${cordoned}: the admin cordon survived its maintenance; the maintenance removed only its own taint`,
      );
  }

  async #rolloutAct(): Promise<void> {
    this.#beginAct(4, 'a budget-limited rollout');
    const w = this.#watch!;
    const racks = [...new Set(w.servers.list().map((s) => s.metadata.labels?.[RACK_LABEL] ?? ''))]
      .sort()
      .slice(0, 2);
    const targets = w.servers
      .list()
      .filter((s) => racks.includes(s.metadata.labels?.[RACK_LABEL] ?? '') && !s.spec.unclaimable)
      .map((s) => s.metadata.name!)
      .sort();
    this.#s.rolloutStart = Date.now();
    for (const server of targets)
      this.#s.rollout.push(
        await createMaintenance(
          this.#admin!,
          `bios-${server}`,
          server,
          {
            reason: 'SecurityPatch',
            class: 'Emergency',
            approval: { required: false },
            description: 'BIOS 2.19.1',
          },
          '4s',
        ),
      );
    this.#log(
      `BIOS security patch for ${racks.join(' and ')}: ${targets.length} maintenances at once, no approval needed; the budgets pace them`,
    );
    let shown = false;
    await this.#until(
      'the rollout to finish',
      () => {
        if (!shown) {
          const waiting = this.#s.rollout.find((k) => w.records.get(k)?.waitedFor.has('BudgetExhausted'));
          if (waiting) {
            shown = true;
            const m = w.maintenances.get(waiting);
            const msg = m?.status?.conditions?.find((c) => c.type === 'Admitted')?.message ?? '';
            this.#log(`${waiting.split('/')[1]} waits: BudgetExhausted${msg ? ` (${msg})` : ''}`);
          }
        }
        return this.#s.rollout.every((k) => w.records.get(k)?.deletedAt);
      },
      300_000,
    );
    this.#s.rolloutEnd = Date.now();
    this.#log(
      `rollout done: ${targets.length} servers in ${((this.#s.rolloutEnd - this.#s.rolloutStart) / 1000).toFixed(0)} s, at most ${w.checker.peak} at once`,
    );
  }

  async #uncordon(cordoned: string): Promise<void> {
    this.#beginAct(5, 'the cordon is lifted');
    await this.#kubectlMetal(this.#o.kubeconfig, ['uncordon', cordoned]);
    const ns = this.#plan!.namespaces[this.#plan!.namespaces.length - 1]!;
    const w = this.#watch!;
    await this.#until(
      'the pinned claim to bind',
      () => w.claims!.getByName('pinned', ns)?.status?.phase === 'Bound',
      30_000,
    );
    this.#log(`${ns}/pinned is Bound to ${cordoned}`);
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
    await this.#admin?.close();
  }
}
