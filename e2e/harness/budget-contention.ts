// Budget safety under contention, against the real API server and webhook replicas (used by
// test/integration/webhook/contention.int.test.ts and scripts/soak-budget.ts).
//
// One run: M ServerMaintenances over S servers in two fleets, each under a budget of K:
//   pool "flat"  one domain (no topologyKey)            at most K in maintenance
//   pool "racks" topologyKey rack, R racks              at most K per rack
// C clients, all authenticated as the maintenance controller's ServiceAccount, push every maintenance
// towards InMaintenance at once (a status write the eviction guard admits only with a grant). An
// admitted maintenance is held briefly, completed, and its grant released, as the maintenance
// controller's finalizer does; a refused one is retried after a short backoff. Part-way through, one
// webhook replica is SIGKILLed (requests in flight on it fail; the balancer fails over) and restarted.
//
// The invariant checker reads the watch streams of the budgets and the maintenances (raw watches from a
// resourceVersion taken before the first write) and fails the run if it ever sees, per budget domain,
// more than K servers with a grant on the ledger or more than K maintenances InMaintenance, or two
// maintenances InMaintenance on one server. After the run it merges both streams by resourceVersion
// (etcd revisions, one global order) and replays them: at no revision may a maintenance be InMaintenance
// without its grant on the ledger. The idle-slot oracle (idle-slot.ts) reads the maintenance stream too:
// no maintenance may stay admissible (its server free, room in its pool's domain, counted from the
// maintenances, not the ledger) for more than 10 s without a client getting it in, kill or not.
import { randomBytes } from 'node:crypto';
import type { LedgerEntry, ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { ServerMaintenanceKind } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import {
  ServerDisruptionBudgetKind,
  type ServerDisruptionBudget,
} from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import { ServerKind, type Server } from '../../api/metal/v1alpha1/server.js';
import { KubeClient, type ResourceClient } from '../../lib/kube/client.js';
import { KubeApiError } from '../../lib/kube/errors.js';
import { errorMessage } from '../../lib/errors.js';
import { Core, resourceOf } from '../../lib/kube/resources.js';
import { ApiBudgetStore } from '../../lib/kube/budget-store.js';
import type { PolicyRule } from './env.js';
import type { WebhookHandle } from './webhook.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { releaseGrants } from '../../webhook/grants/release.js';
import { failedAfterReservation, refusedAfterReservation } from '../../controllers/maintenance/waiters.js';
import { IdleSlotOracle, type IdleSlotReport } from './idle-slot.js';

const MAINT = 'maintenance.metal.ironcore.dev';
const METAL = 'metal.ironcore.dev';

/** What the maintenance controller's ServiceAccount may do, as far as this scenario writes. */
export const MAINTENANCE_CONTROLLER_RULES: PolicyRule[] = [
  {
    apiGroups: [MAINT],
    resources: ['servermaintenances'],
    verbs: ['get', 'list', 'watch', 'update', 'patch'],
  },
  { apiGroups: [MAINT], resources: ['servermaintenances/status'], verbs: ['get', 'update', 'patch'] },
  { apiGroups: [METAL], resources: ['servers', 'serverclaims'], verbs: ['get', 'list', 'watch'] },
  {
    apiGroups: [MAINT],
    resources: ['serverdisruptionbudgets', 'serverclaimdisruptionbudgets'],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroups: [MAINT],
    resources: ['serverdisruptionbudgets/status', 'serverclaimdisruptionbudgets/status'],
    verbs: ['get', 'update'],
  },
];

export interface ContentionOptions {
  admin: KubeClient;
  /** Kubeconfig of the maintenance controller's ServiceAccount. */
  controllerKubeconfig: string;
  webhook: WebhookHandle;
  /** Replica to kill part-way (undefined: none). */
  killReplica?: number;
  maintenances?: number;
  flatServers?: number;
  rackServers?: number;
  racks?: number;
  limit?: number;
  clients?: number;
  /** How long an admitted maintenance stays InMaintenance. */
  holdMs?: [number, number];
  /** Backoff after a refusal. */
  retryMs?: [number, number];
  timeoutMs?: number;
}

export interface DomainPeak {
  /** Most servers with a grant at once, seen on the watch stream. */
  granted: number;
  /** Most maintenances InMaintenance at once, seen on the watch stream. */
  inMaintenance: number;
}

export interface ContentionResult {
  run: string;
  maintenances: number;
  servers: number;
  clients: number;
  limit: number;
  /** Transitions into InMaintenance admitted. */
  granted: number;
  /** Refusals by denial code (429s and 403s), and writes that never got an answer from a webhook. */
  denied: Record<string, number>;
  unreachable: number;
  /** Grants given back after a write that was refused by another step or surely not stored. */
  releasedAfterFailure: number;
  /** Per budget domain, e.g. "flat" or "racks/r2". */
  peaks: Record<string, DomainPeak>;
  violations: string[];
  /** The idle-slot oracle's verdict: the longest admissible-but-waiting time and any stall. */
  idleSlot: IdleSlotReport;
  killedAfterMs?: number;
  watchEvents: number;
  durationMs: number;
  /** Of which: creating servers, maintenances and budgets; pushing until all completed. */
  setupMs: number;
  pushMs: number;
}

export type Pool = 'flat' | 'racks';
export type WatchEvent<T> = { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'; object: T };
interface Recorded {
  rv: number;
  kind: 'budget' | 'maintenance';
  type: string;
  object: ServerDisruptionBudget | ServerMaintenance;
}

const rand = ([lo, hi]: [number, number]) => lo + Math.random() * (hi - lo);

async function inBatches<T>(items: T[], size: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

/** A raw watch from `resourceVersion`, recording every event until aborted. */
async function record<T>(
  client: KubeClient,
  path: string,
  resourceVersion: string,
  signal: AbortSignal,
  onEvent: (e: WatchEvent<T>) => void,
): Promise<void> {
  const stream = client.stream(path, {
    query: { watch: 1, resourceVersion, timeoutSeconds: 600 },
    inactivityMs: 600_000,
    signal,
  });
  for await (const raw of stream) {
    const e = raw as WatchEvent<T>;
    if (e.type === 'ERROR') throw new Error(`watch ${path} failed: ${JSON.stringify(e.object)}`);
    onEvent(e);
  }
}

/** Judges the watch streams of one run (exported for its own unit test). */
export class InvariantChecker {
  readonly violations: string[] = [];
  readonly peaks: Record<string, DomainPeak> = {};
  readonly events: Recorded[] = [];
  readonly #limit: number;
  /** server → domain key ("flat", "racks/r1"). */
  readonly #domainOf: Map<string, string>;
  readonly #budgets: Map<string, Pool>;
  readonly #inMaintenance = new Map<string, string>(); // maintenance name → server
  completed = new Set<string>();
  ledgerSize = new Map<string, number>();

  constructor(limit: number, domainOf: Map<string, string>, budgets: Map<string, Pool>) {
    this.#limit = limit;
    this.#domainOf = domainOf;
    this.#budgets = budgets;
    for (const d of new Set(domainOf.values())) this.peaks[d] = { granted: 0, inMaintenance: 0 };
  }

  #peak(domain: string, field: keyof DomainPeak, n: number, what: string) {
    const p = (this.peaks[domain] ??= { granted: 0, inMaintenance: 0 });
    p[field] = Math.max(p[field], n);
    if (n > this.#limit) this.violations.push(`${domain}: ${n} ${what} > ${this.#limit}`);
  }

  onBudget(e: WatchEvent<ServerDisruptionBudget>): void {
    const pool = this.#budgets.get(e.object.metadata.name ?? '');
    if (!pool || e.type === 'BOOKMARK') return;
    this.events.push({
      rv: Number(e.object.metadata.resourceVersion),
      kind: 'budget',
      type: e.type,
      object: e.object,
    });
    const grants = e.type === 'DELETED' ? [] : (e.object.status?.grants ?? []);
    this.ledgerSize.set(pool, grants.length);
    const perDomain = new Map<string, Set<string>>();
    for (const g of grants) {
      const domain = pool === 'flat' ? 'flat' : `racks/${g.domain ?? ''}`;
      let set = perDomain.get(domain);
      if (!set) perDomain.set(domain, (set = new Set()));
      set.add(g.server);
    }
    for (const [domain, set] of perDomain) this.#peak(domain, 'granted', set.size, 'servers granted');
  }

  onMaintenance(e: WatchEvent<ServerMaintenance>): void {
    if (e.type === 'BOOKMARK') return;
    const m = e.object;
    const name = m.metadata.name ?? '';
    this.events.push({
      rv: Number(m.metadata.resourceVersion),
      kind: 'maintenance',
      type: e.type,
      object: m,
    });
    if (m.status?.state === 'Completed') this.completed.add(name);
    if (e.type !== 'DELETED' && m.status?.state === 'InMaintenance')
      this.#inMaintenance.set(name, m.spec.serverRef.name);
    else this.#inMaintenance.delete(name);
    const server = m.spec.serverRef.name;
    const domain = this.#domainOf.get(server);
    if (!domain) return;
    const onServer = [...this.#inMaintenance.values()].filter((s) => s === server).length;
    if (onServer > 1)
      this.violations.push(`server ${server}: ${onServer} maintenances InMaintenance at once`);
    const inDomain = [...this.#inMaintenance.values()].filter((s) => this.#domainOf.get(s) === domain).length;
    this.#peak(domain, 'inMaintenance', inDomain, 'maintenances InMaintenance');
  }

  /**
   * Both streams merged by resourceVersion: at no revision is a maintenance InMaintenance without its
   * grant on the ledger, nor more than K servers granted or in maintenance per domain.
   */
  replay(): void {
    const grants = new Map<Pool, LedgerEntry[]>();
    const inMaintenance = new Map<string, { uid: string; server: string }>();
    for (const ev of [...this.events].sort((a, b) => a.rv - b.rv)) {
      if (ev.kind === 'budget') {
        const b = ev.object as ServerDisruptionBudget;
        grants.set(
          this.#budgets.get(b.metadata.name ?? '')!,
          ev.type === 'DELETED' ? [] : (b.status?.grants ?? []),
        );
      } else {
        const m = ev.object as ServerMaintenance;
        const name = m.metadata.name ?? '';
        if (ev.type !== 'DELETED' && m.status?.state === 'InMaintenance')
          inMaintenance.set(name, { uid: m.metadata.uid ?? '', server: m.spec.serverRef.name });
        else inMaintenance.delete(name);
      }
      this.#judgeRevision(ev.rv, grants, inMaintenance);
    }
  }

  #judgeRevision(
    rv: number,
    grants: Map<Pool, LedgerEntry[]>,
    inMaintenance: Map<string, { uid: string; server: string }>,
  ): void {
    const held = new Map<string, Set<string>>(); // domain → servers granted or in maintenance
    const hold = (domain: string, server: string) => {
      const set = held.get(domain) ?? new Set<string>();
      held.set(domain, set.add(server));
    };
    const granted = new Set<string>();
    for (const [pool, entries] of grants)
      for (const g of entries) {
        granted.add(g.maintenanceUID);
        hold(pool === 'flat' ? 'flat' : `racks/${g.domain ?? ''}`, g.server);
      }
    for (const [name, { uid, server }] of inMaintenance) {
      if (!granted.has(uid)) this.violations.push(`revision ${rv}: ${name} InMaintenance without a grant`);
      hold(this.#domainOf.get(server) ?? '?', server);
    }
    for (const [domain, set] of held)
      if (set.size > this.#limit)
        this.violations.push(`revision ${rv}: ${domain} has ${set.size} servers granted or in maintenance`);
  }
}

function denialCode(e: unknown): string | undefined {
  if (!(e instanceof KubeApiError)) return undefined;
  return /METAL_ERR_[A-Z_]+/.exec(e.status.message ?? '')?.[0];
}

const LABEL = 'test.metal.ironcore.dev/contention';

interface Settings {
  M: number;
  K: number;
  C: number;
  flat: number;
  rack: number;
  racks: number;
  holdMs: [number, number];
  retryMs: [number, number];
  timeoutMs: number;
}

/** One run's objects and counters; the phases are its methods, in the order run() calls them. */
class ContentionRun {
  readonly id = randomBytes(3).toString('hex');
  readonly ns = `contention-${this.id}`;
  readonly o: ContentionOptions;
  readonly s: Settings;
  readonly domainOf = new Map<string, string>();
  readonly servers: Server[] = [];
  readonly sms: ServerMaintenance[] = [];
  readonly budgetName: Record<Pool, string>;
  readonly budgets: Map<string, Pool>;
  readonly checker: InvariantChecker;
  oracle: IdleSlotOracle | undefined;
  readonly denied: Record<string, number> = {};
  granted = 0;
  unreachable = 0;
  releasedAfterFailure = 0;
  completed = 0;
  killedAfterMs: number | undefined;
  restart: Promise<void> | undefined;
  failure: Error | undefined;

  constructor(o: ContentionOptions) {
    this.o = o;
    this.s = {
      M: o.maintenances ?? 200,
      K: o.limit ?? 3,
      C: o.clients ?? 20,
      flat: o.flatServers ?? 16,
      rack: o.rackServers ?? 48,
      racks: o.racks ?? 4,
      holdMs: o.holdMs ?? [5, 25],
      retryMs: o.retryMs ?? [20, 60],
      timeoutMs: o.timeoutMs ?? 120_000,
    };
    this.budgetName = { flat: `c-${this.id}-flat`, racks: `c-${this.id}-racks` };
    this.budgets = new Map([
      [this.budgetName.flat, 'flat'],
      [this.budgetName.racks, 'racks'],
    ]);
    this.checker = new InvariantChecker(this.s.K, this.domainOf, this.budgets);
  }

  sdb(c: KubeClient = this.o.admin) {
    return c.resource<ServerDisruptionBudget>(resourceOf(ServerDisruptionBudgetKind));
  }
  sm(c: KubeClient = this.o.admin) {
    return c.resource<ServerMaintenance>(resourceOf(ServerMaintenanceKind));
  }
  poolOf(m: ServerMaintenance): Pool {
    return this.domainOf.get(m.spec.serverRef.name) === 'flat' ? 'flat' : 'racks';
  }

  /** Servers of both pools, and maintenances spread round-robin over them. */
  async createFleet(): Promise<void> {
    const { admin } = this.o;
    await admin.resource(Core.Namespace).create({ metadata: { name: this.ns } });
    const add = (name: string, domain: string, labels: Record<string, string>) => {
      this.domainOf.set(name, domain);
      this.servers.push({
        metadata: { name, labels: { [LABEL]: this.id, ...labels } },
        spec: { systemUUID: name },
      });
    };
    for (let i = 0; i < this.s.flat; i++) add(`c-${this.id}-flat-${i}`, 'flat', { pool: 'flat' });
    for (let i = 0; i < this.s.rack; i++) {
      const rack = `r${i % this.s.racks}`;
      add(`c-${this.id}-rack-${i}`, `racks/${rack}`, { pool: 'racks', rack });
    }
    const srv = admin.resource<Server>(resourceOf(ServerKind));
    await inBatches(this.servers, 20, (s) => srv.create(s));
    const indexes = Array.from({ length: this.s.M }, (_, i) => i);
    await inBatches(indexes, 20, async (i) => {
      const server = this.servers[i % this.servers.length]!.metadata.name!;
      this.sms.push(
        await this.sm().create({
          metadata: { name: `m-${i}`, namespace: this.ns },
          spec: { serverRef: { name: server }, reason: 'FirmwareUpdate', class: 'Emergency' },
        }),
      );
    });
  }

  /** Budgets live in the webhook caches before the first push: created paused, probed, unpaused. */
  async createBudgets(controller: KubeClient): Promise<void> {
    const sdb = this.sdb();
    for (const pool of ['flat', 'racks'] as const) {
      const created = await sdb.create({
        metadata: { name: this.budgetName[pool] },
        spec: {
          serverSelector: { matchLabels: { [LABEL]: this.id, pool } },
          maxUnavailable: this.s.K,
          ...(pool === 'racks' ? { topologyKey: 'rack' } : {}),
          paused: true,
        },
      });
      await sdb.replaceStatus({
        ...created,
        status: { observedGeneration: created.metadata.generation ?? 1 },
      });
      const probe = this.sms.find((m) => this.poolOf(m) === pool)!;
      await waitForDenial(controller, probe, 'METAL_ERR_BUDGET_PAUSED', 30_000);
      const live = await sdb.patch(this.budgetName[pool], { spec: { paused: false } });
      await sdb.replaceStatus({ ...live, status: { observedGeneration: live.metadata.generation ?? 1 } });
    }
  }

  /** Raw watches of both kinds from a resourceVersion before the first transition. */
  async watch(signal: AbortSignal): Promise<Promise<void>[]> {
    const { admin } = this.o;
    const oracle = this.idleSlotOracle();
    // The watches start after the maintenances exist: the oracle starts from them as created.
    for (const m of this.sms) oracle.onMaintenance(m, false, Date.now());
    const tick = setInterval(() => oracle.tick(Date.now()), 250);
    signal.addEventListener('abort', () => clearInterval(tick));
    const smRV = (await this.sm().list({ namespace: this.ns, limit: 1 })).metadata.resourceVersion;
    const sdbRV = (await this.sdb().list({ limit: 1 })).metadata.resourceVersion;
    const quiet = async (p: Promise<void>) => {
      try {
        await p;
      } catch (e) {
        if (!signal.aborted) throw e;
      }
    };
    return [
      quiet(
        record<ServerDisruptionBudget>(admin, this.sdb().path(), sdbRV, signal, (e) => {
          this.checker.onBudget(e);
          const name = e.object.metadata.name ?? '';
          if (e.type !== 'BOOKMARK' && this.budgets.has(name))
            oracle.onLedger(name, e.type === 'DELETED' ? [] : (e.object.status?.grants ?? []), Date.now());
        }),
      ),
      quiet(
        record<ServerMaintenance>(admin, this.sm().path(this.ns), smRV, signal, (e) => {
          this.checker.onMaintenance(e);
          if (e.type !== 'BOOKMARK') oracle.onMaintenance(e.object, e.type === 'DELETED', Date.now());
        }),
      ),
    ];
  }

  /** The oracle over both pools: each pool's budget of K, the racks one per rack; no approval here. */
  idleSlotOracle(): IdleSlotOracle {
    const pool = (p: Pool) =>
      new Map(
        [...this.domainOf]
          .filter(([, d]) => (d === 'flat') === (p === 'flat'))
          .map(([server, d]) => [server, d === 'flat' ? '' : d]),
      );
    this.oracle = new IdleSlotOracle({
      approvalRequired: false,
      budgets: (['flat', 'racks'] as const).map((p) => ({
        name: this.budgetName[p],
        domainOf: pool(p),
        maxUnavailable: this.s.K,
      })),
    });
    return this.oracle;
  }

  /** One client: take a maintenance, push it into InMaintenance; on success hold, complete, release. */
  async worker(
    client: KubeClient,
    queue: ServerMaintenance[],
    deadline: number,
    startedAt: number,
  ): Promise<void> {
    const store = new ApiBudgetStore(client);
    const status = (m: ServerMaintenance, state: string) =>
      this.sm(client).patch(
        m.metadata.name!,
        { status: { state } },
        { namespace: this.ns, subresource: 'status' },
      );
    while (this.completed < this.s.M && Date.now() < deadline && !this.failure) {
      const m = queue.shift();
      if (!m) {
        await sleep(20);
        continue;
      }
      const ref = { kind: 'ServerDisruptionBudget' as const, name: this.budgetName[this.poolOf(m)] };
      try {
        await status(m, 'InMaintenance');
      } catch (e) {
        const code = denialCode(e);
        if (code) this.denied[code] = (this.denied[code] ?? 0) + 1;
        else this.unreachable++;
        // As the maintenance controller does (admitter.ts): a write surely not stored gives back the
        // grant the eviction webhook may have written for it, e.g. on the replica killed mid-review;
        // left alone, it holds a slot until the TTL while the others are refused (issue 31).
        if (code ? refusedAfterReservation(code) : e instanceof KubeApiError && failedAfterReservation(e))
          await releaseGrants(store, [ref], m.metadata.uid!)
            .then((r) => (this.releasedAfterFailure += r.released.length))
            .catch(() => undefined);
        await sleep(rand(this.s.retryMs));
        queue.push(m);
        continue;
      }
      this.granted++;
      await sleep(rand(this.s.holdMs));
      // Completing is a guarded status write too: it may meet the killed replica; retry it.
      await persist(`complete ${m.metadata.name}`, deadline, () => status(m, 'Completed'));
      await persist(`release the grant of ${m.metadata.name}`, deadline, async () => {
        const released = await releaseGrants(store, [ref], m.metadata.uid!);
        if (released.failed.length > 0) throw new Error('release failed');
      });
      this.completed++;
      this.maybeKill(startedAt);
    }
  }

  /** A third of the way through, SIGKILL one replica and start it again in the background. */
  maybeKill(startedAt: number): void {
    const i = this.o.killReplica;
    if (i === undefined || this.restart !== undefined || this.completed < this.s.M / 3) return;
    this.killedAfterMs = Date.now() - startedAt;
    this.restart = this.o.webhook.kill(i).then(() => this.o.webhook.restart(i));
  }

  async push(): Promise<void> {
    const { controllerKubeconfig } = this.o;
    const clients = await Promise.all(
      Array.from({ length: this.s.C }, () =>
        KubeClient.fromFile(controllerKubeconfig, { timeoutMs: 20_000 }),
      ),
    );
    const queue = [...this.sms].sort(() => Math.random() - 0.5);
    const startedAt = Date.now();
    const deadline = startedAt + this.s.timeoutMs;
    try {
      await Promise.all(
        clients.map((c) =>
          this.worker(c, queue, deadline, startedAt).catch((e: unknown) => {
            this.failure ??= e instanceof Error ? e : new Error(String(e));
          }),
        ),
      );
      await this.restart;
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
    if (this.failure) throw this.failure;
  }

  /** Waits (bounded) until the watches saw every completion and empty ledgers. */
  async settle(): Promise<void> {
    const end = Date.now() + 15_000;
    const pending = () =>
      this.checker.completed.size < this.s.M || [...this.checker.ledgerSize.values()].some((n) => n > 0);
    while (pending() && Date.now() < end) await sleep(50);
  }

  setupMs = 0;
  pushMs = 0;

  result(startedAt: number): ContentionResult {
    const c = this.checker;
    if (this.completed < this.s.M)
      c.violations.push(`only ${this.completed} of ${this.s.M} maintenances completed`);
    if (c.completed.size < this.s.M)
      c.violations.push(`the watch saw ${c.completed.size} of ${this.s.M} complete`);
    c.replay();
    const idleSlot = this.oracle?.report() ?? {
      violations: [],
      longestWaitMs: 0,
      longestWaiter: undefined,
      started: 0,
    };
    c.violations.push(...idleSlot.violations.map((v) => `idle slot: ${v}`));
    return {
      run: this.id,
      maintenances: this.s.M,
      servers: this.servers.length,
      clients: this.s.C,
      limit: this.s.K,
      granted: this.granted,
      denied: this.denied,
      unreachable: this.unreachable,
      releasedAfterFailure: this.releasedAfterFailure,
      peaks: c.peaks,
      violations: [...new Set(c.violations)],
      idleSlot,
      ...(this.killedAfterMs !== undefined ? { killedAfterMs: this.killedAfterMs } : {}),
      watchEvents: c.events.length,
      durationMs: Date.now() - startedAt,
      setupMs: this.setupMs,
      pushMs: this.pushMs,
    };
  }
}

/** One contention run; see the file comment. Never leaves its clients or watches open. */
export async function runBudgetContention(o: ContentionOptions): Promise<ContentionResult> {
  const startedAt = Date.now();
  const run = new ContentionRun(o);
  const controller = await KubeClient.fromFile(o.controllerKubeconfig, { timeoutMs: 20_000 });
  try {
    await run.createFleet();
    await run.createBudgets(controller);
    run.setupMs = Date.now() - startedAt;
    const stopWatching = new AbortController();
    const watches = await run.watch(stopWatching.signal);
    try {
      const pushStarted = Date.now();
      await run.push();
      run.pushMs = Date.now() - pushStarted;
      await run.settle();
    } finally {
      stopWatching.abort();
      await Promise.all(watches);
    }
    return run.result(startedAt);
  } finally {
    await controller.close();
    // Budgets of finished runs select nothing any more; drop them so later runs start lean.
    for (const name of run.budgets.keys())
      await run
        .sdb()
        .delete(name)
        .catch(() => undefined);
  }
}

/** Retries `fn` on any error until `deadline` (transient failures while a replica is down). */
async function persist<T>(what: string, deadline: number, fn: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`${what}: ${errorMessage(e)}`, { cause: e });
      await sleep(50);
    }
  }
}

/** Retries a dry-run transition of `m` until the webhook refuses it with `code`. */
async function waitForDenial(client: KubeClient, m: ServerMaintenance, code: string, timeoutMs: number) {
  const sm: ResourceClient<ServerMaintenance> = client.resource(resourceOf(ServerMaintenanceKind));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await sm.patch(
        m.metadata.name!,
        { status: { state: 'InMaintenance' } },
        {
          namespace: m.metadata.namespace,
          subresource: 'status',
          dryRun: true,
        },
      );
    } catch (e) {
      if (denialCode(e) === code) return;
    }
    if (Date.now() > deadline)
      throw new Error(`the webhook did not answer ${code} for ${m.metadata.name} in time`);
    await sleep(100);
  }
}

/** One line of figures per run. */
export function describeRun(r: ContentionResult): string {
  const peaks = Object.entries(r.peaks)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([d, p]) => `${d}=${p.granted}/${p.inMaintenance}`)
    .join(' ');
  const denied = Object.entries(r.denied)
    .sort(([, a], [, b]) => b - a)
    .map(([c, n]) => `${c.replace('METAL_ERR_', '')}:${n}`)
    .join(' ');
  const deniedTotal = Object.values(r.denied).reduce((a, b) => a + b, 0);
  return (
    `run ${r.run}: ${r.maintenances} maintenances, ${r.servers} servers, ${r.clients} clients, K=${r.limit}; ` +
    `granted ${r.granted}, denied ${deniedTotal} (${denied}), unreachable ${r.unreachable} ` +
    `(grants given back ${r.releasedAfterFailure}); ` +
    `peak granted/inMaintenance per domain: ${peaks}; ` +
    `longest admissible wait ${r.idleSlot.longestWaitMs} ms; ` +
    `replica killed after ${r.killedAfterMs ?? '-'} ms; ${r.watchEvents} watch events; ` +
    `${r.durationMs} ms (setup ${r.setupMs}, push ${r.pushMs})` +
    (r.violations.length ? `; VIOLATIONS: ${r.violations.join('; ')}` : '')
  );
}
