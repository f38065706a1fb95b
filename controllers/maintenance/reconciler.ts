// The maintenance controller's edge: informers in, the plan of decide.ts out as API writes. One work
// queue keyed by server name; every event on a ServerMaintenance, its Server or a budget ledger that
// names it enqueues that server.
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
import { isAlreadyExists, isConflict, isNotFound } from '../../lib/kube/errors.js';
import type { PolicyStore } from '../../lib/policy/store.js';
import { DEFAULT_POLICY } from '../../policies/schema.js';
import { errorMessage } from '../../lib/errors.js';
import { ServerBootResource, ServerMaintenanceResource, ServerResource } from '../../lib/kube/kinds.js';
import { budgetInformers, budgetPlural, budgetStore, GRANT_INDEX } from '../shared/budget-informers.js';
import type { ApiBudgetStore } from '../../lib/kube/budget-store.js';
import {
  LEGACY_MMO_FINALIZER,
  MAINTENANCE_FINALIZER,
  MaintenanceConditions,
  qualified,
} from '../../contract/names.js';
import { DecisionLog } from '../../lib/log-sampling.js';
import { findCondition } from '../../contract/conditions.js';
import { BOOT_MAINTENANCE_UID_LABEL } from '../../contract/boot.js';
import { WriteOverlay } from '../shared/overlay.js';
import { admissionDenial, type AdmissionDenial } from '../shared/denial.js';
import { Codes } from '../../contract/codes.js';
import {
  addFinalizer,
  applyOwned,
  applyStatusOf,
  patchAnnotations,
  removeFinalizers,
  withTypeMeta,
} from '../shared/writes.js';
import { isDeleting, stateOf, uidOf } from '../../contract/lifecycle.js';
import {
  changedGrantServers,
  fullBudget,
  fullBudgetMessage,
  BUDGET_DENIALS,
  passesOnWokenSlot,
  slotsFreedByDomain,
  type WakeScope,
  type FullBudget,
} from './waiters.js';
import { MaintenanceMetrics, type StateSnapshot } from './metrics.js';
import { enteredStateAt } from './decide/classify.js';
import { parseTime } from '../../contract/time.js';
import { AdmissionWaits } from './admission-waits.js';
import { LedgerReleaser } from './releaser.js';
import { domainOf, serverUnavailableReason } from '../../contract/availability.js';
import { refKey, refOf, refOfKey, type AnyBudget } from '../../contract/budgets.js';
import { decideServer } from './decide/server.js';
import { deniedStatus } from './decide/queue.js';
import { statusChanged } from './decide/status.js';
import {
  type Attempt,
  type DecideOptions,
  type GrantHolding,
  type ServerPlan,
  type StatusWrite,
} from './decide/model.js';

const nameOf = (m: ServerMaintenance) => qualified(m.metadata.namespace, m.metadata.name);

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

/** When a maintenance held back for the first time looks again (no write, no admission review). */
const HELD_BACK_RECHECK_MS = 2_000;

/** Rounds of follow-up in one reconcile after an admission (taint, park, projection at once). */
const MAX_PASSES = 3;

/** A maintenance whose next step a slot waits for: running, or deleted and being undone. */
const runsOrUndoes = (m: ServerMaintenance) => isDeleting(m) || stateOf(m) === 'InMaintenance';
/** A budget's refKey, as the webhook's denials name it. */
const budgetKeyOf = (b: AnyBudget) => refKey(refOf(b));

