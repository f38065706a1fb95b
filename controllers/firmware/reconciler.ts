// The firmware controller's wiring: informers for the four kinds and everything their decisions
// read, one work queue keyed `<Kind>/<name>`, and the reconcile that builds the world from caches,
// runs step() against Kubernetes and the Redfish port, and writes the status (server-side apply
// on /status, this binary's field manager) and Events.
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { BMC } from '../../api/metal/v1alpha1/bmc.js';
import type { BMCSecret } from '../../api/metal/v1alpha1/bmcsecret.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { KubeObject } from '../../api/schema/meta.js';
import {
  Core,
  isAlreadyExists,
  isNotFound,
  withoutManagedFields,
  type Controller,
  type Informer,
  type Manager,
  type ReconcileResult,
  type ResourceClient,
  type ResourceType,
} from '../../lib/kube/index.js';
import {
  BMCResource,
  BMCSecretResource,
  FirmwareResources,
  ServerMaintenanceResource,
  ServerResource,
} from '../../lib/kube/kinds.js';
import type { PolicyStore } from '../../lib/policy/index.js';
import { PIPELINE_RUN_LABEL } from '../../contract/names.js';
import { durationMs } from '../../lib/policy/index.js';
import { resolveAccess } from '../shared/bmc-access.js';
import { WriteOverlay } from '../shared/overlay.js';
import {
  ATTEMPT_ANNOTATION,
  ATTEMPT_LABEL,
  OPERATION_ANNOTATION,
  OWNER_LABEL,
  TARGET,
  type FirmwareContext,
  type FirmwareKindName,
  type FirmwareObject,
  type FirmwarePolicy,
  type FirmwareWorld,
} from './model.js';
import type { FirmwarePort } from './port.js';
import { step, type KubeOps } from './step.js';
import { FirmwareMetrics } from './metrics.js';

export const KINDS: Record<FirmwareKindName, ResourceType> = FirmwareResources;

export interface FirmwareControllerOptions {
  port: FirmwarePort;
  /** The policy, kept current from its ConfigMap (controllers/shared/policy.ts). */
  policy: PolicyStore;
  /** Namespace of the maintenances and of the policy ConfigMap. */
  namespace: string;
  pollMs: number;
  workers?: number;
  clock?: () => Date;
}

const DEFAULT_POLICY: FirmwarePolicy = {
  class: 'Planned',
  defaultMaxAttempts: 3,
  retryBackoffMs: 60_000,
  retryBackoffMaxMs: 1_800_000,
  timeouts: { admission: 1_800_000, issue: 300_000, task: 3_600_000, reboot: 900_000, verify: 300_000 },
};

function splitFirmwareKey(key: string): { kind: FirmwareKindName; name: string } {
  const i = key.indexOf('/');
  return { kind: key.slice(0, i) as FirmwareKindName, name: key.slice(i + 1) };
}

export class FirmwareController implements KubeOps {
  readonly controller: Controller;
  readonly metrics: FirmwareMetrics;
  readonly policy: PolicyStore;
  readonly #mgr: Manager;
  readonly #o: FirmwareControllerOptions;
  readonly #objects = new Map<FirmwareKindName, Informer<FirmwareObject>>();
  /** The task an object recorded decides what runs next: never decide from a cache a write behind. */
  readonly #written = new Map<FirmwareKindName, WriteOverlay<FirmwareObject>>();
  readonly #clients = new Map<FirmwareKindName, ResourceClient<FirmwareObject>>();
  readonly #servers: Informer<Server>;
  readonly #maintenances: Informer<ServerMaintenance>;
  /** The maintenances MaintenancePipelineRuns hold, which their children reference. */
  readonly #runMaintenances: Informer<ServerMaintenance>;
  readonly #bmcs: Informer<BMC>;
  readonly #secrets: Informer<BMCSecret>;
  readonly #maintenanceClient: ResourceClient<ServerMaintenance>;
  readonly #secretClient: ResourceClient<KubeObject & { data?: Record<string, string> }>;

