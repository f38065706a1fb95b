// The maintenance controller's edge: informers in, the plan of decide/ out as API writes (plan-writer.ts)
// and the InMaintenance attempt (admitter.ts). One work queue keyed by server name; every event on a
// ServerMaintenance, its Server or a budget ledger that names it enqueues that server, and the events
// that end a wait (a holder leaving, a budget freeing slots, a policy change) wake its waiters.
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type {
  ServerMaintenance,
  BudgetRef,
  LedgerEntry,
} from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import type { ServerBoot } from '../../api/maintenance/v1alpha1/serverboot.js';
import type { Manager } from '../../lib/kube/manager.js';
import { withoutManagedFields, type Informer } from '../../lib/kube/informer.js';
import type { ResourceClient } from '../../lib/kube/client.js';
import type { ReconcileResult } from '../../lib/kube/controller.js';
import { isConflict } from '../../lib/kube/errors.js';
import type { PolicyStore } from '../../lib/policy/store.js';
import { DEFAULT_POLICY } from '../../policies/schema.js';
import { errorMessage } from '../../lib/errors.js';
import { ServerBootResource, ServerMaintenanceResource, ServerResource } from '../../lib/kube/kinds.js';
import { budgetInformers, budgetStore, GRANT_INDEX } from '../shared/budget-informers.js';
import { BOOT_MAINTENANCE_UID_LABEL } from '../../contract/boot.js';
import { withTypeMeta } from '../shared/writes.js';
import { isDeleting, stateOf, uidOf } from '../../contract/lifecycle.js';
import { qualified } from '../../contract/names.js';
import { DecisionLog } from '../../lib/log-sampling.js';
import { budgetRoom, changedGrantServers, slotsFreedByDomain } from './waiters.js';
import { MaintenanceMetrics, type StateSnapshot } from './metrics.js';
import { enteredStateAt } from './decide/classify.js';
import { parseTime } from '../../contract/time.js';
import { AdmissionWaits } from './admission-waits.js';
import { PlanWriter } from './plan-writer.js';
import { Admitter } from './admitter.js';
import { GANG_INDEX, gangIndexKey } from './gang.js';
import { refKey, refOf, type AnyBudget } from '../../contract/budgets.js';
import { decideServer } from './decide/server.js';
import { type DecideOptions, type GrantHolding, type ServerPlan } from './decide/model.js';

/** The grant `uid` holds in each of `budgets`, under the reference `refOf` gives its budget. */
function holdings<B extends AnyBudget>(
  budgets: readonly B[],
  uid: string,
  refOf: (budget: B, grant: LedgerEntry) => BudgetRef,
): GrantHolding[] {
  const held: GrantHolding[] = [];
  for (const b of budgets) {
    const g = b.status?.grants?.find((x) => x.maintenanceUID === uid);
    if (g) held.push({ ref: refOf(b, g), grantedAt: g.grantedAt });
  }
  return held;
}

export interface MaintenanceControllerOptions extends DecideOptions {
  workers: number;
  /** Upper bound of the backoff taken from a denial's retry hint. */
  maxBackoffMs: number;
}

/** Rounds of follow-up in one reconcile after an admission (taint, park, projection at once). */
const MAX_PASSES = 3;

/** A maintenance whose next step a slot waits for: running, or deleted and being undone. */
const runsOrUndoes = (m: ServerMaintenance) => isDeleting(m) || stateOf(m) === 'InMaintenance';
/** A budget's refKey, as the webhook's denials name it. */
const budgetKeyOf = (b: AnyBudget) => refKey(refOf(b));

export class MaintenanceReconciler {
  readonly #mgr: Manager;
  /** The decisions an operator looks for at info, sampled like the webhook's denials. */
  readonly #decisions: DecisionLog;
  readonly #policies: PolicyStore;
  readonly #o: MaintenanceControllerOptions;
  readonly #maintenances: Informer<ServerMaintenance>;
  readonly #servers: Informer<Server>;
  readonly #sdbs: Informer<ServerDisruptionBudget>;
  readonly #scdbs: Informer<ServerClaimDisruptionBudget>;
  readonly #boots: Informer<ServerBoot>;
  readonly #smClient: ResourceClient<ServerMaintenance>;
  readonly #serverClient: ResourceClient<Server>;
  readonly #writer: PlanWriter;
  readonly #admitter: Admitter;
  readonly #waits = new AdmissionWaits();
  readonly #metrics: MaintenanceMetrics;
  readonly #enqueue: (server: string, urgent?: boolean) => void;

