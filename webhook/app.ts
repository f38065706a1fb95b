// The webhook process, wired: informer caches (the WorldView), the policy feed, the API-server
// BudgetStore, the HTTPS server with certificate reload, and the ops port (/healthz, /readyz, /metrics).
//
// Stateless and HA: every replica serves, no leader election. The only shared state is the budgets'
// grant ledgers on the API server, taken by compare-and-swap, so any number of replicas stay safe.
//
// Start: ops port → informers → caches synced and policy decided → certificate → listen. A replica
// listens only when it can decide, so a load balancer that routes to listening ports never reaches one
// that would answer METAL_ERR_NO_POLICY.
// Stop: readiness fails at once → wait `shutdownDelayMs` (endpoints drop the pod) → close the HTTPS
// server (in-flight reviews finish; idle keep-alive connections close) → informers, ops, client.
import type { Logger } from 'pino';
import type { Server } from '../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../api/metal/v1alpha1/serverclaim.js';
import type { BMC } from '../api/metal/v1alpha1/bmc.js';
import type { ServerMaintenance } from '../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import type { KubeClient } from '../lib/kube/client.js';
import { withManagerNamesOnly, withoutManagedFields } from '../lib/kube/informer.js';
import { Manager } from '../lib/kube/manager.js';

import { watchPolicy, type PolicyRef } from '../lib/policy/feed.js';
import { PolicyStore } from '../lib/policy/store.js';
import { ApiBudgetStore } from '../lib/kube/budget-store.js';
import { InformerWorld, WORLD_INDEXERS, type WorldSources } from './informer-world.js';
import type { LogSampling } from '../lib/log-sampling.js';
import { createWebhookServer, type WebhookServer } from './server.js';
import { CertReloader, type CertFiles } from './tls.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { type AnyBudget, type BudgetRef } from '../contract/budgets.js';
import { createGrantor } from './grants/reserve.js';
import {
  BMCResource,
  ServerClaimDisruptionBudgetResource,
  ServerClaimResource,
  ServerDisruptionBudgetResource,
  ServerMaintenanceResource,
  ServerResource,
} from '../lib/kube/kinds.js';

export interface WebhookAppOptions {
  client: KubeClient;
  logger: Logger;
  host: string;
  port: number;
  certFiles: CertFiles;
  certPollMs?: number;
  policy: PolicyRef;
  policyWhenMissing?: 'defaults' | 'none';
  /** Plain-HTTP ops port; undefined: none. */
  ops?: { host: string; port: number };
  /** How long to keep serving after SIGTERM while readiness already fails. */
  shutdownDelayMs?: number;
  syncTimeoutMs?: number;
  /** Denial lines' sampling (server.ts; default 100:100); false: every line. */
  logSampling?: LogSampling | false;
}

/** The informers the WorldView reads, each with the indexes it needs, from a Manager. */
export function worldInformers(mgr: Manager): WorldSources {
  // No rule reads managedFields, except the consumer check on claims, which asks only who wrote one.
  const transform = withoutManagedFields;
  return {
    servers: mgr.informer<Server>(ServerResource, { indexers: WORLD_INDEXERS.servers, transform }),
    claims: mgr.informer<ServerClaim>(ServerClaimResource, {
      indexers: WORLD_INDEXERS.claims,
      transform: withManagerNamesOnly,
    }),
    maintenances: mgr.informer<ServerMaintenance>(ServerMaintenanceResource, {
      indexers: WORLD_INDEXERS.maintenances,
      transform,
    }),
    serverBudgets: mgr.informer<ServerDisruptionBudget>(ServerDisruptionBudgetResource, {
      transform,
    }),
    claimBudgets: mgr.informer<ServerClaimDisruptionBudget>(ServerClaimDisruptionBudgetResource, {
      indexers: WORLD_INDEXERS.claimBudgets,
      transform,
    }),
    bmcs: mgr.informer<BMC>(BMCResource, { transform }),
  };
}

export class WebhookApp {
  readonly manager: Manager;
  readonly world: InformerWorld;
  readonly policies = new PolicyStore();
  readonly #o: WebhookAppOptions;
  readonly #policySynced: Promise<void>;
  readonly #cachedBudget: (ref: BudgetRef) => AnyBudget | undefined;
  #server: WebhookServer | undefined;
  #stopping = false;
  #stopped: Promise<void> | undefined;

  constructor(options: WebhookAppOptions) {
    this.#o = options;
    this.manager = new Manager({
      name: 'webhook',
      client: options.client,
      logger: options.logger,
      leaderElection: false,
      ...(options.ops ? { ops: options.ops } : {}),
      ...(options.syncTimeoutMs ? { syncTimeoutMs: options.syncTimeoutMs } : {}),
    });
    const informers = worldInformers(this.manager);
    this.world = new InformerWorld(informers);
    this.#cachedBudget = (ref) =>
      ref.kind === 'ServerDisruptionBudget'
        ? informers.serverBudgets.getByName(ref.name)
        : informers.claimBudgets.getByName(ref.name, ref.namespace);
    const feed = watchPolicy(this.manager, this.policies, {
      ref: options.policy,
      whenMissing: options.policyWhenMissing ?? 'defaults',
    });
    // Registered now so that an unsynced feed never rejects unobserved (start awaits it).
    this.#policySynced = feed.synced;
    this.#policySynced.catch(() => undefined);
    this.manager.addReadinessCheck({
      name: 'serving',
      check: () => (this.#stopping ? 'shutting down' : this.#server ? true : 'not listening yet'),
    });
  }

  /** The port the HTTPS server listens on (after start). */
  get port(): number {
    const addr = this.#server?.app.server.address();
    return typeof addr === 'object' && addr ? addr.port : 0;
  }

  async start(): Promise<void> {
    const { logger } = this.#o;
    await this.manager.start();
    await this.#policySynced;
    const reloader = new CertReloader(this.#o.certFiles, {
      logger,
      ...(this.#o.certPollMs ? { intervalMs: this.#o.certPollMs } : {}),
    });
    const tls = await reloader.load();
    const server = createWebhookServer({
      world: this.world,
      policies: this.policies,
      grant: createGrantor(new ApiBudgetStore(this.#o.client, { cached: this.#cachedBudget })),
      isReady: () => this.world.hasSynced() && !this.#stopping,
      logger,
      registry: this.manager.registry,
      tls,
      policyConfigMap: this.#o.policy,
      ...(this.#o.logSampling !== undefined ? { logSampling: this.#o.logSampling } : {}),
    });
    server.watchCertificates(reloader);
    if (this.#stopping) return;
    await server.app.listen({ host: this.#o.host, port: this.#o.port });
    this.#server = server;
    logger.info(
      { port: this.port, opsPort: this.manager.opsPort, policyLoaded: this.policies.isLoaded() },
      'webhook serving',
    );
  }

  stop(): Promise<void> {
    this.#stopped ??= this.#stop();
    return this.#stopped;
  }

  async #stop(): Promise<void> {
    this.#stopping = true;
    if (this.#server && this.#o.shutdownDelayMs) await sleep(this.#o.shutdownDelayMs);
    await this.#server?.app.close();
    await this.manager.stop();
    this.#o.logger.info('webhook stopped');
  }
}