  constructor(mgr: Manager, options: FirmwareControllerOptions) {
    this.#mgr = mgr;
    this.#o = options;
    this.policy = options.policy;
    for (const [kind, rt] of Object.entries(KINDS) as [FirmwareKindName, ResourceType][]) {
      const inf = mgr.informer<FirmwareObject>(rt, {
        indexers: { maintenance: (o) => this.#refs(kind, o).map((r) => `${r.namespace}/${r.name}`) },
      });
      this.#objects.set(kind, inf);
      this.#written.set(kind, new WriteOverlay<FirmwareObject>(withoutManagedFields));
      this.#clients.set(kind, mgr.client.resource<FirmwareObject>(rt));
    }
    this.#servers = mgr.informer<Server>(ServerResource, {
      indexers: { bmc: (s) => (s.spec.bmcRef?.name ? [s.spec.bmcRef.name] : []) },
    });
    this.#maintenances = mgr.informer<ServerMaintenance>(ServerMaintenanceResource, {
      namespace: options.namespace,
      labelSelector: OWNER_LABEL,
      indexers: { owner: (m) => [m.metadata.labels?.[OWNER_LABEL] ?? ''] },
    });
    this.#runMaintenances = mgr.informer<ServerMaintenance>(ServerMaintenanceResource, {
      namespace: options.namespace,
      labelSelector: PIPELINE_RUN_LABEL,
    });
    this.#bmcs = mgr.informer<BMC>(BMCResource);
    this.#secrets = mgr.informer<BMCSecret>(BMCSecretResource);
    this.#maintenanceClient = mgr.client.resource<ServerMaintenance>(ServerMaintenanceResource);
    this.#secretClient = mgr.client.resource(Core.Secret);
    this.metrics = new FirmwareMetrics(mgr.registry, () =>
      [...this.#objects.entries()].flatMap(([kind, inf]) => inf.list().map((o) => ({ kind, obj: o }))),
    );
    this.controller = mgr.controller({
      name: 'firmware',
      workers: options.workers ?? 4,
      reconcile: (key) => this.reconcile(key),
    });
    this.#wire();
  }

  #wire(): void {
    for (const [kind, inf] of this.#objects) {
      const enqueue = (o: FirmwareObject) => this.controller.enqueue(`${kind}/${o.metadata.name ?? ''}`);
      inf.on({
        add: enqueue,
        update: (_, o) => enqueue(o),
        delete: (o) => this.#written.get(kind)!.forget(o.metadata),
      });
    }
    const byOwner = (m: ServerMaintenance) => {
      const owner = m.metadata.ownerReferences?.find((r) => r.kind in KINDS);
      if (owner) this.controller.enqueue(`${owner.kind}/${owner.name}`);
    };
    this.#maintenances.on({ add: byOwner, update: (_, m) => byOwner(m), delete: byOwner });
    const byReference = (m: ServerMaintenance) => {
      const key = `${m.metadata.namespace ?? ''}/${m.metadata.name ?? ''}`;
      for (const [kind, inf] of this.#objects)
        for (const o of inf.byIndex('maintenance', key))
          this.controller.enqueue(`${kind}/${o.metadata.name ?? ''}`);
    };
    this.#runMaintenances.on({ add: byReference, update: (_, m) => byReference(m), delete: byReference });
  }

  #policy(): FirmwarePolicy {
    const p = this.policy.current()?.firmware;
    if (!p) return DEFAULT_POLICY;
    const t = p.timeouts;
    return {
      class: p.class,
      defaultMaxAttempts: p.defaultMaxAttempts,
      retryBackoffMs: durationMs(p.retryBackoff),
      retryBackoffMaxMs: durationMs(p.retryBackoffMax),
      ...(p.boot ? { boot: { image: p.boot.image, method: p.boot.method } } : {}),
      timeouts: {
        admission: durationMs(t.admission),
        issue: durationMs(t.issue),
        task: durationMs(t.task),
        reboot: durationMs(t.reboot),
        verify: durationMs(t.verify),
      },
    };
  }

  #context(): FirmwareContext {
    return {
      now: this.#o.clock?.() ?? new Date(),
      namespace: this.#o.namespace,
      policy: this.#policy(),
      pollMs: this.#o.pollMs,
    };
  }

  async #world(kind: FirmwareKindName, obj: FirmwareObject): Promise<FirmwareWorld> {
    const lookups = {
      bmc: (n: string) => this.#bmcs.getByName(n),
      secret: (n: string) => this.#secrets.getByName(n),
    };
    // BMC access: the BMC object (BMC kinds), or the server's (BIOS kinds, with its System id).
    let servers: Server[];
    let missing: string | undefined;
    if (TARGET[kind] === 'BIOS') {
      const name = (obj.spec as { serverRef: { name: string } }).serverRef.name;
      const s = this.#servers.getByName(name);
      servers = s ? [s] : [];
      if (!s) missing = `server ${name} does not exist`;
    } else {
      const name = (obj.spec as { bmcRef: { name: string } }).bmcRef.name;
      servers = this.#servers
        .byIndex('bmc', name)
        .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
      if (!this.#bmcs.getByName(name)) missing = `BMC ${name} does not exist`;
      else if (servers.length === 0) missing = `no server names BMC ${name} in spec.bmcRef`;
    }
    const access = servers[0]
      ? resolveAccess(servers[0], lookups)
      : { ok: false as const, reason: 'TargetNotFound', message: missing ?? 'no server' };
    if (obj.metadata.labels?.[PIPELINE_RUN_LABEL]) {
      const refs = this.#refs(kind, obj);
      return {
        servers,
        missing,
        maintenances: await this.#runMaintenancesOf(refs),
        access,
        runHeld: { refs },
      };
    }
    const attempt = obj.metadata.annotations?.[ATTEMPT_ANNOTATION];
    const maintenances = new Map<string, ServerMaintenance>();
    for (const m of this.#maintenances.byIndex('owner', obj.metadata.uid ?? '')) {
      if (m.metadata.labels?.[ATTEMPT_LABEL] === attempt) maintenances.set(m.spec.serverRef.name, m);
    }
    // The cache may not show a maintenance we just created: ask the API server before calling it lost.
    const refs = this.#refs(kind, obj);
    for (const ref of refs) {
      if ([...maintenances.values()].some((m) => m.metadata.name === ref.name)) continue;
      const live = await this.#maintenanceClient.find(ref.name, ref.namespace);
      if (
        live &&
        live.metadata.labels?.[OWNER_LABEL] === obj.metadata.uid &&
        live.metadata.labels?.[ATTEMPT_LABEL] === attempt
      )
        maintenances.set(live.spec.serverRef.name, live);
    }
    return { servers, missing, maintenances, access };
  }

  /** A run's child: the maintenances are the run's, found by the references it wrote in spec. */
  async #runMaintenancesOf(refs: { namespace: string; name: string }[]) {
    const out = new Map<string, ServerMaintenance>();
    for (const ref of refs) {
      // The cache may lag the run's create: ask the API server before calling it lost.
      const m =
        this.#runMaintenances.getByName(ref.name, ref.namespace) ??
        (await this.#maintenanceClient.find(ref.name, ref.namespace));
      if (m) out.set(m.spec.serverRef.name, m);
    }
    return out;
  }

  #refs(kind: FirmwareKindName, obj: FirmwareObject): { namespace: string; name: string }[] {
    const spec = obj.spec as {
      serverMaintenanceRef?: { name?: string; namespace?: string };
      serverMaintenanceRefs?: (
        | { name?: string; namespace?: string }
        | { serverMaintenanceRef?: { name?: string; namespace?: string } }
      )[];
    };
    const list =
      TARGET[kind] === 'BIOS'
        ? [spec.serverMaintenanceRef]
        : (spec.serverMaintenanceRefs ?? []).map((r) =>
            'serverMaintenanceRef' in r
              ? r.serverMaintenanceRef
              : (r as { name?: string; namespace?: string }),
          );
    return list.flatMap((r) =>
      r?.name ? [{ namespace: r.namespace ?? this.#o.namespace, name: r.name }] : [],
    );
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const { kind, name } = splitFirmwareKey(key);
    const obj = this.#written.get(kind)?.fresh(this.#objects.get(kind)?.getByName(name));
    if (!obj) return;
    const world = await this.#world(kind, obj);
    const ctx = this.#context();
    const before = obj.status?.state;
    const decision = await step(kind, obj, world, ctx, this.#o.port, this);
    const client = this.#clients.get(kind)!;
    if (decision.status && JSON.stringify(decision.status) !== JSON.stringify(obj.status ?? {})) {
      const written = await this.#mgr.status.applyStatus(client, { name }, decision.status);
      this.#written.get(kind)!.wrote(written);
      this.metrics.transition(kind, before, decision.status.state);
    }
    const regarding = { ...obj, apiVersion: `${KINDS[kind].group}/${KINDS[kind].version}`, kind };
    for (const ev of decision.events)
      this.#mgr.events.record(regarding, ev.type, ev.reason, 'Firmware', ev.note);
    return decision.requeueAfterMs !== undefined ? { requeueAfterMs: decision.requeueAfterMs } : undefined;
  }

  // --- KubeOps -----------------------------------------------------------------------------

  async createMaintenance(m: ServerMaintenance): Promise<void> {
    try {
      await this.#maintenanceClient.create(m);
      this.metrics.maintenancesRequested.inc();
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  }

  async deleteMaintenance(namespace: string, name: string, uid?: string): Promise<void> {
    try {
      await this.#maintenanceClient.delete(name, { namespace, ...(uid ? { preconditions: { uid } } : {}) });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  async setRefs(
    kind: FirmwareKindName,
    obj: FirmwareObject,
    attempt: number,
    refs: { namespace: string; name: string }[],
  ): Promise<void> {
    const spec =
      kind === 'BIOSVersion' || kind === 'BIOSSettings'
        ? { serverMaintenanceRef: refs[0] ?? null }
        : kind === 'BMCVersion'
          ? { serverMaintenanceRefs: refs }
          : { serverMaintenanceRefs: refs.map((r) => ({ serverMaintenanceRef: r })) };
    await this.#clients
      .get(kind)!
      .patch(
        obj.metadata.name ?? '',
        { metadata: { annotations: { [ATTEMPT_ANNOTATION]: String(attempt) } }, spec },
        { type: 'merge', fieldManager: this.#mgr.status.fieldManager },
      );
  }

  async clearOperation(kind: FirmwareKindName, obj: FirmwareObject): Promise<void> {
    await this.#clients
      .get(kind)!
      .patch(
        obj.metadata.name ?? '',
        { metadata: { annotations: { [OPERATION_ANNOTATION]: null } } },
        { type: 'merge', fieldManager: this.#mgr.status.fieldManager },
      );
  }

  async imageCredentials(ref: { name?: string; namespace?: string } | undefined) {
    if (!ref?.name) return undefined;
    const secret = await this.#secretClient.get(ref.name, ref.namespace ?? this.#o.namespace);
    const read = (k: string) =>
      secret.data?.[k] ? Buffer.from(secret.data[k], 'base64').toString('utf8') : undefined;
    const username = read('username');
    const password = read('password');
    if (!username || !password)
      throw new Error(
        `Secret ${ref.namespace ?? this.#o.namespace}/${ref.name} needs the keys username and password`,
      );
    return { username, password };
  }
}
