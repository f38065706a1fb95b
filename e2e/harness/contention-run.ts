// One contention run's objects, counters and phases (budget-contention.ts runs them in order): the
// fleet and its budgets, the watches feeding the invariant checker and the idle-slot oracle, the clients
// pushing maintenances into InMaintenance, and the result.
import { randomBytes } from 'node:crypto';
import {
  ServerMaintenanceKind,
  type ServerMaintenance,
} from '../../api/maintenance/v1alpha1/servermaintenance.js';
import {
  ServerDisruptionBudgetKind,
  type ServerDisruptionBudget,
} from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import { ServerKind, type Server } from '../../api/metal/v1alpha1/server.js';
import { KubeClient } from '../../lib/kube/client.js';
import { KubeApiError } from '../../lib/kube/errors.js';
import { Core, resourceOf } from '../../lib/kube/resources.js';
import { ApiBudgetStore } from '../../lib/kube/budget-store.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { releaseGrants } from '../../webhook/grants/release.js';
import { failedAfterReservation, refusedAfterReservation } from '../../controllers/maintenance/waiters.js';
import { IdleSlotOracle } from './idle-slot.js';
import { InvariantChecker, type Pool } from './contention-checker.js';
import { denialCode, inBatches, persist, record, waitForDenial } from './contention-io.js';
import type { ContentionOptions, ContentionResult } from './budget-contention.js';

const rand = ([lo, hi]: [number, number]) => lo + Math.random() * (hi - lo);

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
export class ContentionRun {
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
    // No budget controller runs here, so nothing expires a grant: one not given back stays on its
    // ledger, and the run must end with none (issue 31: released at the source, not left to the TTL).
    const grants = c.ledgerCounts();
    if (grants.left > 0) c.violations.push(`${grants.left} grants left on the ledgers at the end`);
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
      grants,
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
