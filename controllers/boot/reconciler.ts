// The boot controller's wiring: informers for everything the decision reads, the work queue,
// and the reconcile that reads caches, asks the pure decision, runs its actions at the edge and
// writes the status (server-side apply on /status) and Events.
import { ServerBootKind } from '../../api/maintenance/v1alpha1/serverboot.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { BMC } from '../../api/metal/v1alpha1/bmc.js';
import type { BMCSecret } from '../../api/metal/v1alpha1/bmcsecret.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { ServerBootConfiguration } from '../../api/metal/v1alpha1/serverbootconfiguration.js';
import type { KubeObject } from '../../api/schema/meta.js';
import { POLICY_CONFIGMAP } from '../../policies/schema.js';
import {
  Core,
  isAlreadyExists,
  isNotFound,
  objectKey,
  splitKey,
  withoutManagedFields,
  type Controller,
  type Informer,
  type Manager,
  type ReconcileResult,
  type ResourceClient,
} from '../../lib/kube/index.js';
import { PolicyStore, durationMs } from '../../lib/policy/index.js';
import { resolveAccess } from '../shared/bmc-access.js';
import { WriteOverlay } from '../shared/overlay.js';
import { decide, onActionError } from './decide.js';
import type { RedfishEdge } from './edge.js';
import { errorView, internal, noAccess, sbcConflict } from './errors.js';
import { BootMetrics } from './metrics.js';
import {
  BOOT_FINALIZER,
  SBC_BOOT_LABEL,
  type BootAction,
  type BootContext,
  type BootWorld,
  type Decision,
  type ServerBoot,
} from './model.js';
import {
  BMCResource,
  BMCSecretResource,
  ServerBootConfigurationResource,
  ServerBootResource,
  ServerMaintenanceResource,
  ServerResource,
} from '../../lib/kube/kinds.js';

export const DEFAULT_PHASE_TIMEOUT_MS = 10 * 60_000;

export interface BootTimings {
  pollMs: number;
  pinPollMs: number;
  settleMs: number;
  retryMs: number;
}

export interface BootControllerOptions {
  edge: Pick<RedfishEdge, 'observe' | 'run'>;
  timings: BootTimings;
  /** Namespace of the policy ConfigMap. */
  policyNamespace: string;
  workers?: number;
  clock?: () => Date;
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const ka = Object.keys(ra).filter((k) => ra[k] !== undefined);
  const kb = Object.keys(rb).filter((k) => rb[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => jsonEqual(ra[k], rb[k]));
}

export class BootController {
  readonly controller: Controller;
  readonly metrics: BootMetrics;
  readonly policy = new PolicyStore();
  readonly #mgr: Manager;
  readonly #o: BootControllerOptions;
  readonly #boots: Informer<ServerBoot>;
  readonly #servers: Informer<Server>;
  readonly #maintenances: Informer<ServerMaintenance>;
  readonly #bmcs: Informer<BMC>;
  readonly #secrets: Informer<BMCSecret>;
  readonly #sbcs: Informer<ServerBootConfiguration>;
  readonly #bootClient: ResourceClient<ServerBoot>;
  readonly #sbcClient: ResourceClient<ServerBootConfiguration>;
  /**
   * Our last write per key until the cache has caught up with it: a requeue that fires before
   * the watch event must not decide on the old status (and, say, reset a server twice).
   */
  readonly #latest = new WriteOverlay<ServerBoot>(withoutManagedFields);

