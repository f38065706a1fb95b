// FleetSimulator: runs the decisions in decisions.ts against a real API server, through informers
// and work queues (lib/kube), the way metal-operator's reconcilers would. Every write it makes goes
// through the API server, so the admission webhook judges the simulator's bindings like anyone
// else's. A SIMULATOR for tests, benchmarks and the demo; the product never imports it.
//
//   const sim = new FleetSimulator({ client, actor: { holdMs: 5000 } });
//   await sim.start();   // caches synced, reconcilers running
//   ...
//   await sim.stop();    // also closes the client it was given
import type { Logger } from 'pino';
import { ServerKind, type Server } from '../../../api/metal/v1alpha1/server.js';
import { ServerClaimKind, type ServerClaim } from '../../../api/metal/v1alpha1/serverclaim.js';
import {
  ServerMaintenanceKind,
  type ServerMaintenance,
} from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import type { KubeClient, ResourceClient } from '../../../lib/kube/client.js';
import type { Informer } from '../../../lib/kube/informer.js';
import { Manager } from '../../../lib/kube/manager.js';
import { objectKey, resourceOf, splitKey } from '../../../lib/kube/resources.js';
import { isConflict, isForbidden, isNotFound, KubeApiError } from '../../../lib/kube/errors.js';
import type { ReconcileResult } from '../../../lib/kube/controller.js';
import { silentLogger } from '../../../lib/log.js';
import { errorMessage } from '../../../lib/errors.js';
import {
  CLAIM_FINALIZER,
  DEFAULT_TIMINGS,
  OPERATION_ANNOTATION,
  PARKED_ANNOTATION,
  chooseServer,
  claimRefOf,
  notClaimableReason,
  planClaim,
  planHold,
  planServer,
  actorMayStart,
  type ActorStart,
  type ClaimLookup,
  type ServerStep,
  type SimTimings,
} from './decisions.js';

export interface ActorOptions {
  /** Default hold time of a maintenance once InMaintenance (the annotation wins). */
  holdMs: number;
  /** Only maintenances in this namespace (default: all). */
  namespace?: string;
  /** Start the hold at Ready=True (default, like real actors) or at InMaintenance alone. */
  startOn?: ActorStart;
}

export interface FleetSimulatorOptions {
  /** The simulator's client (ideally the fleet-simulator ServiceAccount); closed by stop(). */
  client: KubeClient;
  timings?: Partial<SimTimings>;
  /** Hold and then delete maintenances once InMaintenance; off when undefined. */
  actor?: ActorOptions;
  logger?: Logger;
  /**
   * Simulate only Servers and ServerClaims with these labels (e.g. `fleet-sim.metal.ironcore.dev/fleet=t1`),
   * so tests sharing one API server do not move each other's objects. Default: everything.
   */
  labelSelector?: string;
  /** Parallel reconciles of servers / claims. */
  serverWorkers?: number;
  claimWorkers?: number;
}

export interface FleetSimulatorStats {
  statusWrites: number;
  binds: number;
  bindsDenied: number;
  bindConflicts: number;
  parks: number;
  unparks: number;
  releases: number;
  holdsCompleted: number;
  /** Denial codes the webhook answered binding writes with (METAL_ERR_* → count). */
  denials: Record<string, number>;
  /**
   * How long each park and unpark took the simulator, from first seeing the request to writing its
   * marker (ms): metal-operator's share of a maintenance's overhead, for benchmarks to attribute.
   */
  parkMs: number[];
  unparkMs: number[];
}

/** One finished hold of the actor: when it started (see ActorStart) and when it deleted the maintenance. */
export interface HoldRecord {
  key: string;
  server: string;
  startedAt: number;
  deletedAt: number;
}

const SERVERS_BY_CLAIM = 'byClaim';
const CLAIMS_BY_SERVER = 'byServerRef';

export class FleetSimulator {
  readonly manager: Manager;
  readonly stats: FleetSimulatorStats = {
    statusWrites: 0,
    binds: 0,
    bindsDenied: 0,
    bindConflicts: 0,
    parks: 0,
    unparks: 0,
    releases: 0,
    holdsCompleted: 0,
    denials: {},
    parkMs: [],
    unparkMs: [],
  };
  readonly holds: HoldRecord[] = [];
  readonly servers: Informer<Server>;
  readonly claims: Informer<ServerClaim>;
  readonly maintenances: Informer<ServerMaintenance> | undefined;
  readonly #t: SimTimings;
  readonly #log: Logger;
  readonly #serverApi: ResourceClient<Server>;
  readonly #claimApi: ResourceClient<ServerClaim>;
  readonly #maintenanceApi: ResourceClient<ServerMaintenance>;
  /** (state, powerState) a server was last seen in, and since when: the clock of timed steps. */
  readonly #seen = new Map<string, { phase: string; since: number }>();
  /** When a park or unpark request was first seen, per server. */
  readonly #requestSeen = new Map<string, { op: string; at: number }>();
  /** Claims with neither a bound server nor a serverRef: re-evaluated when a server frees up. */
  readonly #waitingClaims = new Set<string>();
  /** Servers this process is binding right now, so two claims do not race for one in-process. */
  readonly #binding = new Set<string>();
  readonly #inMaintenanceSince = new Map<string, number>();
  readonly #actor: ActorOptions | undefined;
  #sortedServers: Server[] | undefined;

