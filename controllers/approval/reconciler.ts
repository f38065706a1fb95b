// The approval controller's edge. Two work queues in one process:
// - announce, keyed by claim (namespace/name): writes ServerClaim status.maintenance.announcements and
//   the legacy maintenance-needed label;
// - approve, keyed by maintenance (namespace/name): writes the approval fields of ServerMaintenance
//   status (announcedAt, notBefore, deadline, approval, conditions Announced/Approved).
// Both read the claim through one write overlay, so an approval decided right after an announcement
// sees that announcement even before the watch delivers it.
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { ApprovalSource, ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { Manager } from '../../lib/kube/manager.js';
import { withoutManagedFields, type Informer } from '../../lib/kube/informer.js';
import type { ResourceClient } from '../../lib/kube/client.js';
import type { Controller, ReconcileResult } from '../../lib/kube/controller.js';
import { objectKey, splitKey } from '../../lib/kube/resources.js';
import type { PolicyStore } from '../../lib/policy/store.js';
import { DEFAULT_POLICY } from '../../policies/schema.js';
import { ServerClaimResource, ServerMaintenanceResource, ServerResource } from '../../lib/kube/kinds.js';
import { WriteOverlay } from '../shared/overlay.js';
import { applyOwned, applyStatusOf, withTypeMeta } from '../shared/writes.js';
import { decideApproval, decideClaim, type ApprovalStatus, type ClaimPlan } from './decide.js';
import { ApprovalMetrics } from './metrics.js';
import { claimForCache, ownsLabel, sameBinding, serverBinding } from './cache-shape.js';
import { LEGACY_NEEDED_LABEL } from '../../contract/legacy-labels.js';
import { DecisionLog } from '../../lib/log-sampling.js';
import { approvalDecisionLines } from './decision-log.js';

export interface ApprovalControllerOptions {
  workers: number;
}

export class ApprovalReconciler {
  readonly #mgr: Manager;
  readonly #policies: PolicyStore;
  readonly #maintenances: Informer<ServerMaintenance>;
  readonly #servers: Informer<Server>;
  readonly #claims: Informer<ServerClaim>;
  readonly #claimClient: ResourceClient<ServerClaim>;
  readonly #smClient: ResourceClient<ServerMaintenance>;
  readonly #claimOverlay: WriteOverlay<ServerClaim>;
  readonly #mOverlay = new WriteOverlay<ServerMaintenance>(withoutManagedFields);
  readonly #announce: Controller;
  readonly #approve: Controller;
  readonly #metrics: ApprovalMetrics;
  readonly #decisions: DecisionLog;

  constructor(mgr: Manager, policies: PolicyStore, options: ApprovalControllerOptions) {
    this.#mgr = mgr;
    this.#decisions = new DecisionLog(mgr.logger);
    this.#policies = policies;
    this.#maintenances = mgr.informer<ServerMaintenance>(ServerMaintenanceResource, {
      indexers: { server: (m) => [m.spec.serverRef.name] },
      transform: withoutManagedFields,
    });
    this.#servers = mgr.informer<Server>(ServerResource, { transform: serverBinding });
    const claimShape = claimForCache(mgr.status.fieldManager);
    this.#claims = mgr.informer<ServerClaim>(ServerClaimResource, { transform: claimShape });
    this.#claimOverlay = new WriteOverlay<ServerClaim>(claimShape);
    this.#claimClient = mgr.client.resource<ServerClaim>(ServerClaimResource);
    this.#smClient = mgr.client.resource<ServerMaintenance>(ServerMaintenanceResource);
    this.#metrics = new ApprovalMetrics(mgr.registry, () => this.#countAnnouncements());
    this.#announce = mgr.controller({
      name: 'announce',
      workers: options.workers,
      reconcile: (k) => this.reconcileClaim(k),
    });
    this.#approve = mgr.controller({
      name: 'approve',
      workers: options.workers,
      reconcile: (k) => this.reconcileMaintenance(k),
    });
    this.#wire();
  }

  #claimOfServer(server: Server | undefined): string | undefined {
    const ref = server?.spec.serverClaimRef;
    return ref ? objectKey(ref) : undefined;
  }

  #onServer(server: string): void {
    const claim = this.#claimOfServer(this.#servers.getByName(server));
    if (claim) this.#announce.enqueue(claim);
    for (const m of this.#maintenances.byIndex('server', server))
      this.#approve.enqueue(objectKey(m.metadata));
  }

  #wire(): void {
    const onM = (m: ServerMaintenance) => {
      this.#approve.enqueue(objectKey(m.metadata));
      const claim = this.#claimOfServer(this.#servers.getByName(m.spec.serverRef.name));
      if (claim) this.#announce.enqueue(claim);
    };
    this.#maintenances.on({
      add: onM,
      update: (_o, m) => onM(m),
      delete: (m) => {
        this.#mOverlay.forget(m.metadata);
        onM(m);
      },
    });
    const onS = (old: Server | undefined, s: Server) => {
      // Only the binding (and the server's existence) matters here: taint, park and projection updates,
      // several per maintenance, change nothing this controller decides.
      if (old && sameBinding(old, s)) return;
      // A binding that moved: the old claim loses its announcements, the new one gets them.
      const before = this.#claimOfServer(old);
      if (before) this.#announce.enqueue(before);
      this.#onServer(s.metadata.name ?? '');
    };
    this.#servers.on({ add: (s) => onS(undefined, s), update: onS, delete: (s) => onS(undefined, s) });
    const onC = (c: ServerClaim) => {
      this.#announce.enqueue(objectKey(c.metadata));
      const server = c.spec.serverRef?.name;
      if (server)
        for (const m of this.#maintenances.byIndex('server', server))
          this.#approve.enqueue(objectKey(m.metadata));
    };
    this.#claims.on({
      add: onC,
      update: (_o, c) => onC(c),
      delete: (c) => {
        this.#claimOverlay.forget(c.metadata);
        onC(c);
      },
    });
    this.#policies.onChange(() => {
      for (const c of this.#claims.list()) this.#announce.enqueue(objectKey(c.metadata));
      for (const m of this.#maintenances.list()) this.#approve.enqueue(objectKey(m.metadata));
    });
  }

  #countAnnouncements(): number {
    let n = 0;
    for (const c of this.#claims.list()) n += c.status?.maintenance?.announcements?.length ?? 0;
    return n;
  }

  #policy() {
    return this.#policies.current() ?? DEFAULT_POLICY;
  }

  #claim(namespace: string, name: string): ServerClaim | undefined {
    return this.#claimOverlay.fresh(this.#claims.getByName(name, namespace));
  }

  #maintenancesOf(server: string | undefined): ServerMaintenance[] {
    if (!server) return [];
    return this.#maintenances.byIndex('server', server).map((m) => this.#mOverlay.fresh(m) ?? m);
  }

  async reconcileClaim(key: string): Promise<ReconcileResult | void> {
    const { namespace, name } = splitKey(key);
    const claim = this.#claim(namespace ?? '', name);
    if (!claim) return;
    const serverName = claim.spec.serverRef?.name;
    const maintenances = this.#maintenancesOf(serverName);
    const fm = this.#mgr.status.fieldManager;
    const plan = decideClaim({
      claim,
      server: serverName ? this.#servers.getByName(serverName) : undefined,
      maintenances,
      policy: this.#policy(),
      now: new Date(),
      ownsLegacyLabel: ownsLabel(claim, fm, LEGACY_NEEDED_LABEL),
    });
    const current = await this.#writeClaim(claim, plan, maintenances);
    if (!current) return;
    for (const m of plan.announced) {
      this.#metrics.announced.inc();
      const what = `${m.spec.reason ?? 'Other'}, ${m.spec.class ?? 'Planned'}`;
      this.#mgr.events.normal(
        withTypeMeta(current, this.#claimClient),
        'MaintenanceAnnounced',
        'Announce',
        `maintenance ${objectKey(m.metadata)} (${what}) is announced`,
      );
    }
    return plan.requeueAfterMs !== undefined
      ? { requeueAfterMs: plan.requeueAfterMs, reason: 'deferral' }
      : undefined;
  }

  /** Announcements, then the legacy label; the claim as last written (undefined: it is gone). */
  async #writeClaim(
    claim: ServerClaim,
    plan: ClaimPlan,
    maintenances: readonly ServerMaintenance[],
  ): Promise<ServerClaim | undefined> {
    const fm = this.#mgr.status.fieldManager;
    let current = claim;
    if (plan.announcements) {
      const status = { maintenance: { announcements: plan.announcements } };
      const written = await applyStatusOf(this.#claimClient, current, status, fm);
      if (!written) return undefined;
      this.#claimOverlay.wrote(written);
      current = written;
      // The maintenances see their announcement at once, through the overlay.
      for (const m of maintenances) this.#approve.enqueue(objectKey(m.metadata));
    }
    if (plan.legacyLabel !== undefined) {
      const labels = plan.legacyLabel ? { [LEGACY_NEEDED_LABEL]: 'true' } : {};
      // Server-side apply: releasing our ownership removes the label only if nobody else set it too.
      const written = await applyOwned(this.#claimClient, current, { metadata: { labels } }, fm);
      this.#claimOverlay.wrote(written);
      current = written ?? current;
    }
    return current;
  }

  /** The approval status, its decision line and counter; false when the maintenance is gone. */
  async #writeApproval(m: ServerMaintenance, status: ApprovalStatus, approvedBy?: ApprovalSource) {
    const written = await applyStatusOf(this.#smClient, m, status, this.#mgr.status.fieldManager);
    if (!written) return false;
    this.#mOverlay.wrote(written);
    for (const line of approvalDecisionLines(m, m.status?.conditions, status)) this.#decisions.write(line);
    if (approvedBy) this.#metrics.decisions.inc({ source: approvedBy });
    return true;
  }

  async reconcileMaintenance(key: string): Promise<ReconcileResult | void> {
    const { namespace, name } = splitKey(key);
    const m = this.#mOverlay.fresh(this.#maintenances.getByName(name, namespace));
    if (!m) return;
    const server = this.#servers.getByName(m.spec.serverRef.name);
    const ref = server?.spec.serverClaimRef;
    const claim = ref ? this.#claim(ref.namespace, ref.name) : undefined;
    const plan = decideApproval({ m, server, claim, policy: this.#policy(), now: new Date() });
    if (plan.status && !(await this.#writeApproval(m, plan.status, plan.approvedBy))) return;
    // The announcement on the claim carries the approval state: refresh it.
    if (plan.status && ref) this.#announce.enqueue(objectKey(ref));
    for (const e of plan.events) {
      const target =
        e.onClaim && claim ? withTypeMeta(claim, this.#claimClient) : withTypeMeta(m, this.#smClient);
      this.#mgr.events.record(target, e.type, e.reason, 'Approve', e.note);
      if (e.reason === 'DeadlineReached' && !e.onClaim) this.#metrics.escalations.inc();
    }
    return plan.requeueAfterMs !== undefined
      ? { requeueAfterMs: plan.requeueAfterMs, reason: 'verdict' }
      : undefined;
  }
}