export class MaintenanceReconciler {
  readonly #mgr: Manager;
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
  readonly #bootClient: ResourceClient<ServerBoot>;
  readonly #mOverlay = new WriteOverlay<ServerMaintenance>(withoutManagedFields);
  readonly #sOverlay = new WriteOverlay<Server>(withoutManagedFields);
  /** budget key -> its batching releaser (one per budget the controller has released on). */
  readonly #releasers = new Map<string, LedgerReleaser>();
  readonly #budgetStore: ApiBudgetStore;
  /** uids whose last finalizer we removed: deleted, though the cache may not know yet. */
  readonly #finalized = new Set<string>();
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
      indexers: { server: (m) => [m.spec.serverRef.name] },
      transform,
    });
    this.#servers = mgr.informer<Server>(ServerResource, { transform });
    const budgets = budgetInformers(mgr);
    ({ sdbs: this.#sdbs, scdbs: this.#scdbs } = budgets);
    this.#budgetStore = budgetStore(mgr, budgets);
    // ServerBoots made from spec.boot carry their maintenance's uid as a label.
    this.#boots = mgr.informer<ServerBoot>(ServerBootResource, {
      labelSelector: BOOT_MAINTENANCE_UID_LABEL,
      indexers: { maintenance: (b) => [b.metadata.labels?.[BOOT_MAINTENANCE_UID_LABEL] ?? ''] },
      transform,
    });
    this.#smClient = mgr.client.resource<ServerMaintenance>(ServerMaintenanceResource);
    this.#serverClient = mgr.client.resource<Server>(ServerResource);
    this.#bootClient = mgr.client.resource<ServerBoot>(ServerBootResource);
    this.#metrics = new MaintenanceMetrics(mgr.registry, () => this.#byState());
    const controller = mgr.controller({
      name: 'maintenance',
      workers: options.workers,
      reconcile: (key) => this.reconcile(key),
    });
    this.#enqueue = (server, urgent = false) => controller.enqueue(server, { urgent });
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
        this.#mOverlay.forget(m.metadata);
        this.#finalized.delete(uidOf(m));
        this.#waits.forget(uidOf(m));
        this.#holderGone(m.spec.serverRef.name);
        this.#enqueue(m.spec.serverRef.name, true);
      },
    });
    this.#servers.on({
      add: (s) => this.#enqueue(s.metadata.name ?? ''),
      update: (_o, s) => this.#enqueue(s.metadata.name ?? '', this.#holding(s.metadata.name ?? '')),
      delete: (s) => {
        this.#sOverlay.forget(s.metadata);
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
      if (!after) this.#wake(this.#waits.waiters.waitingFor({ budget }), { budget });
      else if (before)
        for (const { domain, freed } of slotsFreedByDomain(before, after))
          this.#wake(freed, domain === undefined ? { budget } : { budget, domain });
    };
    for (const inf of [this.#sdbs, this.#scdbs] as Informer<AnyBudget>[]) {
      inf.on({
        add: (b) => onBudget(undefined, b),
        update: (o, b) => onBudget(o, b),
        delete: (b) => {
          this.#releasers.delete(budgetKeyOf(b));
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

  #wake(n: number, scope: WakeScope & { budget: string }): void {
    if (n <= 0) return;
    for (const server of this.#waits.waiters.take(n, scope)) {
      for (const m of this.#maintenances.byIndex('server', server)) this.#waits.woken(uidOf(m), scope.budget);
      this.#enqueue(server, true);
    }
    this.#metrics.budgetWaiters.set(this.#waits.waiters.size);
  }

  /** The server's topology domain in a budget (refKey): "" for claim budgets and those without a key. */
  #domainIn(budget: string, server: string): string {
    const ref = refOfKey(budget);
    const sdb = ref?.kind === 'ServerDisruptionBudget' ? this.#sdbs.getByName(ref.name) : undefined;
    const labelled = sdb?.spec.topologyKey ? this.#servers.getByName(server) : undefined;
    return labelled ? domainOf(labelled, sdb?.spec.topologyKey) : '';
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
    let server = this.#sOverlay.fresh(this.#servers.getByName(serverName));
    const maintenances = this.#maintenances
      .byIndex('server', serverName)
      .filter((m) => !this.#finalized.has(uidOf(m)))
      .map((m) => this.#mOverlay.fresh(m)!);
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
    const fm = this.#mgr.status.fieldManager;
    for (const m of plan.addFinalizer)
      this.#mOverlay.wrote(await addFinalizer(this.#smClient, m, MAINTENANCE_FINALIZER, fm));
    // Taint first, untaint last (issue 29): a taint that goes on or changes hands is written before any
    // status that makes the placement rule refuse the server, and one that goes is removed after the
    // last of them, so metal-operator's binder, which honours the taint, never meets a server our
    // webhook refuses for maintenance without it.
    let current = server && (await this.#taintFirst(server, plan));
    for (const w of plan.statuses) await this.#writeStatus(w);
    if (current) current = await this.#writeParkAndProjection(current, plan);
    // The holder is gone (deleted, or Completed while other finalizers keep it) before its grants go: a
    // slot is free only once nobody sees it InMaintenance, so a watcher never counts more than the
    // budget. A grant a crash leaves behind here belongs to an ended maintenance: the budget
    // controller drops it.
    for (const w of plan.completions) await this.#writeStatus(w);
    for (const b of plan.deleteBoots) await this.#deleteBoot(b);
    for (const m of plan.removeFinalizer) await this.#removeFinalizer(m);
    if (current) await this.#untaintLast(current, plan);
    for (const { m, refs } of plan.releaseGrants) await this.#release(m, refs);
    for (const boot of plan.createBoots) await this.#createBoot(boot);
    this.#record(plan);
    if (plan.attempt) {
      const again = await this.#attempt(serverName, plan.attempt);
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

  /**
   * Our taint with `value` (the holder's uid), or none: a compare-and-swap on the resourceVersion, as a
   * bind by metal-operator is, so exactly one of them wins (docs/proposals/ws1-cordon.md).
   */
  async #writeTaint(server: Server, value: string | undefined): Promise<Server> {
    const spec = value !== undefined ? { taints: [{ key: this.#o.taintKey, value, effect: 'NoBind' }] } : {};
    const base = this.#sOverlay.fresh(server) ?? server;
    const written = await applyOwned(this.#serverClient, base, { spec }, this.#mgr.status.fieldManager, {
      cas: true,
    });
    this.#sOverlay.wrote(written);
    return written ?? base;
  }

  /** A taint the plan puts on or hands on, before anything else; returns the newest copy of the server. */
  async #taintFirst(server: Server, plan: ServerPlan): Promise<Server> {
    const value = plan.taint?.value;
    return value !== undefined ? this.#writeTaint(server, value) : server;
  }

  /** A taint the plan removes, after every other write. */
  async #untaintLast(server: Server, plan: ServerPlan): Promise<void> {
    if (plan.taint && plan.taint.value === undefined) await this.#writeTaint(server, undefined);
  }

  /** The park request, then the projection; returns the newest copy of the server. */
  async #writeParkAndProjection(server: Server, plan: ServerPlan): Promise<Server> {
    const fm = this.#mgr.status.fieldManager;
    let current = server;
    if (plan.park) {
      current = (await patchAnnotations(this.#serverClient, current, { ...plan.park }, fm)) ?? current;
      this.#sOverlay.wrote(current);
    }
    if (plan.projection) {
      const written = await applyStatusOf(this.#serverClient, current, { maintenance: plan.projection }, fm);
      this.#sOverlay.wrote(written);
      current = written ?? current;
    }
    return current;
  }

  async #removeFinalizer(stale: ServerMaintenance): Promise<void> {
    // The status write just before moved its resourceVersion: use the copy that write returned.
    const m = this.#mOverlay.fresh(stale) ?? stale;
    // metal-maintenance-operator's finalizer goes too: nobody else removes it once its controller is off.
    const written = await removeFinalizers(
      this.#smClient,
      m,
      [MAINTENANCE_FINALIZER, LEGACY_MMO_FINALIZER],
      this.#mgr.status.fieldManager,
    );
    this.#mOverlay.forget(m.metadata);
    // Done with for good: until its delete event, a reconcile must not take the cached copy (with our
    // finalizer) and release, remove and announce it all over again.
    if (written) this.#finalized.add(uidOf(m));
  }

  async #writeStatus({ m, status }: StatusWrite): Promise<ServerMaintenance | undefined> {
    const written = await applyStatusOf(this.#smClient, m, status, this.#mgr.status.fieldManager);
    this.#mOverlay.wrote(written);
    return written;
  }

  async #release(m: ServerMaintenance, refs: readonly BudgetRef[]): Promise<void> {
    for (const ref of refs)
      if (await this.#releaserOf(ref).release(uidOf(m))) this.#metrics.grantsReleased.inc();
  }

  /** The batching releaser of one budget's ledger (see releaser.ts). */
  #releaserOf(ref: BudgetRef): LedgerReleaser {
    const key = refKey(ref);
    let releaser = this.#releasers.get(key);
    if (releaser) return releaser;
    const resource = budgetPlural(ref);
    releaser = new LedgerReleaser(this.#budgetStore, ref, {
      onConflict: () => this.#mgr.metrics.statusConflicts.inc({ resource }),
    });
    this.#releasers.set(key, releaser);
    return releaser;
  }

  async #deleteBoot(boot: ServerBoot): Promise<void> {
    try {
      // Its finalizer restores the boot settings; we wait for the object to go before unparking.
      await this.#bootClient.delete(boot.metadata.name ?? '', {
        namespace: boot.metadata.namespace,
        preconditions: { uid: boot.metadata.uid },
      });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  async #createBoot(boot: ServerBoot): Promise<void> {
    try {
      await this.#bootClient.create(boot);
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
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
          { maintenance: nameOf(t.m), from: t.from, reason: reason ?? 'Unknown' },
          `maintenance failed: ${reason ?? 'Unknown'}`,
        );
      }
    }
    for (const e of plan.events) {
      const target = e.m ? withTypeMeta(e.m, this.#smClient) : undefined;
      if (target) this.#mgr.events.record(target, e.type, e.reason, e.action, e.note);
    }
  }

  #logAdmitted(server: string, m: ServerMaintenance): void {
    const approval = m.status?.approval?.source ?? 'NotRequired';
    this.#decisions.info(
      'Admitted',
      { server, maintenance: nameOf(m), approval },
      'maintenance admitted: InMaintenance',
    );
  }

  /** Tries the InMaintenance transition; returns a requeue delay, or undefined to use the plan's. */
  async #attempt(serverName: string, attempt: Attempt): Promise<{ ms: number; reason: string } | undefined> {
    const { m, status } = attempt;
    const full = this.#heldBackBy(serverName, uidOf(m));
    if (full) {
      this.#metrics.attempts.inc({ result: 'held-back' });
      const waits = await this.#denied(serverName, attempt, {
        code: full.paused ? Codes.BUDGET_PAUSED : Codes.BUDGET_EXHAUSTED,
        reason: full.paused ? 'BudgetPaused' : 'BudgetExhausted',
        message: fullBudgetMessage(full),
        retryAfterMs: undefined,
        budget: refKey({ kind: 'ServerDisruptionBudget', name: full.name }),
      });
      if (this.#waits.heldBack(uidOf(m)) !== 1) return waits;
      // The first hold-back looks again soon: our copy of the server may be behind the budget's count
      // (a server cordoned a moment ago already counts as unavailable there, and the webhook admits it).
      this.#waits.backOff(uidOf(m), Date.now() + HELD_BACK_RECHECK_MS);
      return { ms: HELD_BACK_RECHECK_MS, reason: waits.reason };
    }
    this.#waits.asked(uidOf(m));
    try {
      const written = await this.#writeStatus({ m, status });
      if (!written) return undefined;
      this.#metrics.attempts.inc({ result: 'admitted' });
      this.#waits.forget(uidOf(m));
      this.#waits.waiters.remove(serverName);
      this.#metrics.budgetWaiters.set(this.#waits.waiters.size);
      if (attempt.enteredAt !== undefined)
        this.#metrics.timeInState.observe(
          { state: attempt.from },
          Math.max(0, (Date.now() - attempt.enteredAt) / 1000),
        );
      this.#mgr.events.normal(
        withTypeMeta(written, this.#smClient),
        'Started',
        'Start',
        `InMaintenance on server ${serverName} (approval: ${m.status?.approval?.source ?? 'NotRequired'})` +
          (this.#o.parkMode === 'annotation' ? '; asking metal-operator to park it' : ''),
      );
      this.#logAdmitted(serverName, m);
      // Look again at once: the taint value, park request and projection follow the new holder.
      return { ms: 0, reason: 'admitted' };
    } catch (e) {
      const denial = admissionDenial(e);
      if (!denial) {
        this.#metrics.attempts.inc({ result: 'error' });
        throw e;
      }
      this.#metrics.attempts.inc({ result: 'denied' });
      return this.#denied(serverName, attempt, denial);
    }
  }

  /**
   * The full budget this attempt waits for without asking the webhook (see fullBudget), or undefined.
   * A server unavailable already is never held back (the webhook admits it without room), and after
   * HELD_BACK_MAX (admission-waits.ts) hold-backs in a row the webhook is asked anyway: a cache that is wrong in a way we
   * cannot see (a BMC outage this controller does not watch) delays a maintenance, it does not strand it.
   */
  #heldBackBy(serverName: string, uid: string): FullBudget | undefined {
    const server = this.#servers.getByName(serverName);
    if (!server || serverUnavailableReason(server)) return undefined;
    const full = fullBudget(this.#sdbs.list(), server.metadata.labels, uid);
    if (!full) return undefined;
    return this.#waits.holdBack(uid) ? full : undefined;
  }

  /** A refusal (the webhook's, or the cache's prediction of it): the waiting status, backoff, waiters. */
  async #denied(
    serverName: string,
    attempt: Attempt,
    denial: Pick<AdmissionDenial, 'code' | 'reason' | 'message' | 'retryAfterMs' | 'budget'>,
  ): Promise<{ ms: number; reason: string }> {
    const { m } = attempt;
    this.#metrics.denied.inc({ reason: denial.reason });
    const budget = BUDGET_DENIALS.has(denial.reason);
    const wokenBy = this.#waits.wokenBy(uidOf(m));
    const delay = Math.min(this.#o.maxBackoffMs, this.#waits.waitAfterDenial(uidOf(m), denial));
    this.#waits.backOff(uidOf(m), Date.now() + delay);
    if (budget)
      this.#waits.waiters.add(
        serverName,
        m,
        denial.budget,
        denial.budget !== undefined ? this.#domainIn(denial.budget, serverName) : undefined,
      );
    // Woken for a slot it cannot use: the next waiter of that budget gets it, now rather than at its timer.
    if (wokenBy !== undefined && passesOnWokenSlot(wokenBy, denial))
      this.#wake(1, { budget: wokenBy, domain: this.#domainIn(wokenBy, serverName) });
    this.#metrics.budgetWaiters.set(this.#waits.waiters.size);
    await this.#recordDenial(attempt, denial.reason, denial.message);
    this.#mgr.logger.debug(
      { server: serverName, maintenance: m.metadata.name, code: denial.code, delay },
      'InMaintenance denied',
    );
    return { ms: delay, reason: budget ? 'denied-budget' : 'denied' };
  }

  async #recordDenial(attempt: Attempt, reason: string, message: string): Promise<void> {
    const { m } = attempt;
    // The same refusal again keeps the condition as it is: its figures (in use, allowed) move with every
    // grant and release, and rewriting them was a status write per retry of every waiting maintenance.
    // The Event and the condition say since when and why; the figures are those of the first refusal.
    const current = findCondition(m.status?.conditions, MaintenanceConditions.Admitted);
    const repeated = current?.status === 'False' && current.reason === reason;
    const next = deniedStatus(attempt, reason, repeated ? current.message : message, new Date());
    if (!statusChanged(m, next)) return;
    try {
      await this.#writeStatus({ m, status: next });
    } catch (e) {
      this.#mgr.logger.warn(
        { maintenance: m.metadata.name, err: errorMessage(e) },
        'could not record the denial',
      );
    }
    // An Event and an info line per transition, not per retry.
    if (repeated) return;
    this.#mgr.events.warning(withTypeMeta(m, this.#smClient), reason, 'Start', message);
    const waiting = BUDGET_DENIALS.has(reason) ? 'waiting for budget' : 'waiting to start';
    this.#decisions.info(
      reason,
      { maintenance: nameOf(m), reason, message },
      `maintenance ${waiting}: ${reason}`,
    );
  }
}