  constructor(options: FleetSimulatorOptions) {
    this.#t = { ...DEFAULT_TIMINGS, ...options.timings };
    this.#log = (options.logger ?? silentLogger).child({ component: 'fleet-simulator' });
    this.#actor = options.actor;
    const client = options.client;
    this.manager = new Manager({ name: 'fleet-simulator', client, logger: this.#log, leaderElection: false });
    this.#serverApi = client.resource<Server>(resourceOf(ServerKind));
    this.#claimApi = client.resource<ServerClaim>(resourceOf(ServerClaimKind));
    this.#maintenanceApi = client.resource<ServerMaintenance>(resourceOf(ServerMaintenanceKind));
    const labelSelector = options.labelSelector;
    this.servers = this.manager.informer<Server>(resourceOf(ServerKind), {
      labelSelector,
      indexers: {
        [SERVERS_BY_CLAIM]: (s) => (s.spec.serverClaimRef ? [objectKey(s.spec.serverClaimRef)] : []),
      },
    });
    this.claims = this.manager.informer<ServerClaim>(resourceOf(ServerClaimKind), {
      labelSelector,
      indexers: { [CLAIMS_BY_SERVER]: (c) => (c.spec.serverRef ? [c.spec.serverRef.name] : []) },
    });
    const queue = { qps: 500, burst: 2000, baseDelayMs: 50, maxDelayMs: 10_000 };
    const serverCtl = this.manager.controller({
      name: 'sim-servers',
      workers: options.serverWorkers ?? 8,
      queue,
      reconcile: (key) => this.#reconcileServer(key),
    });
    const claimCtl = this.manager.controller({
      name: 'sim-claims',
      workers: options.claimWorkers ?? 4,
      queue,
      reconcile: (key) => this.#reconcileClaim(key),
    });
    this.servers.on({
      add: (s) =>
        this.#onServer(undefined, s, serverCtl.enqueue.bind(serverCtl), claimCtl.enqueue.bind(claimCtl)),
      update: (o, s) =>
        this.#onServer(o, s, serverCtl.enqueue.bind(serverCtl), claimCtl.enqueue.bind(claimCtl)),
      delete: (s) => {
        this.#sortedServers = undefined;
        this.#seen.delete(s.metadata.name ?? '');
        if (s.spec.serverClaimRef) claimCtl.enqueue(objectKey(s.spec.serverClaimRef));
      },
    });
    const onClaim = (c: ServerClaim) => {
      const key = objectKey(c.metadata);
      claimCtl.enqueue(key);
      for (const s of this.servers.byIndex(SERVERS_BY_CLAIM, key)) serverCtl.enqueue(s.metadata.name ?? '');
    };
    this.claims.on({
      add: onClaim,
      update: (_o, c) => onClaim(c),
      delete: (c) => {
        this.#waitingClaims.delete(objectKey(c.metadata));
        onClaim(c);
      },
    });
    if (this.#actor) {
      const actorCtl = this.manager.controller({
        name: 'sim-actor',
        workers: 4,
        queue,
        reconcile: (key) => this.#reconcileHold(key),
      });
      this.maintenances = this.manager.informer<ServerMaintenance>(resourceOf(ServerMaintenanceKind), {
        namespace: this.#actor.namespace,
      });
      const onMaintenance = (m: ServerMaintenance) => {
        const key = objectKey(m.metadata);
        if (actorMayStart(m, this.#actor!.startOn ?? 'Ready') && !this.#inMaintenanceSince.has(key))
          this.#inMaintenanceSince.set(key, Date.now());
        actorCtl.enqueue(key);
      };
      this.maintenances.on({
        add: onMaintenance,
        update: (_o, m) => onMaintenance(m),
        delete: (m) => this.#inMaintenanceSince.delete(objectKey(m.metadata)),
      });
    }
  }

  /** Starts informers and reconcilers; resolves once the caches are synced. */
  async start(): Promise<void> {
    await this.manager.start();
  }

  async stop(): Promise<void> {
    await this.manager.stop(5000);
  }

  #onServer(
    old: Server | undefined,
    s: Server,
    enqueueServer: (key: string) => void,
    enqueueClaim: (key: string) => void,
  ): void {
    const name = s.metadata.name ?? '';
    if (!old || old.metadata.name !== s.metadata.name) this.#sortedServers = undefined;
    else this.#replaceSorted(s);
    enqueueServer(name);
    for (const ref of [old?.spec.serverClaimRef, s.spec.serverClaimRef])
      if (ref) enqueueClaim(objectKey(ref));
    for (const c of this.claims.byIndex(CLAIMS_BY_SERVER, name)) enqueueClaim(objectKey(c.metadata));
    // A server that may have become claimable wakes the claims waiting for any server.
    if (s.status?.state === 'Available' && !s.spec.serverClaimRef)
      for (const k of this.#waitingClaims) enqueueClaim(k);
  }

  /** Servers in name order, the order the simulated claim reconciler tries them in. */
  #serversInOrder(): Server[] {
    this.#sortedServers ??= this.servers
      .list()
      .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
    return this.#sortedServers;
  }

  /** A claim with a serverRef looks at that server only, so pinned claims cost O(1) at any scale. */
  #candidates(claim: ServerClaim): Server[] {
    const ref = claim.spec.serverRef;
    if (!ref) return this.#serversInOrder();
    const s = this.servers.getByName(ref.name);
    return s ? [s] : [];
  }

  #replaceSorted(s: Server): void {
    const list = this.#sortedServers;
    if (!list) return;
    // Binary search by name: updates keep the order, so only the element changes.
    let lo = 0;
    let hi = list.length - 1;
    const name = s.metadata.name ?? '';
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const c = (list[mid]!.metadata.name ?? '').localeCompare(name);
      if (c === 0) {
        list[mid] = s;
        return;
      }
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    this.#sortedServers = undefined;
  }

  #elapsed(s: Server): number {
    const name = s.metadata.name ?? '';
    const phase = `${s.status?.state ?? ''}/${s.status?.powerState ?? ''}`;
    const now = Date.now();
    const seen = this.#seen.get(name);
    if (!seen || seen.phase !== phase) {
      this.#seen.set(name, { phase, since: now });
      return 0;
    }
    return now - seen.since;
  }