  constructor(mgr: Manager, options: BootControllerOptions) {
    this.#mgr = mgr;
    this.#o = options;
    this.#bootClient = mgr.client.resource<ServerBoot>(ServerBootResource);
    this.#sbcClient = mgr.client.resource<ServerBootConfiguration>(ServerBootConfigurationResource);
    this.#boots = mgr.informer<ServerBoot>(ServerBootResource, {
      indexers: {
        server: (b) => [b.spec.serverRef.name],
        maintenance: (b) =>
          b.spec.maintenanceRef ? [`${b.metadata.namespace ?? ''}/${b.spec.maintenanceRef.name}`] : [],
      },
    });
    this.#servers = mgr.informer<Server>(ServerResource);
    this.#maintenances = mgr.informer<ServerMaintenance>(ServerMaintenanceResource);
    this.#bmcs = mgr.informer<BMC>(BMCResource);
    this.#secrets = mgr.informer<BMCSecret>(BMCSecretResource);
    // Only the configurations this controller made (labelled with their boot's uid).
    this.#sbcs = mgr.informer<ServerBootConfiguration>(ServerBootConfigurationResource, {
      labelSelector: SBC_BOOT_LABEL,
    });
    const policyMaps = mgr.informer<KubeObject & { data?: Record<string, string> }>(Core.ConfigMap, {
      namespace: options.policyNamespace,
      fieldSelector: `metadata.name=${POLICY_CONFIGMAP.name}`,
    });
    this.metrics = new BootMetrics(mgr.registry, () => this.#boots.list());
    this.controller = mgr.controller({
      name: 'serverboot',
      workers: options.workers ?? 4,
      reconcile: (key) => this.reconcile(key),
    });
    this.#wire(policyMaps);
  }

  #wire(policyMaps: Informer<KubeObject & { data?: Record<string, string> }>): void {
    const enqueue = (b: ServerBoot) => this.controller.enqueue(objectKey(b.metadata));
    const onBoot = (b: ServerBoot) => enqueue(b);
    this.#boots.on({
      add: onBoot,
      update: (_, b) => onBoot(b),
      delete: (b) => this.#latest.forget(b.metadata),
    });
    const byServer = (s: Server) => this.#boots.byIndex('server', s.metadata.name ?? '').forEach(enqueue);
    this.#servers.on({ add: byServer, update: (_, s) => byServer(s), delete: byServer });
    const byMaintenance = (m: ServerMaintenance) =>
      this.#boots.byIndex('maintenance', objectKey(m.metadata)).forEach(enqueue);
    this.#maintenances.on({ add: byMaintenance, update: (_, m) => byMaintenance(m), delete: byMaintenance });
    // Credentials or addresses changed: every unfinished boot may be affected (few at a time).
    const unfinished = () =>
      this.#boots
        .list()
        .filter((b) => b.status?.phase !== 'Completed')
        .forEach(enqueue);
    this.#bmcs.on({ add: unfinished, update: unfinished, delete: unfinished });
    this.#secrets.on({ add: unfinished, update: unfinished, delete: unfinished });
    // A configuration has its boot's name and namespace.
    const bySbc = (s: ServerBootConfiguration) => this.controller.enqueue(objectKey(s.metadata));
    this.#sbcs.on({ add: bySbc, update: (_, s) => bySbc(s), delete: bySbc });
    const onPolicy = (cm: KubeObject) => {
      const result = this.policy.update(cm);
      if (!result.ok)
        this.#mgr.logger.warn(
          { errors: result.errors, kept: result.kept },
          'policy refused; keeping the last good one',
        );
    };
    policyMaps.on({ add: onPolicy, update: (_, cm) => onPolicy(cm) });
  }

  #context(): BootContext {
    const policy = this.policy.current();
    return {
      now: this.#o.clock?.() ?? new Date(),
      defaultPhaseTimeoutMs: policy
        ? durationMs(policy.timeouts.bootPhase) || DEFAULT_PHASE_TIMEOUT_MS
        : DEFAULT_PHASE_TIMEOUT_MS,
      ...this.#o.timings,
    };
  }

  #world(boot: ServerBoot): BootWorld {
    const ns = boot.metadata.namespace;
    const server = this.#servers.getByName(boot.spec.serverRef.name);
    const ref = boot.spec.maintenanceRef?.name;
    const sbc = this.#sbcs.getByName(boot.metadata.name ?? '', ns);
    return {
      server,
      maintenance: ref ? this.#maintenances.getByName(ref, ns) : undefined,
      access: server
        ? resolveAccess(server, {
            bmc: (n) => this.#bmcs.getByName(n),
            secret: (n) => this.#secrets.getByName(n),
          })
        : {
            ok: false,
            reason: 'ServerNotFound',
            message: `server ${boot.spec.serverRef.name} does not exist`,
          },
      sbc: sbc?.metadata.labels?.[SBC_BOOT_LABEL] === boot.metadata.uid ? sbc : undefined,
    };
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const boot = this.#latest.fresh(this.#boots.get(key));
    if (!boot) return;
    const finalized = boot.metadata.finalizers?.includes(BOOT_FINALIZER) ?? false;
    if (boot.metadata.deletionTimestamp && !finalized) return;
    if (!finalized) return this.#addFinalizer(key, boot);
    const world = this.#world(boot);
    const ctx = this.#context();
    let decision = decide(boot, world, ctx);
    if (decision.kind === 'observe') {
      world.bmc = world.access.ok
        ? await this.#o.edge.observe(world.access.access, boot)
        : { ok: false, error: errorView(noAccess(world.access.message)) };
      decision = decide(boot, world, ctx);
    }
    if (decision.kind === 'observe') throw internal('the decision asked for a second observation');
    decision = await this.#runActions(boot, world, decision, ctx);
    await this.#commit(key, boot, decision, ctx.now);
    return decision.kind === 'act' && decision.requeueAfterMs !== undefined
      ? { requeueAfterMs: decision.requeueAfterMs }
      : undefined;
  }

  async #runActions(
    boot: ServerBoot,
    world: BootWorld,
    decision: Decision,
    ctx: BootContext,
  ): Promise<Decision> {
    if (decision.kind !== 'act') return decision;
    for (const action of decision.actions) {
      try {
        await this.#run(boot, world, action);
        if (action.kind === 'setOverride' && boot.status?.phase === 'Running') {
          this.metrics.rearms.inc({ method: boot.spec.method });
        }
      } catch (e) {
        const secrets = world.access.ok ? [world.access.access.credentials.password] : [];
        return onActionError(boot, world, action, errorView(e, secrets), ctx);
      }
    }
    return decision;
  }

  async #run(boot: ServerBoot, world: BootWorld, action: BootAction): Promise<void> {
    if (action.kind === 'createSbc') return this.#createSbc(boot, action.sbc);
    if (action.kind === 'deleteSbc') {
      try {
        await this.#sbcClient.delete(action.name, {
          namespace: action.namespace,
          preconditions: world.sbc?.metadata.uid ? { uid: world.sbc.metadata.uid } : undefined,
        });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      return;
    }
    if (!world.access.ok) throw noAccess(world.access.message);
    await this.#o.edge.run(world.access.access, action);
  }

  async #createSbc(boot: ServerBoot, sbc: ServerBootConfiguration): Promise<void> {
    try {
      await this.#sbcClient.create(sbc);
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      const existing = await this.#sbcClient.get(sbc.metadata.name ?? '', sbc.metadata.namespace);
      if (existing.metadata.labels?.[SBC_BOOT_LABEL] !== boot.metadata.uid)
        throw sbcConflict(objectKey(sbc.metadata));
    }
  }

  async #commit(key: string, boot: ServerBoot, decision: Decision, now: Date): Promise<void> {
    if (decision.kind !== 'act') return;
    const { name, namespace } = splitKey(key);
    if (decision.status && !jsonEqual(decision.status, boot.status ?? {})) {
      const written = await this.#mgr.status.applyStatus(
        this.#bootClient,
        { name, namespace },
        decision.status,
      );
      if (!written) return;
      this.#latest.wrote(written);
      this.metrics.transition(boot, written, now);
    }
    const regarding = { ...boot, apiVersion: ServerBootKind.apiVersion, kind: ServerBootKind.kind };
    for (const ev of decision.events) this.#mgr.events.record(regarding, ev.type, ev.reason, 'Boot', ev.note);
    if (decision.releaseFinalizer) {
      await this.#mgr.status.updateWithRetry(this.#bootClient, { name, namespace }, (cur) => {
        if (!cur.metadata.finalizers?.includes(BOOT_FINALIZER)) return undefined;
        cur.metadata.finalizers = cur.metadata.finalizers.filter((f) => f !== BOOT_FINALIZER);
        return cur;
      });
    }
  }

  async #addFinalizer(key: string, boot: ServerBoot): Promise<ReconcileResult> {
    const updated = await this.#mgr.status.updateWithRetry(
      this.#bootClient,
      splitKey(key),
      (cur) => {
        if (cur.metadata.deletionTimestamp || cur.metadata.finalizers?.includes(BOOT_FINALIZER))
          return undefined;
        cur.metadata.finalizers = [...(cur.metadata.finalizers ?? []), BOOT_FINALIZER];
        return cur;
      },
      { initial: boot },
    );
    if (updated) this.#latest.wrote(updated);
    return { requeueAfterMs: 0 };
  }
}
