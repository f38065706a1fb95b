// The budget controller's edge. One work queue keyed by budget (`sdb/<name>`, `scdb/<namespace>/<name>`).
// A server, claim, BMC or maintenance change enqueues only the budgets it can affect.
import type { BMC } from '../../api/metal/v1alpha1/bmc.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { LedgerEntry, ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import type { Manager } from '../../lib/kube/manager.js';
import { withoutManagedFields, type Informer } from '../../lib/kube/informer.js';
import type { ResourceClient } from '../../lib/kube/client.js';
import type { ReconcileResult } from '../../lib/kube/controller.js';
import type { PolicyStore } from '../../lib/policy/store.js';
import { durationMs } from '../../lib/policy/durations.js';
import { DEFAULT_POLICY } from '../../policies/schema.js';
import { matchesSelector } from '../../contract/selectors.js';
import {
  BMCResource,
  ServerClaimDisruptionBudgetResource,
  ServerClaimResource,
  ServerDisruptionBudgetResource,
  ServerMaintenanceResource,
  ServerResource,
} from '../../lib/kube/kinds.js';
import { budgetInformers, budgetPlural, budgetStore, GRANT_INDEX } from '../shared/budget-informers.js';
import type { ApiBudgetStore } from '../../lib/kube/budget-store.js';
import { isNotFound } from '../../lib/kube/errors.js';
import { sleep } from '../../lib/kube/backoff.js';
import { refOf } from '../../contract/budgets.js';
import { compareAndSwap } from '../../contract/ledger/cas.js';
import { withoutGrants } from '../../contract/ledger/edit.js';
import { applyStatusOf, withTypeMeta } from '../shared/writes.js';
import { DecisionLog } from '../../lib/log-sampling.js';
import { budgetName, budgetStatusLines, grantExpiryLines } from './decision-log.js';
import {
  asDecided,
  budgetStatusChanged,
  claimBudgetStatus,
  confirmExpiry,
  expiryCandidates,
  serverBudgetStatus,
  type ComputedStatus,
  type ExpiryReason,
} from './decide.js';
import { BudgetMetrics } from './metrics.js';
import { serverUnavailableReason } from '../../contract/availability.js';
import { type AnyBudget } from '../../contract/budgets.js';

export interface BudgetControllerOptions {
  workers: number;
  /**
   * Least time between two status writes of one budget. Every grant and release changes the figures;
   * writing each change was a write per grant and per release on the object the webhook and the
   * maintenance controller compare-and-swap, so their writes lost to ours. Changes inside the interval
   * go out together in one write at its end (grant expiry waits for it too: a second at most).
   */
  statusIntervalMs?: number;
}

export const DEFAULT_STATUS_INTERVAL_MS = 1000;

/** What of a server a budget's numbers depend on; other changes (power, inventory) enqueue nothing. */
function censusSignature(s: Server | undefined, bmc: BMC | undefined): string {
  if (!s) return '';
  return JSON.stringify([
    s.metadata.labels ?? {},
    serverUnavailableReason(s, bmc) ?? '',
    s.spec.serverClaimRef ?? null,
  ]);
}

export class BudgetReconciler {
  readonly #mgr: Manager;
  readonly #policies: PolicyStore;
  readonly #sdbs: Informer<ServerDisruptionBudget>;
  readonly #scdbs: Informer<ServerClaimDisruptionBudget>;
  readonly #servers: Informer<Server>;
  readonly #claims: Informer<ServerClaim>;
  readonly #bmcs: Informer<BMC>;
  readonly #maintenances: Informer<ServerMaintenance>;
  readonly #smClient: ResourceClient<ServerMaintenance>;
  readonly #sdbClient: ResourceClient<ServerDisruptionBudget>;
  readonly #scdbClient: ResourceClient<ServerClaimDisruptionBudget>;
  readonly #metrics: BudgetMetrics;
  readonly #decisions: DecisionLog;
  readonly #budgetStore: ApiBudgetStore;
  readonly #enqueue: (key: string) => void;
  readonly #statusIntervalMs: number;
  /** budget key -> when its status was last written (epoch ms). */
  readonly #lastWrite = new Map<string, number>();

