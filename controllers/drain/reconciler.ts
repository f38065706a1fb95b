// The drain controller's edge, one work queue keyed by claim (namespace/name): read the claim's Node
// and pods from its workload cluster, plan (decide.ts), cordon / evict / uncordon, settle, then write
// status.drain + condition Drained on each announced maintenance and the approvals and deferrals
// this controller holds on the claim (server-side apply, its field manager: releasing an entry
// removes it, a cordon or an approval of anybody else is never touched).
import type { ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { Manager } from '../../lib/kube/manager.js';
import type { KubeClient, ResourceClient } from '../../lib/kube/client.js';
import { withoutManagedFields, type Informer } from '../../lib/kube/informer.js';
import type { Controller, ReconcileResult } from '../../lib/kube/controller.js';
import { isConflict, KubeApiError } from '../../lib/kube/errors.js';
import { Core, objectKey, splitKey } from '../../lib/kube/resources.js';
import type { PolicyStore } from '../../lib/policy/store.js';
import { ServerClaimResource, ServerMaintenanceResource } from '../../lib/kube/kinds.js';
import { DEFAULT_POLICY, type DrainPolicy, type WorkloadCluster } from '../../policies/schema.js';
import type { OwnerReference } from '../../api/schema/meta.js';
import type { DrainStatus } from '../../api/maintenance/v1alpha1/drain-status.js';
import { MaintenanceConditions, qualified } from '../../contract/names.js';
import { makeCondition } from '../../contract/conditions.js';
import { applyOwned, applyStatusOf, withTypeMeta } from '../shared/writes.js';
import {
  planDrain,
  settle,
  type DrainInput,
  type EvictionResult,
  type Refusal,
  type WorkloadView,
} from './decide.js';
import { podKey, staleNote, type StaleDisruption } from './pods.js';
import { DrainMetrics } from './metrics.js';
import { nextPass, sameCondition, sameDrain, WARNING_PHASES } from './pass.js';
import { cordon, evictPod, markNode, uncordon, WorkloadClusters } from './workload.js';
import type { Node, Pdb } from './workload-types.js';
import { scheduledPatch } from './scheduled.js';
import { infraMachineOf } from './capi.js';
import { capiView, mcmView, providerIDView, type ViewContext } from './views.js';

export interface DrainControllerOptions {
  workers: number;
}

interface Held {
  approvals: string;
  deferrals: string;
}

export class DrainReconciler {
  readonly #mgr: Manager;
  readonly #policies: PolicyStore;
  readonly #claims: Informer<ServerClaim>;
  readonly #maintenances: Informer<ServerMaintenance>;
  readonly #claimClient: ResourceClient<ServerClaim>;
  readonly #smClient: ResourceClient<ServerMaintenance>;
  readonly #clusters: WorkloadClusters;
  readonly #queue: Controller;
  readonly #metrics: DrainMetrics;
  /** Per claim: refused evictions (backoff), the Node last found, what we last applied on the claim. */
  readonly #refusals = new Map<string, Map<string, Refusal>>();
  readonly #nodes = new Map<string, string>();
  readonly #held = new Map<string, Held>();
  /** Per claim: the stale status.disruptedPods entries already reported (budget, pod, since). */
  readonly #stale = new Map<string, Set<string>>();

  constructor(mgr: Manager, policies: PolicyStore, options: DrainControllerOptions) {
    this.#mgr = mgr;
    this.#policies = policies;
    this.#claims = mgr.informer<ServerClaim>(ServerClaimResource, { transform: withoutManagedFields });
    this.#maintenances = mgr.informer<ServerMaintenance>(ServerMaintenanceResource, {
      indexers: { uid: (m) => [m.metadata.uid ?? ''] },
      transform: withoutManagedFields,
    });
    this.#claimClient = mgr.client.resource<ServerClaim>(ServerClaimResource);
    this.#smClient = mgr.client.resource<ServerMaintenance>(ServerMaintenanceResource);
    this.#clusters = new WorkloadClusters(mgr.client, mgr.logger);
    this.#metrics = new DrainMetrics(mgr.registry);
    this.#queue = mgr.controller({
      name: 'drain',
      workers: options.workers,
      reconcile: (k) => this.reconcile(k),
    });
    const onClaim = (c: ServerClaim) => this.#queue.enqueue(objectKey(c.metadata));
    this.#claims.on({ add: onClaim, update: (_o, c) => onClaim(c), delete: onClaim });
    this.#policies.onChange(() => {
      for (const c of this.#claims.list()) onClaim(c);
    });
  }

  #policy(): DrainPolicy {
    return (this.#policies.current() ?? DEFAULT_POLICY).drain;
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const target = this.#target(key);
    if (!target) return;
    const { claim, policy } = target;
    const now = Date.now();
    const ctx: ViewContext = {
      metal: this.#mgr.client,
      clusters: this.#clusters,
      ...(this.#nodes.has(key) ? { hint: this.#nodes.get(key)! } : {}),
      remember: (node) => this.#nodes.set(key, node),
    };
    const { client, view } = target.infra
      ? await capiView(ctx, claim, target.infra)
      : target.cluster!.mcm
        ? await mcmView(ctx, claim, target.cluster!)
        : await providerIDView(ctx, claim, target.cluster!);
    const input: DrainInput = {
      claim,
      maintenances: this.#maintenancesOf(claim),
      view,
      refusals: this.#refusals.get(key) ?? new Map(),
      policy,
      now,
      byUID: (uid) => this.#maintenances.byIndex('uid', uid)[0],
    };
    const plan = planDrain(input);
    const results = new Map<string, EvictionResult>();
    if (view.kind === 'node' && client) {
      try {
        await this.#act(client, view, plan, claim, results);
      } catch (e) {
        if (!isConflict(e)) throw e;
        return { requeueAfterMs: 200, reason: 'node changed' };
      }
    }
    const s = settle(input, plan, results);
    this.#refusals.set(key, s.refusals);
    for (const r of results.values()) this.#metrics.evictions.inc({ result: r.kind });
    await this.#writeMaintenances(s, input.maintenances);
    const seen = await this.#writeClaim(claim, key, s);
    // Nothing to drain for and the Node is not unreachable: done once uncordoned (or never ours) and
    // no GEP-31 handshake of ours is left on it.
    if (plan.active.length === 0 && view.kind !== 'unreachable' && !plan.handshake?.pending)
      this.#nodes.delete(key);
    return nextPass(plan, s, view.kind, seen, now);
  }

  /**
   * The claim behind `key` and how its workload cluster is found (the policy's entry for its namespace,
   * or a Cluster API provider's infrastructure machine owning it, which names its cluster itself);
   * undefined when there is nothing to do: not ours (forgotten), or nothing announced and nothing of
   * ours to undo, so no need to ask the workload cluster.
   */
  #target(
    key: string,
  ):
    | { claim: ServerClaim; policy: DrainPolicy; cluster?: WorkloadCluster; infra?: OwnerReference }
    | undefined {
    const { namespace = '', name } = splitKey(key);
    const claim = this.#claims.getByName(name, namespace);
    const policy = this.#policy();
    const cluster = policy.clusters.find((c) => c.namespace === namespace);
    const infra = claim ? infraMachineOf(claim) : undefined;
    if (!claim || (!cluster && !infra)) {
      this.#forget(key);
      return undefined;
    }
    const held = this.#held.get(key);
    const idle = (claim.status?.maintenance?.announcements ?? []).length === 0;
    if (idle && held && isEmpty(held) && !this.#nodes.has(key)) return undefined;
    return { claim, policy, ...(cluster ? { cluster } : {}), ...(infra ? { infra } : {}) };
  }

  /** The maintenances announced to the claim that the cache has, by uid. */
  #maintenancesOf(claim: ServerClaim): Map<string, ServerMaintenance> {
    const out = new Map<string, ServerMaintenance>();
    for (const a of claim.status?.maintenance?.announcements ?? []) {
      const m = this.#maintenances.getByName(a.maintenanceName, a.maintenanceNamespace);
      if (m?.metadata.uid === a.maintenanceUID) out.set(a.maintenanceUID, m);
    }
    return out;
  }

  #forget(key: string): void {
    this.#refusals.delete(key);
    this.#nodes.delete(key);
    this.#held.delete(key);
    this.#stale.delete(key);
  }

  async #act(
    client: KubeClient,
    view: Extract<WorkloadView, { kind: 'node' }>,
    plan: ReturnType<typeof planDrain>,
    claim: ServerClaim,
    results: Map<string, EvictionResult>,
  ): Promise<void> {
    const owner = qualified(claim.metadata.namespace, claim.metadata.name);
    const nodeName = view.node.metadata.name ?? '';
    if (plan.cordon) {
      await cordon(client, view.node, owner);
      this.#mgr.logger.info({ claim: owner, node: nodeName }, 'cordoned Node');
    }
    if (plan.uncordon) {
      await uncordon(client, view.node);
      this.#mgr.logger.info({ claim: owner, node: nodeName }, 'uncordoned the Node we cordoned');
    }
    // GEP-31 marks at the version read; after an uncordon, on the next pass (the handshake is pending).
    const marks = plan.handshake?.marks;
    if (marks && !plan.uncordon) {
      await markNode(client, view.node, marks);
      this.#mgr.logger.info({ claim: owner, node: nodeName, labels: marks.labels }, 'GEP-31 handshake step');
    }
    if (plan.scheduled) {
      await client
        .resource<Node>(Core.Node)
        .patch(nodeName, scheduledPatch(plan.scheduled), { type: 'strategic', subresource: 'status' });
      this.#mgr.logger.info(
        { claim: owner, node: nodeName, change: plan.scheduled.kind },
        'MaintenanceScheduled',
      );
    }
    const pdbCache = new Map<string, Promise<Pdb[]>>();
    const pdbs = (ns: string) => () => {
      let p = pdbCache.get(ns);
      if (!p) {
        p = client
          .resource<Pdb>(Core.PodDisruptionBudget)
          .listAll({ namespace: ns })
          .then((l) => l.items);
        pdbCache.set(ns, p);
      }
      return p;
    };
    for (const pod of plan.evict) {
      const r = await evictPod(client, pod, {
        pdbs: pdbs(pod.metadata.namespace ?? ''),
        nodePods: view.pods,
        now: Date.now(),
      });
      results.set(podKey(pod), r);
      if (r.kind === 'evicted')
        this.#mgr.logger.info({ claim: owner, node: nodeName, pod: podKey(pod) }, 'evicted pod');
      if (r.kind === 'refused' && r.stale) this.#reportStale(claim, r.stale);
    }
  }

  /** A Warning Event on the claim, once per stale status.disruptedPods entry, naming budget and pod. */
  #reportStale(claim: ServerClaim, stale: StaleDisruption): void {
    const key = objectKey(claim.metadata);
    const id = `${stale.budget}/${stale.pod}/${stale.since}`;
    const seen = this.#stale.get(key) ?? new Set<string>();
    if (seen.has(id)) return;
    seen.add(id);
    this.#stale.set(key, seen);
    this.#mgr.logger.warn({ claim: key, budget: stale.budget, pod: stale.pod }, 'stale disruptedPods entry');
    this.#mgr.events.warning(
      withTypeMeta(claim, this.#claimClient),
      'DrainBudgetStale',
      'Drain',
      staleNote(stale),
    );
  }

  async #writeMaintenances(
    s: ReturnType<typeof settle>,
    maintenances: ReadonlyMap<string, ServerMaintenance>,
  ) {
    const now = new Date();
    for (const [uid, drain] of s.status) {
      const m = maintenances.get(uid);
      if (!m) continue;
      const before = m.status?.drain;
      const condition = makeCondition(
        m.status?.conditions,
        { type: MaintenanceConditions.Drained, ...s.condition },
        now,
      );
      if (sameDrain(before, drain) && sameCondition(m, condition)) continue;
      await applyStatusOf(
        this.#smClient,
        m,
        { drain, conditions: [condition] },
        this.#mgr.status.fieldManager,
      );
      this.#announce(m, before, drain);
    }
  }

  /** Events and metrics for what one status write changed: a phase change, the first blockers. */
  #announce(m: ServerMaintenance, before: DrainStatus | undefined, drain: DrainStatus): void {
    if (before?.phase !== drain.phase) {
      const warn = WARNING_PHASES.has(drain.phase);
      this.#mgr.events.record(
        withTypeMeta(m, this.#smClient),
        warn ? 'Warning' : 'Normal',
        `Drain${drain.phase}`,
        'Drain',
        drain.message ?? drain.phase,
      );
      if (drain.phase === 'Drained') this.#metrics.drained.inc();
    }
    if ((drain.blockers?.length ?? 0) > 0 && !(before?.blockers?.length ?? 0)) this.#metrics.blocked.inc();
  }

  /** Applies what we hold on the claim; true when the cached claim already showed it (nothing written). */
  async #writeClaim(claim: ServerClaim, key: string, s: ReturnType<typeof settle>): Promise<boolean> {
    const held: Held = { approvals: JSON.stringify(s.approvals), deferrals: JSON.stringify(s.deferrals) };
    const have = claim.spec.maintenance;
    const present =
      s.approvals.every((a) => have?.approvals?.some((x) => x.maintenanceUID === a.maintenanceUID)) &&
      s.deferrals.every((d) =>
        have?.deferrals?.some(
          (x) => x.maintenanceUID === d.maintenanceUID && x.until === d.until && x.reason === d.reason,
        ),
      );
    const last = this.#held.get(key);
    if (last && last.approvals === held.approvals && last.deferrals === held.deferrals && present)
      return true;
    const fm = this.#mgr.status.fieldManager;
    const maintenance: Record<string, unknown> = {};
    if (s.approvals.length) maintenance.approvals = s.approvals;
    if (s.deferrals.length) maintenance.deferrals = s.deferrals;
    // Nothing to hold: an apply with no spec releases every entry we held (and removes it unless
    // somebody else holds it too).
    const fields = Object.keys(maintenance).length ? { spec: { maintenance } } : {};
    try {
      await applyOwned(this.#claimClient, claim, fields, fm);
    } catch (e) {
      // The webhook refuses an approval or deferral of a maintenance no longer announced: the next
      // pass, on the claim's update, decides again.
      if (e instanceof KubeApiError && (e.statusCode === 403 || e.statusCode === 429)) {
        this.#mgr.logger.warn(
          { claim: key, err: e.message },
          'claim write refused; deciding again shortly or on the next change',
        );
        this.#held.delete(key);
        return false;
      }
      throw e;
    }
    this.#held.set(key, held);
    for (const a of s.approvals)
      if (!have?.approvals?.some((x) => x.maintenanceUID === a.maintenanceUID)) {
        this.#metrics.approvals.inc();
        this.#mgr.events.normal(
          withTypeMeta(claim, this.#claimClient),
          'DrainApproved',
          'Approve',
          `Node drained: approved maintenance ${a.maintenanceName} (${a.maintenanceUID})`,
        );
      }
    return false;
  }
}

const isEmpty = (h: Held) => h.approvals === '[]' && h.deferrals === '[]';
