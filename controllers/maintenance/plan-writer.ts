// The maintenance controller's writes: a ServerPlan (decide/) executed as API writes, in the order
// decide/server.ts documents, with the write overlays that let the next reconcile see its own writes
// before the informers do. Everything but the InMaintenance attempt (admitter.ts).
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { ServerMaintenance, BudgetRef } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerBoot } from '../../api/maintenance/v1alpha1/serverboot.js';
import type { Manager } from '../../lib/kube/manager.js';
import { withoutManagedFields } from '../../lib/kube/informer.js';
import type { ResourceClient } from '../../lib/kube/client.js';
import { isAlreadyExists, isNotFound } from '../../lib/kube/errors.js';
import type { ApiBudgetStore } from '../../lib/kube/budget-store.js';
import { LEGACY_MMO_FINALIZER, MAINTENANCE_FINALIZER } from '../../contract/names.js';
import { refKey } from '../../contract/budgets.js';
import { uidOf } from '../../contract/lifecycle.js';
import { WriteOverlay } from '../shared/overlay.js';
import { budgetPlural } from '../shared/budget-informers.js';
import {
  addFinalizer,
  applyOwned,
  applyStatusOf,
  patchAnnotations,
  removeFinalizers,
} from '../shared/writes.js';
import { LedgerReleaser } from './releaser.js';
import { budgetLabels, type MaintenanceMetrics } from './metrics.js';
import type { ServerPlan, StatusWrite } from './decide/model.js';

export interface PlanWriterDeps {
  mgr: Manager;
  smClient: ResourceClient<ServerMaintenance>;
  serverClient: ResourceClient<Server>;
  bootClient: ResourceClient<ServerBoot>;
  budgetStore: ApiBudgetStore;
  metrics: MaintenanceMetrics;
  taintKey: string;
}

export class PlanWriter {
  readonly #d: PlanWriterDeps;
  /** Our newest writes, newer than the informers' copies until their watch events arrive. */
  readonly mOverlay = new WriteOverlay<ServerMaintenance>(withoutManagedFields);
  readonly sOverlay = new WriteOverlay<Server>(withoutManagedFields);
  /** uids whose last finalizer we removed: deleted, though the cache may not know yet. */
  readonly finalized = new Set<string>();
  /** budget key -> its batching releaser (one per budget the controller has released on). */
  readonly #releasers = new Map<string, LedgerReleaser>();

  constructor(deps: PlanWriterDeps) {
    this.#d = deps;
  }

