// The runtime of one binary: a Kubernetes client, shared informers, controllers, leader election,
// Events, metrics and probes, started and stopped in the right order.
//
// Start: ops server → informers (also on standbys, so a takeover acts on a warm cache) → wait for
// sync (ready) → campaign for the Lease → on leading, start the controllers.
// Stop (SIGTERM): stop controllers and drain their queues → release the Lease so a standby takes
// over at once → stop informers → close the ops server and the client.
// Losing the Lease exits the process: a controller must never act after another one took over.
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { KubeObject } from '../../api/schema/meta.js';
import type { KubeClient } from './client.js';
import { Informer, type InformerOptions } from './informer.js';
import { Controller, type ControllerOptions } from './controller.js';
import { LeaderElector } from './leader-election.js';
import { EventRecorder } from './events.js';
import { StatusWriter } from './status-writer.js';
import { RuntimeMetrics, createRegistry } from './metrics.js';
import { startOpsServer, type HealthCheck } from './ops-server.js';
import type { ResourceType } from './resources.js';
import type { FastifyInstance } from 'fastify';

export interface ManagerOptions {
  /** Binary name, e.g. maintenance-controller. Also the default field manager and Lease name. */
  name: string;
  /** The manager owns the client and closes it on stop. */
  client: KubeClient;
  logger: Logger;
  /** SSA field manager; default `metal-maintenance/<name>`. */
  fieldManager?: string;
  /** reportingController of Events; default `maintenance.metal.ironcore.dev/<name>`. */
  eventSource?: string;
  leaderElection?:
    | {
        namespace: string;
        leaseName?: string;
        identity?: string;
        leaseDurationMs?: number;
        renewDeadlineMs?: number;
        retryPeriodMs?: number;
      }
    | false;
  ops?: { host?: string; port: number };
  syncTimeoutMs?: number;
  /** Called when the Lease is lost; default exits the process with status 1. */
  onLostLeadership?: () => void;
}

export class Manager {
  readonly name: string;
  readonly client: KubeClient;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly metrics: RuntimeMetrics;
  readonly status: StatusWriter;
  readonly events: EventRecorder;
  readonly identity: string;
  readonly #o: ManagerOptions;
  readonly #informers = new Map<string, Informer<KubeObject>>();
  readonly #controllers: Controller[] = [];
  readonly #readiness: HealthCheck[] = [];
  readonly #liveness: HealthCheck[] = [];
  readonly #campaign = new AbortController();
  readonly #onLeading: (() => void)[] = [];
  #elector: LeaderElector | undefined;
  #ops: { app: FastifyInstance; port: number } | undefined;
  #leading = false;
  #stopped = false;