  async #reconcileServer(name: string): Promise<ReconcileResult | void> {
    const server = this.servers.getByName(name);
    if (!server) return;
    const ref = server.spec.serverClaimRef;
    let claim = ref ? this.claims.getByName(ref.name, ref.namespace) : undefined;
    // Missing from the cache is not gone: a claim created moments ago may not have arrived yet, and
    // releasing (powering off, clearing the binding) is not undone. Ask the API server first.
    if (ref && !claim) claim = await this.#claimApi.find(ref.name, ref.namespace);
    const lookup: ClaimLookup = { claim };
    const op = server.metadata.annotations?.[OPERATION_ANNOTATION];
    if ((op === 'park' || op === 'unpark') && this.#requestSeen.get(name)?.op !== op)
      this.#requestSeen.set(name, { op, at: Date.now() });
    const step = planServer(server, lookup, this.#elapsed(server), this.#t);
    await this.#applyServerStep(server, step);
    if (step.waitMs !== undefined) return { requeueAfterMs: step.waitMs };
  }

  async #applyServerStep(server: Server, step: ServerStep): Promise<void> {
    const name = server.metadata.name ?? '';
    // Each write returns the new resourceVersion; the next one is preconditioned on it, so a change
    // by someone else in between (a new park/unpark request) is never overwritten blindly.
    let rv = server.metadata.resourceVersion;
    if (step.status) {
      rv = (await this.#serverApi.patch(name, { status: step.status }, { subresource: 'status' })).metadata
        .resourceVersion;
      this.stats.statusWrites++;
    }
    if (step.annotations) {
      const parked = step.annotations[PARKED_ANNOTATION];
      rv = (
        await this.#serverApi.patch(name, {
          metadata: { annotations: step.annotations, resourceVersion: rv },
        })
      ).metadata.resourceVersion;
      if (parked === 'true' && server.metadata.annotations?.[PARKED_ANNOTATION] !== 'true')
        this.stats.parks++;
      if (parked === null) this.stats.unparks++;
      this.#requestDone(name, parked);
    }
    if (step.releaseClaim) {
      await this.#serverApi.patch(name, {
        metadata: { resourceVersion: rv },
        spec: { serverClaimRef: null },
      });
      this.stats.releases++;
    }
    if (step.status || step.annotations || step.releaseClaim)
      this.#log.debug({ server: name, why: step.why }, 'step');
  }

  #requestDone(name: string, parked: string | null | undefined): void {
    const seen = this.#requestSeen.get(name);
    if (!seen || parked === undefined) return;
    this.#requestSeen.delete(name);
    (parked === 'true' ? this.stats.parkMs : this.stats.unparkMs).push(Date.now() - seen.at);
  }

  async #reconcileClaim(key: string): Promise<ReconcileResult | void> {
    const claim = this.claims.get(key);
    if (!claim) {
      this.#waitingClaims.delete(key);
      return;
    }
    const bound = this.servers.byIndex(SERVERS_BY_CLAIM, key)[0];
    const step = planClaim(claim, bound, () => chooseServer(this.#candidates(claim), claim, this.#binding));
    const { name, namespace } = splitKey(key);
    if (step.kind === 'wait' && step.why === 'no claimable server' && !claim.spec.serverRef)
      this.#waitingClaims.add(key);
    else this.#waitingClaims.delete(key);
    switch (step.kind) {
      case 'wait':
        return;
      case 'addFinalizer':
      case 'removeFinalizer': {
        const rest = (claim.metadata.finalizers ?? []).filter((f) => f !== CLAIM_FINALIZER);
        const finalizers = step.kind === 'addFinalizer' ? [...rest, CLAIM_FINALIZER] : rest;
        await this.#claimApi.patch(
          name,
          { metadata: { finalizers, resourceVersion: claim.metadata.resourceVersion } },
          { namespace },
        );
        return;
      }
      case 'phase':
        await this.#claimApi.patch(
          name,
          { status: { phase: step.phase } },
          { namespace, subresource: 'status' },
        );
        return;
      case 'recordServerRef':
        await this.#claimApi.patch(name, { spec: { serverRef: { name: step.server } } }, { namespace });
        return;
      case 'bind':
        return this.#bind(claim, step.server);
    }
  }

  /** Upstream claimServer: re-fetch, re-check, write serverClaimRef with an optimistic lock. */
  async #bind(claim: ServerClaim, serverName: string): Promise<ReconcileResult | void> {
    this.#binding.add(serverName);
    try {
      const fresh = await this.#serverApi.find(serverName);
      const why = fresh ? notClaimableReason(fresh, claim) : 'gone';
      if (!fresh || why) {
        this.#log.debug({ server: serverName, why }, 'server no longer claimable');
        return { requeueAfterMs: 200 };
      }
      await this.#serverApi.patch(serverName, {
        metadata: { resourceVersion: fresh.metadata.resourceVersion },
        spec: { serverClaimRef: claimRefOf(claim) },
      });
      this.stats.binds++;
    } catch (e) {
      if (isConflict(e)) {
        this.stats.bindConflicts++;
        return { requeueAfterMs: 50 + Math.random() * 200 };
      }
      if (isForbidden(e) && e instanceof KubeApiError) {
        // The webhook refused the binding (cordon or maintenance arrived after our check).
        this.stats.bindsDenied++;
        const code = /METAL_ERR_[A-Z_]+/.exec(e.status.message ?? '')?.[0] ?? e.reason;
        this.stats.denials[code] = (this.stats.denials[code] ?? 0) + 1;
        this.#log.info({ server: serverName, claim: objectKey(claim.metadata), code }, 'binding denied');
        return { requeueAfterMs: 1000 };
      }
      throw e;
    } finally {
      this.#binding.delete(serverName);
    }
  }

  async #reconcileHold(key: string): Promise<ReconcileResult | void> {
    const m = this.maintenances?.get(key);
    if (!m || !this.#actor) return;
    const since = this.#inMaintenanceSince.get(key);
    const plan = planHold(m, Date.now(), since, this.#actor.holdMs, this.#actor.startOn);
    if (plan.kind === 'wait') return plan.ms !== undefined ? { requeueAfterMs: plan.ms } : undefined;
    const { name, namespace } = splitKey(key);
    try {
      await this.#maintenanceApi.delete(name, { namespace, preconditions: { uid: m.metadata.uid } });
    } catch (e) {
      if (isNotFound(e) || isConflict(e)) return;
      this.#log.warn({ maintenance: key, err: errorMessage(e) }, 'actor: delete failed');
      throw e;
    }
    this.stats.holdsCompleted++;
    this.holds.push({
      key,
      server: m.spec.serverRef.name,
      startedAt: since ?? Date.now(),
      deletedAt: Date.now(),
    });
  }
}