  /**
   * The grants a running maintenance holds, counted once by budget when its status first records them
   * (the mirror of the ledger into status.grant): written grants that an admitted transition used.
   */
  #countUsed({ m, status }: StatusWrite): void {
    if (status.state !== 'InMaintenance') return;
    const before = new Set((m.status?.grant?.budgets ?? []).map(refKey));
    for (const ref of status.grant?.budgets ?? [])
      if (!before.has(refKey(ref))) this.#d.metrics.grantsUsed.inc(budgetLabels(ref));
  }

  /** A budget is gone: its releaser (and what it batched) with it. */
  forgetBudget(key: string): void {
    this.#releasers.delete(key);
  }

  /** Every write of the plan but the InMaintenance attempt, in the order decide/server.ts documents. */
  async write(server: Server | undefined, plan: ServerPlan): Promise<void> {
    const fm = this.#d.mgr.status.fieldManager;
    for (const m of plan.addFinalizer)
      this.mOverlay.wrote(await addFinalizer(this.#d.smClient, m, MAINTENANCE_FINALIZER, fm));
    // Taint first, untaint last (issue 29): a taint that goes on or changes hands is written before any
    // status that makes the placement rule refuse the server, and one that goes is removed after the
    // last of them, so metal-operator's binder, which honours the taint, never meets a server our
    // webhook refuses for maintenance without it.
    let current = server && (await this.#taintFirst(server, plan));
    for (const w of plan.statuses) {
      await this.writeStatus(w);
      this.#countUsed(w);
    }
    if (current) current = await this.#writeParkAndProjection(current, plan);
    // The holder is gone (deleted, or Completed while other finalizers keep it) before its grants go: a
    // slot is free only once nobody sees it InMaintenance, so a watcher never counts more than the
    // budget. A grant a crash leaves behind here belongs to an ended maintenance: the budget
    // controller drops it.
    for (const w of plan.completions) await this.writeStatus(w);
    for (const b of plan.deleteBoots) await this.#deleteBoot(b);
    for (const m of plan.removeFinalizer) await this.#removeFinalizer(m);
    if (current) await this.#untaintLast(current, plan);
    for (const { m, refs } of plan.releaseGrants) await this.release(m, refs, 'ended');
    for (const boot of plan.createBoots) await this.#createBoot(boot);
  }

  /**
   * Our taint with `value` (the holder's uid), or none: a compare-and-swap on the resourceVersion, as a
   * bind by metal-operator is, so exactly one of them wins (docs/proposals/ws1-cordon.md).
   */
  async #writeTaint(server: Server, value: string | undefined): Promise<Server> {
    const spec = value !== undefined ? { taints: [{ key: this.#d.taintKey, value, effect: 'NoBind' }] } : {};
    const base = this.sOverlay.fresh(server) ?? server;
    const written = await applyOwned(this.#d.serverClient, base, { spec }, this.#d.mgr.status.fieldManager, {
      cas: true,
    });
    this.sOverlay.wrote(written);
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
    const fm = this.#d.mgr.status.fieldManager;
    let current = server;
    if (plan.park) {
      current = (await patchAnnotations(this.#d.serverClient, current, { ...plan.park }, fm)) ?? current;
      this.sOverlay.wrote(current);
    }
    if (plan.projection) {
      const written = await applyStatusOf(
        this.#d.serverClient,
        current,
        { maintenance: plan.projection },
        fm,
      );
      this.sOverlay.wrote(written);
      current = written ?? current;
    }
    return current;
  }

  async #removeFinalizer(stale: ServerMaintenance): Promise<void> {
    // The status write just before moved its resourceVersion: use the copy that write returned.
    const m = this.mOverlay.fresh(stale) ?? stale;
    // metal-maintenance-operator's finalizer goes too: nobody else removes it once its controller is off.
    const written = await removeFinalizers(
      this.#d.smClient,
      m,
      [MAINTENANCE_FINALIZER, LEGACY_MMO_FINALIZER],
      this.#d.mgr.status.fieldManager,
    );
    this.mOverlay.forget(m.metadata);
    // Done with for good: until its delete event, a reconcile must not take the cached copy (with our
    // finalizer) and release, remove and announce it all over again.
    if (written) this.finalized.add(uidOf(m));
  }

  async writeStatus({ m, status }: StatusWrite): Promise<ServerMaintenance | undefined> {
    const written = await applyStatusOf(this.#d.smClient, m, status, this.#d.mgr.status.fieldManager);
    this.mOverlay.wrote(written);
    return written;
  }

  /**
   * Removes the grants of `m` from `refs`, counted by budget: `ended` for a maintenance that is done,
   * `refused` for one whose InMaintenance write was refused after a grant may have been written.
   */
  async release(
    m: ServerMaintenance,
    refs: readonly BudgetRef[],
    at: 'ended' | 'refused' | 'failed',
  ): Promise<void> {
    for (const ref of refs)
      if (await this.#releaserOf(ref).release(uidOf(m)))
        this.#d.metrics.grantsReleased.inc({ ...budgetLabels(ref), at });
  }

  /** The batching releaser of one budget's ledger (see releaser.ts). */
  #releaserOf(ref: BudgetRef): LedgerReleaser {
    const key = refKey(ref);
    let releaser = this.#releasers.get(key);
    if (releaser) return releaser;
    const resource = budgetPlural(ref);
    releaser = new LedgerReleaser(this.#d.budgetStore, ref, {
      onConflict: () => this.#d.mgr.metrics.statusConflicts.inc({ resource }),
    });
    this.#releasers.set(key, releaser);
    return releaser;
  }

  async #deleteBoot(boot: ServerBoot): Promise<void> {
    try {
      // Its finalizer restores the boot settings; we wait for the object to go before unparking.
      await this.#d.bootClient.delete(boot.metadata.name ?? '', {
        namespace: boot.metadata.namespace,
        preconditions: { uid: boot.metadata.uid },
      });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  async #createBoot(boot: ServerBoot): Promise<void> {
    try {
      await this.#d.bootClient.create(boot);
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  }
}