  constructor(mgr: Manager, policies: PolicyStore, options: MaintenanceControllerOptions) {
    this.#mgr = mgr;
    this.#decisions = new DecisionLog(mgr.logger);
    this.#policies = policies;
    this.#o = options;
    // No reader of these caches needs managedFields (a third of a Server's bytes or more).
    const transform = withoutManagedFields;
    this.#maintenances = mgr.informer<ServerMaintenance>(ServerMaintenanceResource, {
      indexers: { server: (m) => [m.spec.serverRef.name], [GANG_INDEX]: gangIndexKey },
      transform,
    });
    this.#servers = mgr.informer<Server>(ServerResource, { transform });
    const budgets = budgetInformers(mgr);
    ({ sdbs: this.#sdbs, scdbs: this.#scdbs } = budgets);
    // ServerBoots made from spec.boot carry their maintenance's uid as a label.
    this.#boots = mgr.informer<ServerBoot>(ServerBootResource, {
      labelSelector: BOOT_MAINTENANCE_UID_LABEL,
      indexers: { maintenance: (b) => [b.metadata.labels?.[BOOT_MAINTENANCE_UID_LABEL] ?? ''] },
      transform,
    });
    this.#smClient = mgr.client.resource<ServerMaintenance>(ServerMaintenanceResource);
    this.#serverClient = mgr.client.resource<Server>(ServerResource);
    this.#metrics = new MaintenanceMetrics(mgr.registry, () => this.#byState());
    const controller = mgr.controller({
      name: 'maintenance',
      workers: options.workers,
      reconcile: (key) => this.reconcile(key),
    });
    this.#enqueue = (server, urgent = false) => controller.enqueue(server, { urgent });
    this.#writer = new PlanWriter({
      mgr,
      smClient: this.#smClient,
      serverClient: this.#serverClient,
      bootClient: mgr.client.resource<ServerBoot>(ServerBootResource),
      budgetStore: budgetStore(mgr, budgets),
      metrics: this.#metrics,
      taintKey: options.taintKey,
    });
    this.#admitter = new Admitter({
      mgr,
      options,
      maintenances: this.#maintenances,
      servers: this.#servers,
      sdbs: this.#sdbs,
      scdbs: this.#scdbs,
      smClient: this.#smClient,
      writer: this.#writer,
      waits: this.#waits,
      metrics: this.#metrics,
      enqueue: this.#enqueue,
    });
    this.#wire();
  }

  /**
   * Whether a server's next step is one a slot or a person waits for: it has a maintenance running or
   * being undone. Those go ahead of the routine looks at waiting ones (a timer firing for hundreds of
   * budget waiters at once must not delay a park, an unpark or a release by seconds).
   */
  #holding(server: string): boolean {
    return this.#maintenances.byIndex('server', server).some(runsOrUndoes);
  }

  #wire(): void {
    const enqueueM = (m: ServerMaintenance) => this.#enqueue(m.spec.serverRef.name, runsOrUndoes(m));
    this.#maintenances.on({
      add: enqueueM,
      update: (o, m) => {
        if (stateOf(o) === 'InMaintenance' && stateOf(m) !== 'InMaintenance')
          this.#holderGone(m.spec.serverRef.name);
        enqueueM(m);
      },
      delete: (m) => {
        this.#writer.mOverlay.forget(m.metadata);
        this.#writer.finalized.delete(uidOf(m));
        this.#waits.forget(uidOf(m));
        this.#holderGone(m.spec.serverRef.name);
        this.#enqueue(m.spec.serverRef.name, true);
      },
    });
    this.#servers.on({
      add: (s) => this.#enqueue(s.metadata.name ?? ''),
      update: (_o, s) => this.#enqueue(s.metadata.name ?? '', this.#holding(s.metadata.name ?? '')),
      delete: (s) => {
        this.#writer.sOverlay.forget(s.metadata);
        this.#enqueue(s.metadata.name ?? '');
      },
    });
    const onBudget = (before: AnyBudget | undefined, after: AnyBudget | undefined) => {
      // Ledger entries are mirrored into status.grant and released by the finalizer: the servers whose
      // entries came, went or changed look again; the others' did not move (a budget update is every
      // grant, release and status write: enqueueing every holder on each was O(K) work per event).
      for (const s of changedGrantServers(before, after))
        if (this.#maintenances.byIndex('server', s).length > 0) this.#enqueue(s);
      const budget = budgetKeyOf((after ?? before)!);
      // A deleted budget limits nobody any more: every waiter it refused looks again.
      if (!after) this.#admitter.wake(this.#waits.waiters.waitingFor({ budget }), { budget });
      else if (before)
        for (const { domain, freed } of slotsFreedByDomain(before, after))
          this.#admitter.wake(
            freed,
            domain === undefined ? { budget } : { budget, domain },
            budgetRoom(after),
          );
    };
    for (const inf of [this.#sdbs, this.#scdbs] as Informer<AnyBudget>[]) {
      inf.on({
        add: (b) => onBudget(undefined, b),
        update: (o, b) => onBudget(o, b),
        delete: (b) => {
          this.#writer.forgetBudget(budgetKeyOf(b));
          onBudget(b, undefined);
        },
      });
    }
    const onBoot = (b: ServerBoot) => this.#enqueue(b.spec.serverRef.name);
    this.#boots.on({ add: onBoot, update: (_o, b) => onBoot(b), delete: onBoot });
    this.#policies.onChange(() => {
      // Timeouts, windows or approval rules may have changed: every waiting maintenance looks again now.
      this.#waits.clearBackoff();
      for (const m of this.#maintenances.list()) enqueueM(m);
    });
  }

  /** A holder of `server` left: the maintenances waiting on it need not wait out any backoff. */
  #holderGone(server: string): void {
    this.#waits.holderGone(this.#maintenances.byIndex('server', server));
  }

  #byState(): StateSnapshot {
    const counts: Record<string, number> = {
      Pending: 0,
      Announced: 0,
      Approved: 0,
      InMaintenance: 0,
      Failed: 0,
      Deleting: 0,
    };
    const oldestSeconds: Record<string, number> = { ...counts };
    const now = Date.now();
    for (const m of this.#maintenances.list()) {
      const state = isDeleting(m) ? 'Deleting' : stateOf(m);
      counts[state] = (counts[state] ?? 0) + 1;
      const since = isDeleting(m) ? parseTime(m.metadata.deletionTimestamp) : enteredStateAt(m);
      if (since !== undefined)
        oldestSeconds[state] = Math.max(oldestSeconds[state] ?? 0, Math.max(0, (now - since) / 1000));
    }
    return { counts, oldestSeconds };
  }

  #grants(maintenances: readonly ServerMaintenance[]): Map<string, GrantHolding[]> {
    const out = new Map<string, GrantHolding[]>();
    for (const m of maintenances) {
      const uid = uidOf(m);
      const held = [
        ...holdings(this.#sdbs.byIndex(GRANT_INDEX, uid), uid, (b, g) => ({
          kind: 'ServerDisruptionBudget',
          name: b.metadata.name ?? '',
          ...(g.domain ? { domain: g.domain } : {}),
        })),
        ...holdings(this.#scdbs.byIndex(GRANT_INDEX, uid), uid, (b) => ({
          kind: 'ServerClaimDisruptionBudget',
          namespace: b.metadata.namespace ?? '',
          name: b.metadata.name ?? '',
        })),
      ];
      if (held.length > 0) out.set(uid, held);
    }
    return out;
  }

  #bootsOf(maintenances: readonly ServerMaintenance[]): Map<string, ServerBoot> {
    const out = new Map<string, ServerBoot>();
    for (const m of maintenances) {
      const boot = this.#boots.byIndex('maintenance', uidOf(m))[0];
      if (boot) out.set(uidOf(m), boot);
    }
    return out;
  }

  /**
   * Decides and writes; after an admission it decides again at once (the taint value, park request and
   * projection follow the new holder) instead of requeueing behind every other server: that step is on
   * the path of every maintenance, and under load a requeue waits seconds in the queue.
   */
  async reconcile(serverName: string): Promise<ReconcileResult | void> {
    let result = await this.#reconcileOnce(serverName);
    for (let pass = 1; pass < MAX_PASSES && result?.reason === 'admitted'; pass++)
      result = await this.#reconcileOnce(serverName);
    return result;
  }

  async #reconcileOnce(serverName: string): Promise<ReconcileResult | void> {
    const policy = this.#policies.current() ?? DEFAULT_POLICY;
    let server = this.#writer.sOverlay.fresh(this.#servers.getByName(serverName));
    const maintenances = this.#maintenances
      .byIndex('server', serverName)
      .filter((m) => !this.#writer.finalized.has(uidOf(m)))
      .map((m) => this.#writer.mOverlay.fresh(m)!);
    // A server missing from the cache is confirmed gone with a fresh read before its maintenance fails.
    let serverGone = false;
    if (!server && maintenances.some((m) => stateOf(m) === 'InMaintenance' && !isDeleting(m))) {
      server = await this.#serverClient.find(serverName);
      serverGone = !server;
    }
    if (maintenances.length === 0) this.#waits.waiters.remove(serverName);
    const plan = decideServer({
      serverName,
      server,
      serverGone,
      maintenances,
      grants: this.#grants(maintenances),
      boots: this.#bootsOf(maintenances),
      policy,
      now: new Date(),
      options: this.#o,
      backoff: this.#waits.backoff,
    });
    try {
      return await this.#execute(serverName, server, plan);
    } catch (e) {
      // A compare-and-swap lost to another writer (the taint against a bind or metal-operator's write, a
      // finalizer list that moved): nothing is wrong, the next look decides from the newer object.
      if (!isConflict(e)) throw e;
      this.#mgr.metrics.statusConflicts.inc({ resource: 'servers' });
      this.#mgr.logger.debug(
        { server: serverName, err: errorMessage(e) },
        'write lost a compare-and-swap; looking again',
      );
      return { requeueAfterMs: 100, reason: 'conflict' };
    }
  }

  async #execute(
    serverName: string,
    server: Server | undefined,
    plan: ServerPlan,
  ): Promise<ReconcileResult | void> {
    await this.#writer.write(server, plan);
    this.#record(plan);
    if (plan.attempt) {
      const again = await this.#admitter.attempt(serverName, plan.attempt);
      if (again !== undefined)
        return {
          requeueAfterMs: Math.min(again.ms, plan.requeueAfterMs ?? Infinity),
          reason: again.reason,
        };
    }
    return plan.requeueAfterMs !== undefined
      ? { requeueAfterMs: plan.requeueAfterMs + 50, reason: 'timer' }
      : undefined;
  }

  #record(plan: ServerPlan): void {
    for (const t of plan.transitions) {
      if (t.enteredAt !== undefined)
        this.#metrics.timeInState.observe({ state: t.from }, Math.max(0, (Date.now() - t.enteredAt) / 1000));
      if (t.to === 'Failed') {
        const reason = plan.statuses
          .find((w) => w.m === t.m)
          ?.status.conditions.find((c) => c.type === 'Failed')?.reason;
        this.#metrics.failed.inc({ reason: reason ?? 'Unknown' });
        this.#decisions.warn(
          'Failed',
          {
            maintenance: qualified(t.m.metadata.namespace, t.m.metadata.name),
            from: t.from,
            reason: reason ?? 'Unknown',
          },
          `maintenance failed: ${reason ?? 'Unknown'}`,
        );
      }
    }
    for (const e of plan.events) {
      const target = e.m ? withTypeMeta(e.m, this.#smClient) : undefined;
      if (target) this.#mgr.events.record(target, e.type, e.reason, e.action, e.note);
    }
  }
}
