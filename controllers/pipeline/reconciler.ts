// The pipeline controller's wiring: informers for pipelines, runs, the runs' children (the four
// firmware kinds, by label), the runs' maintenances, servers and BMCs; one work queue keyed by
// pipeline name (maxConcurrent is a question about all its runs at once); and the reconcile that
// builds each run's input from the caches, runs the pure decisions (pipeline.ts, run.ts) and
// executes their writes, then the runs' and the pipeline's status (server-side apply) and Events.
import type { MaintenancePipeline } from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import type { MaintenancePipelineRun } from '../../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { BMC } from '../../api/metal/v1alpha1/bmc.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { StageKind } from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import {
  isAlreadyExists,
  isNotFound,
  withoutManagedFields,
  type Controller,
  type Informer,
  type Manager,
  type ReconcileResult,
  type ResourceClient,
} from '../../lib/kube/index.js';
import {
  BMCResource,
  FirmwareResources,
  MaintenancePipelineResource,
  MaintenancePipelineRunResource,
  ServerMaintenanceResource,
  ServerResource,
} from '../../lib/kube/kinds.js';
import { PIPELINE_LABEL, PIPELINE_RUN_FINALIZER, PIPELINE_RUN_LABEL } from '../../contract/names.js';
import { WriteOverlay } from '../shared/overlay.js';
import { applyOwned, removeFinalizers } from '../shared/writes.js';
import { maintenanceName } from './holds.js';
import {
  FIELD_MANAGER_ACTION,
  type Child,
  type RunAction,
  type RunDecision,
  type RunInput,
} from './model.js';
import { admitted, pipelineStatus, planRuns, type PipelineAction } from './pipeline.js';
import { PipelineMetrics } from './metrics.js';
import { decideRun } from './run.js';

export interface PipelineControllerOptions {
  /** Namespace of the runs' maintenances (the controllers' namespace). */
  namespace: string;
  workers?: number;
  clock?: () => Date;
}

const label = (o: { metadata: { labels?: Record<string, string> } }, key: string) =>
  o.metadata.labels?.[key] ? [o.metadata.labels[key]] : [];

export class PipelineController {
  readonly controller: Controller;
  readonly metrics: PipelineMetrics;
  readonly #mgr: Manager;
  readonly #o: PipelineControllerOptions;
  readonly #pipelines: Informer<MaintenancePipeline>;
  readonly #runs: Informer<MaintenancePipelineRun>;
  /** A run's cells are its own record: never decide from a cache one status write behind. */
  readonly #runWrites = new WriteOverlay<MaintenancePipelineRun>(withoutManagedFields);
  readonly #children = new Map<StageKind, Informer<Child>>();
  readonly #childClients = new Map<StageKind, ResourceClient<Child>>();
  readonly #maintenances: Informer<ServerMaintenance>;
  readonly #servers: Informer<Server>;
  readonly #bmcs: Informer<BMC>;
  readonly #pipelineClient: ResourceClient<MaintenancePipeline>;
  readonly #runClient: ResourceClient<MaintenancePipelineRun>;
  readonly #maintenanceClient: ResourceClient<ServerMaintenance>;
  readonly #serverClient: ResourceClient<Server>;