  constructor(options: ManagerOptions) {
    this.#o = options;
    this.name = options.name;
    this.client = options.client;
    this.logger = options.logger;
    this.identity =
      (options.leaderElection && options.leaderElection.identity) || `${hostname()}_${process.pid}`;
    this.registry = createRegistry(options.name);
    this.metrics = new RuntimeMetrics(this.registry);
    options.client.observe((r) => {
      this.metrics.apiRequests.inc({ verb: r.verb, resource: r.resource, code: String(r.code) });
      this.metrics.apiRequestDuration.observe({ verb: r.verb }, r.ms / 1000);
    });
    this.status = new StatusWriter(options.fieldManager ?? `metal-maintenance/${options.name}`, {
      onConflict: (resource) => this.metrics.statusConflicts.inc({ resource }),
    });
    this.events = new EventRecorder({
      client: options.client,
      controller: options.eventSource ?? `maintenance.metal.ironcore.dev/${options.name}`,
      instance: this.identity,
      logger: options.logger,
    });
    this.#readiness.push({
      name: 'informers-synced',
      check: () => [...this.#informers.values()].every((i) => i.hasSynced()) || 'caches not synced yet',
    });
  }

  /** A shared informer for a resource type (one per type, namespace and selector). */
  informer<T extends KubeObject>(rt: ResourceType, options: InformerOptions<T> = {}): Informer<T> {
    const key = `${rt.group}/${rt.plural}|${options.namespace ?? ''}|${options.labelSelector ?? ''}|${options.fieldSelector ?? ''}`;
    let inf = this.#informers.get(key) as Informer<T> | undefined;
    if (!inf) {
      inf = new Informer<T>(this.client.resource<T>(rt), { logger: this.logger, ...options });
      this.#informers.set(key, inf as unknown as Informer<KubeObject>);
    } else if (options.indexers || options.transform) {
      throw new Error(
        `informer for ${rt.plural} already exists; declare its indexers and transform where it is first created`,
      );
    }
    return inf;
  }

  controller(options: Omit<ControllerOptions, 'logger' | 'metrics'>): Controller {
    const c = new Controller({ ...options, logger: this.logger, metrics: this.metrics });
    this.#controllers.push(c);
    if (this.#leading) c.start();
    return c;
  }

  addReadinessCheck(check: HealthCheck): void {
    this.#readiness.push(check);
  }

  addLivenessCheck(check: HealthCheck): void {
    this.#liveness.push(check);
  }

  /** Runs `fn` when this process starts leading (or at once if it already does). */
  onStartedLeading(fn: () => void): void {
    if (this.#leading) fn();
    else this.#onLeading.push(fn);
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  get opsPort(): number | undefined {
    return this.#ops?.port;
  }

  async start(): Promise<void> {
    if (this.#o.ops) {
      this.#ops = await startOpsServer({
        ...this.#o.ops,
        registry: this.registry,
        readiness: this.#readiness,
        liveness: this.#liveness,
      });
      this.logger.info({ port: this.#ops.port }, 'ops server listening (/healthz, /readyz, /metrics)');
    }
    for (const inf of this.#informers.values()) inf.start();
    this.#exportInformerMetrics();
    const syncTimeoutMs = this.#o.syncTimeoutMs ?? 120_000;
    await Promise.all([...this.#informers.values()].map((i) => i.waitForSync(syncTimeoutMs)));
    this.logger.info({ informers: this.#informers.size }, 'caches synced');

    const le = this.#o.leaderElection;
    if (!le) {
      this.#becomeLeader();
      return;
    }
    this.#elector = new LeaderElector({
      client: this.client,
      namespace: le.namespace,
      name: le.leaseName ?? this.name,
      identity: this.identity,
      leaseDurationMs: le.leaseDurationMs,
      renewDeadlineMs: le.renewDeadlineMs,
      retryPeriodMs: le.retryPeriodMs,
      logger: this.logger,
      onStartedLeading: () => this.#becomeLeader(),
      onStoppedLeading: () => {
        this.#leading = false;
        this.metrics.leader.set(0);
        if (this.#stopped) return;
        this.logger.fatal('lost leadership; exiting so that only one instance ever acts');
        (this.#o.onLostLeadership ?? (() => process.exit(1)))();
      },
      onNewLeader: (id) => this.logger.info({ leader: id }, 'leader observed'),
    });
    void this.#elector.run(this.#campaign.signal);
  }

  #becomeLeader(): void {
    this.#leading = true;
    this.metrics.leader.set(1);
    for (const c of this.#controllers) c.start();
    for (const fn of this.#onLeading.splice(0)) fn();
  }

  async stop(drainTimeoutMs = 10_000): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#campaign.abort();
    await Promise.all(this.#controllers.map((c) => c.stop(drainTimeoutMs)));
    await this.#elector?.release();
    await Promise.all([...this.#informers.values()].map((i) => i.stop()));
    await this.#ops?.app.close();
    await this.client.close();
  }

  #exportInformerMetrics(): void {
    const m = this.metrics;
    const informers = [...this.#informers.values()];
    const collect = () => {
      for (const inf of informers) {
        const resource = inf.resourceType.plural;
        m.informerEvents.set({ resource }, inf.size);
        m.informerRelists.set({ resource, reason: 'total' }, inf.stats.lists);
        m.informerRelists.set({ resource, reason: 'gone' }, inf.stats.relistsAfterGone);
        const last = Math.max(inf.stats.lastEventAt, inf.stats.lastListAt);
        m.informerLastEventAge.set({ resource }, last ? (Date.now() - last) / 1000 : -1);
      }
      for (const c of this.#controllers) m.queueDepth.set({ controller: c.name }, c.queue.length);
    };
    const timer = setInterval(collect, 5000);
    timer.unref();
    collect();
  }
}