  constructor(mgr: Manager, policies: PolicyStore, options: BudgetControllerOptions) {
    this.#mgr = mgr;
    this.#policies = policies;
    this.#statusIntervalMs = options.statusIntervalMs ?? DEFAULT_STATUS_INTERVAL_MS;
    // No reader of these caches needs managedFields (a third of a Server's bytes or more).
    const transform = withoutManagedFields;
    const budgets = budgetInformers(mgr);
    ({ sdbs: this.#sdbs, scdbs: this.#scdbs } = budgets);
    this.#budgetStore = budgetStore(mgr, budgets);
    this.#servers = mgr.informer<Server>(ServerResource, {
      indexers: { bmc: (s) => (s.spec.bmcRef?.name ? [s.spec.bmcRef.name] : []) },
      transform,
    });
    this.#claims = mgr.informer<ServerClaim>(ServerClaimResource, { transform });
    this.#bmcs = mgr.informer<BMC>(BMCResource, { transform });
    this.#maintenances = mgr.informer<ServerMaintenance>(ServerMaintenanceResource, { transform });
    this.#smClient = mgr.client.resource<ServerMaintenance>(ServerMaintenanceResource);
    this.#sdbClient = mgr.client.resource<ServerDisruptionBudget>(ServerDisruptionBudgetResource);
    this.#scdbClient = mgr.client.resource<ServerClaimDisruptionBudget>(ServerClaimDisruptionBudgetResource);
    this.#metrics = new BudgetMetrics(mgr.registry);
    this.#decisions = new DecisionLog(mgr.logger);
    const controller = mgr.controller({
      name: 'budget',
      workers: options.workers,
      reconcile: (k) => this.reconcile(k),
    });
    this.#enqueue = (key) => controller.enqueue(key);
    this.#wire();
  }

  #bmcOf = (s: Server): BMC | undefined =>
    s.spec.bmcRef ? this.#bmcs.getByName(s.spec.bmcRef.name) : undefined;

  #budgetsOfServer(s: Server): void {
    for (const b of this.#sdbs.list())
      if (matchesSelector(b.spec.serverSelector, s.metadata.labels))
        this.#enqueue(`sdb/${b.metadata.name ?? ''}`);
    const ns = s.spec.serverClaimRef?.namespace;
    if (ns) this.#claimBudgetsIn(ns);
  }

  #claimBudgetsIn(namespace: string): void {
    for (const b of this.#scdbs.list(namespace)) this.#enqueue(`scdb/${namespace}/${b.metadata.name ?? ''}`);
  }