  constructor(mgr: Manager, options: PipelineControllerOptions) {
    this.#mgr = mgr;
    this.#o = options;
    this.#pipelines = mgr.informer<MaintenancePipeline>(MaintenancePipelineResource);
    this.#runs = mgr.informer<MaintenancePipelineRun>(MaintenancePipelineRunResource, {
      indexers: { pipeline: (r) => [r.spec.pipelineRef.name] },
    });
    for (const [kind, rt] of Object.entries(FirmwareResources) as [StageKind, typeof BMCResource][]) {
      this.#children.set(
        kind,
        mgr.informer<Child>(rt, {
          labelSelector: PIPELINE_RUN_LABEL,
          indexers: { run: (c) => label(c, PIPELINE_RUN_LABEL) },
        }),
      );
      this.#childClients.set(kind, mgr.client.resource<Child>(rt));
    }
    this.#maintenances = mgr.informer<ServerMaintenance>(ServerMaintenanceResource, {
      namespace: options.namespace,
      labelSelector: PIPELINE_RUN_LABEL,
      indexers: { run: (m) => label(m, PIPELINE_RUN_LABEL) },
    });
    this.#servers = mgr.informer<Server>(ServerResource);
    this.#bmcs = mgr.informer<BMC>(BMCResource);
    this.#pipelineClient = mgr.client.resource(MaintenancePipelineResource);
    this.#runClient = mgr.client.resource(MaintenancePipelineRunResource);
    this.#maintenanceClient = mgr.client.resource(ServerMaintenanceResource);
    this.#serverClient = mgr.client.resource(ServerResource);
    this.metrics = new PipelineMetrics(mgr.registry, () => this.#runs.list());
    this.controller = mgr.controller({
      name: 'pipeline',
      workers: options.workers ?? 2,
      reconcile: (key) => this.reconcile(key),
    });
    this.#wire();
  }

  #wire(): void {
    const enqueue = (name: string | undefined) => name && this.controller.enqueue(name);
    const all = () => this.#pipelines.list().forEach((p) => enqueue(p.metadata.name));
    const byLabel = (o: { metadata: { labels?: Record<string, string> } }) =>
      enqueue(o.metadata.labels?.[PIPELINE_LABEL]);
    this.#pipelines.on({
      add: (p) => enqueue(p.metadata.name),
      update: (_, p) => enqueue(p.metadata.name),
      delete: (p) => enqueue(p.metadata.name),
    });
    const byRun = (r: MaintenancePipelineRun) => enqueue(r.spec.pipelineRef.name);
    this.#runs.on({
      add: byRun,
      update: (_, r) => byRun(r),
      delete: (r) => {
        this.#runWrites.forget(r.metadata);
        byRun(r);
      },
    });
    for (const inf of this.#children.values())
      inf.on({ add: byLabel, update: (_, c) => byLabel(c), delete: byLabel });
    this.#maintenances.on({ add: byLabel, update: (_, m) => byLabel(m), delete: byLabel });
    // Servers and BMCs: the selector, the BMC a server names, versions, taints. Few pipelines: all of them.
    this.#servers.on({ add: all, update: all, delete: all });
    this.#bmcs.on({ add: all, update: all, delete: all });
  }

  #now(): Date {
    return this.#o.clock?.() ?? new Date();
  }

  #inputOf(
    run: MaintenancePipelineRun,
    pipeline: MaintenancePipeline | undefined,
  ): Omit<RunInput, 'admitted'> {
    const name = run.metadata.name ?? '';
    const children = new Map<string, Child>();
    for (const [kind, inf] of this.#children)
      for (const c of inf.byIndex('run', name)) children.set(c.metadata.name ?? '', { ...c, kind });
    const maintenances = new Map<string, ServerMaintenance>();
    const servers = new Map<string, Server>();
    for (const { name: s } of run.spec.serverRefs) {
      const m = this.#maintenances.getByName(maintenanceName(name, s), this.#o.namespace);
      if (m && m.metadata.labels?.[PIPELINE_RUN_LABEL] === name) maintenances.set(s, m);
      const server = this.#servers.getByName(s);
      if (server) servers.set(s, server);
    }
    const bmc = this.#bmcs.getByName(run.spec.bmcRef.name);
    return {
      run,
      ...(pipeline ? { pipeline } : {}),
      children,
      maintenances,
      servers,
      ...(bmc ? { bmc } : {}),
      now: this.#now(),
      namespace: this.#o.namespace,
    };
  }

  async reconcile(name: string): Promise<ReconcileResult | void> {
    const pipeline = this.#pipelines.getByName(name);
    const runs = this.#runsOf(name);
    const plan = planRuns(pipeline, this.#servers.list(), runs);
    for (const a of plan.actions) await this.#pipelineAction(a);
    // The dry pass says which runs want work; maxConcurrent then decides which may have it.
    const inputs = runs.map((run) => this.#inputOf(run, pipeline));
    const wants = inputs.map((i) => ({
      run: i.run,
      wantsWork: decideRun({ ...i, admitted: false }).progressing,
    }));
    const slots = admitted(pipeline, wants);
    let requeue: number | undefined;
    let failure: Error | undefined;
    for (const input of inputs) {
      const decision = decideRun({ ...input, admitted: slots.has(input.run.metadata.name ?? '') });
      // One run's refused write (a child the firmware freeze holds) must not stall the others: the
      // first error is rethrown after every run had its turn, for the queue's backoff.
      try {
        await this.#execute(input.run, decision);
      } catch (e) {
        failure ??= e instanceof Error ? e : new Error(String(e));
      }
      if (decision.requeueAfterMs !== undefined)
        requeue = Math.min(requeue ?? Infinity, decision.requeueAfterMs);
    }
    if (failure) throw failure;
    if (pipeline && !pipeline.metadata.deletionTimestamp) {
      const status = pipelineStatus(pipeline, plan.selected, plan.noBMC, this.#runsOf(name), this.#now());
      if (JSON.stringify(status) !== JSON.stringify(pipeline.status ?? {}))
        await this.#mgr.status.applyStatus(this.#pipelineClient, { name }, status);
    }
    return requeue !== undefined ? { requeueAfterMs: requeue, reason: 'resync' } : undefined;
  }

  #runsOf(pipeline: string): MaintenancePipelineRun[] {
    return this.#runs.byIndex('pipeline', pipeline).map((r) => this.#runWrites.fresh(r) ?? r);
  }

  async #pipelineAction(a: PipelineAction): Promise<void> {
    const fieldManager = this.#mgr.status.fieldManager;
    if (a.kind === 'createRun') {
      await this.#runClient.create(a.run, { fieldManager }).catch(ignore(isAlreadyExists));
      this.metrics.runsCreated.inc();
    } else if (a.kind === 'setServers') {
      await this.#runClient.patch(
        a.name,
        { spec: { serverRefs: a.servers.map((s) => ({ name: s })) } },
        { type: 'merge', fieldManager },
      );
    } else {
      await this.#runClient.delete(a.name).catch(ignore(isNotFound));
    }
  }

  async #execute(run: MaintenancePipelineRun, d: RunDecision): Promise<void> {
    for (const a of d.actions) await this.#act(run, a);
    const name = run.metadata.name ?? '';
    if (JSON.stringify(d.status) !== JSON.stringify(run.status ?? {})) {
      const written = await this.#mgr.status.applyStatus(this.#runClient, { name }, d.status);
      this.#runWrites.wrote(written);
      this.metrics.transition(run.status?.phase, d.status.phase);
    }
    const regarding = {
      ...run,
      apiVersion: 'maintenance.metal.ironcore.dev/v1alpha1',
      kind: 'MaintenancePipelineRun',
    };
    for (const ev of d.events)
      this.#mgr.events.record(regarding, ev.type, ev.reason, FIELD_MANAGER_ACTION, ev.note);
  }

  async #act(run: MaintenancePipelineRun, a: RunAction): Promise<void> {
    const fieldManager = this.#mgr.status.fieldManager;
    switch (a.kind) {
      case 'taint':
      case 'untaint': {
        const server = this.#servers.getByName(a.server);
        if (!server) return;
        // Server-side apply of our one taint (Server spec.taints is a list-map): nobody else's is touched.
        const spec = a.kind === 'taint' ? { taints: [a.taint] } : {};
        await applyOwned(this.#serverClient, server, { spec }, fieldManager);
        return;
      }
      case 'createMaintenance':
        await this.#maintenanceClient.create(a.maintenance, { fieldManager }).catch(ignore(isAlreadyExists));
        this.metrics.maintenancesTaken.inc();
        return;
      case 'deleteMaintenance':
        await this.#maintenanceClient
          .delete(a.name, { namespace: a.namespace, ...(a.uid ? { preconditions: { uid: a.uid } } : {}) })
          .catch(ignore(isNotFound));
        return;
      case 'createChild': {
        const client = this.#childClients.get(a.child.kind as StageKind)!;
        await client.create(a.child as Child, { fieldManager }).catch(ignore(isAlreadyExists));
        this.metrics.childrenStamped.inc({ kind: a.child.kind });
        return;
      }
      case 'patchChild':
        await this.#childClients
          .get(a.childKind)!
          .patch(a.name, { spec: a.spec }, { type: 'merge', fieldManager })
          .catch(ignore(isNotFound));
        return;
      case 'deleteChild':
        await this.#childClients.get(a.childKind)!.delete(a.name).catch(ignore(isNotFound));
        return;
      case 'removeFinalizer':
        await removeFinalizers(this.#runClient, run, [PIPELINE_RUN_FINALIZER], fieldManager);
        return;
    }
  }
}

/** A write whose only failure we expect is `expected` (already done): anything else propagates. */
function ignore(expected: (e: unknown) => boolean) {
  return (e: unknown) => {
    if (!expected(e)) throw e;
  };
}