  #budgetsOfGrant(uid: string): void {
    for (const b of this.#sdbs.byIndex(GRANT_INDEX, uid)) this.#enqueue(`sdb/${b.metadata.name ?? ''}`);
    for (const b of this.#scdbs.byIndex(GRANT_INDEX, uid))
      this.#enqueue(`scdb/${b.metadata.namespace ?? ''}/${b.metadata.name ?? ''}`);
  }

  #wire(): void {
    this.#sdbs.on({
      add: (b) => this.#enqueue(`sdb/${b.metadata.name ?? ''}`),
      update: (_o, b) => this.#enqueue(`sdb/${b.metadata.name ?? ''}`),
      delete: (b) => this.#metrics.forget('ServerDisruptionBudget', '', b.metadata.name ?? ''),
    });
    this.#scdbs.on({
      add: (b) => this.#enqueue(`scdb/${b.metadata.namespace ?? ''}/${b.metadata.name ?? ''}`),
      update: (_o, b) => this.#enqueue(`scdb/${b.metadata.namespace ?? ''}/${b.metadata.name ?? ''}`),
      delete: (b) =>
        this.#metrics.forget(
          'ServerClaimDisruptionBudget',
          b.metadata.namespace ?? '',
          b.metadata.name ?? '',
        ),
    });
    this.#servers.on({
      add: (s) => this.#budgetsOfServer(s),
      update: (o, s) => {
        if (censusSignature(o, this.#bmcOf(o)) === censusSignature(s, this.#bmcOf(s))) return;
        this.#budgetsOfServer(o);
        this.#budgetsOfServer(s);
      },
      delete: (s) => this.#budgetsOfServer(s),
    });
    const onClaim = (o: ServerClaim | undefined, c: ServerClaim) => {
      if (
        o &&
        JSON.stringify([o.metadata.labels, o.spec.serverRef]) ===
          JSON.stringify([c.metadata.labels, c.spec.serverRef])
      )
        return;
      this.#claimBudgetsIn(c.metadata.namespace ?? '');
    };
    this.#claims.on({
      add: (c) => onClaim(undefined, c),
      update: onClaim,
      delete: (c) => onClaim(undefined, c),
    });
    const onBMC = (b: BMC) => {
      for (const s of this.#servers.byIndex('bmc', b.metadata.name ?? '')) this.#budgetsOfServer(s);
    };
    this.#bmcs.on({ add: onBMC, update: (_o, b) => onBMC(b), delete: onBMC });
    const onM = (m: ServerMaintenance) => this.#budgetsOfGrant(m.metadata.uid ?? '');
    this.#maintenances.on({
      add: onM,
      update: (o, m) => {
        if (
          o.status?.state !== m.status?.state ||
          !!o.metadata.deletionTimestamp !== !!m.metadata.deletionTimestamp
        )
          onM(m);
      },
      delete: onM,
    });
    this.#policies.onChange(() => {
      for (const b of this.#sdbs.list()) this.#enqueue(`sdb/${b.metadata.name ?? ''}`);
      for (const b of this.#scdbs.list())
        this.#enqueue(`scdb/${b.metadata.namespace ?? ''}/${b.metadata.name ?? ''}`);
    });
  }

  #lookup(key: string): {
    budget?: AnyBudget;
    resource: ResourceClient<AnyBudget>;
    kind: string;
    namespace: string;
    name: string;
  } {
    const [kind = '', a = '', b = ''] = key.split('/');
    if (kind === 'sdb')
      return {
        budget: this.#sdbs.getByName(a),
        resource: this.#sdbClient,
        kind: 'ServerDisruptionBudget',
        namespace: '',
        name: a,
      };
    return {
      budget: this.#scdbs.getByName(b, a),
      resource: this.#scdbClient,
      kind: 'ServerClaimDisruptionBudget',
      namespace: a,
      name: b,
    };
  }

  /** Ledger entries to drop, each confirmed against a fresh read of its maintenance. */
  async #toDrop(budget: AnyBudget, ttlMs: number, now: Date) {
    const { candidates, wakeAt, ttlAt } = expiryCandidates(
      budget,
      (ns, n) => this.#maintenances.getByName(n, ns),
      ttlMs,
      now,
    );
    const drop: { entry: LedgerEntry; reason: ExpiryReason }[] = [];
    for (const c of candidates) {
      // The final word comes from the API server, not the cache.
      const fresh = await this.#smClient.find(c.entry.maintenance.name, c.entry.maintenance.namespace);
      const reason = confirmExpiry(c, fresh, ttlMs, now);
      if (reason) drop.push({ entry: c.entry, reason });
    }
    return { drop, wakeAt, ttlAt };
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const target = this.#lookup(key);
    let budget = target.budget;
    if (!budget) {
      this.#lastWrite.delete(key);
      return;
    }
    // Written less than an interval ago: everything that happened since goes out at its end, in one
    // write (and one count over every member, instead of one per event).
    const coalesceMs = (this.#lastWrite.get(key) ?? 0) + this.#statusIntervalMs - Date.now();
    if (coalesceMs > 0) return { requeueAfterMs: coalesceMs, reason: 'coalesce' };
    const policy = this.#policies.current() ?? DEFAULT_POLICY;
    const ttlMs = durationMs(policy.grants.ttl);
    const now = new Date();
    const { drop, wakeAt, ttlAt } = await this.#toDrop(budget, ttlMs, now);
    const name = budgetName(target.kind, target.namespace, target.name);
    if (drop.length > 0) {
      const written = await this.#expire(target.resource, budget, drop);
      if (written) grantExpiryLines(name, drop).forEach((l) => this.#decisions.write(l));
      budget = written ?? budget;
    }
    const status = this.#compute(budget, now);
    if (budgetStatusChanged(budget, status)) {
      const written = await applyStatusOf(target.resource, budget, status, this.#mgr.status.fieldManager);
      this.#lastWrite.set(key, Date.now());
      if (written)
        for (const line of budgetStatusLines(name, budget.status, status)) this.#decisions.write(line);
    }
    this.#metrics.observe(
      target.kind,
      target.namespace,
      target.name,
      status,
      budget.status?.grants?.length ?? 0,
      ttlAt,
    );
    return wakeAt !== undefined
      ? { requeueAfterMs: Math.max(0, wakeAt - now.getTime()) + 100, reason: 'expiry' }
      : undefined;
  }

  #compute(budget: AnyBudget, now: Date): ComputedStatus {
    const world = { bmcOf: this.#bmcOf };
    if ('serverSelector' in budget.spec)
      return serverBudgetStatus(budget as ServerDisruptionBudget, this.#servers.list(), world, now);
    return claimBudgetStatus(
      budget as ServerClaimDisruptionBudget,
      this.#claims.list(budget.metadata.namespace),
      (n) => this.#servers.getByName(n),
      world,
      now,
    );
  }

  async #expire(
    resource: ResourceClient<AnyBudget>,
    budget: AnyBudget,
    drop: { entry: LedgerEntry; reason: ExpiryReason }[],
  ): Promise<AnyBudget | undefined> {
    // Compare-and-swap, through the same loop as the webhook's grants and the maintenance controller's
    // releases. An entry is removed only as it was decided on (same uid and grantedAt): a grant re-written
    // meanwhile is a different grant and stays.
    const ref = refOf(budget);
    const drops = asDecided(drop.map((d) => d.entry));
    const written = await compareAndSwap<AnyBudget | undefined>({
      store: this.#budgetStore,
      ref,
      attempts: 20,
      decide: (current) => {
        const next = current && withoutGrants(current, drops).next;
        return next ? { kind: 'write', next, then: (w) => w } : { kind: 'done', result: undefined };
      },
      lost: (attempt) => {
        this.#mgr.metrics.statusConflicts.inc({ resource: budgetPlural(ref) });
        return sleep(Math.random() * Math.min(1000, 25 * 2 ** attempt));
      },
      failed: (e, during) => {
        if (during === 'write' && isNotFound(e)) return undefined;
        throw e;
      },
      exhausted: (conflict) => {
        throw conflict;
      },
    });
    if (!written) return undefined;
    for (const { entry, reason } of drop) {
      this.#metrics.expired.inc({ kind: ref.kind, namespace: ref.namespace ?? '', budget: ref.name, reason });
      const why =
        reason === 'ttl'
          ? `its maintenance did not reach InMaintenance within the grant TTL`
          : `its maintenance has ended`;
      this.#mgr.events.normal(
        withTypeMeta(written, resource),
        'GrantExpired',
        'ExpireGrant',
        `dropped the grant of ${entry.maintenance.namespace}/${entry.maintenance.name} on server ${entry.server}: ${why}`,
      );
    }
    return written;
  }
}
