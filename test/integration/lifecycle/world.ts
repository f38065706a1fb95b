// The lifecycle suite's world, the part both targets share: its types and short policy, the fleet
// simulator, the recorder of every ServerMaintenance state the watch shows, the clients, and the
// seeding of a case's servers and claims. harness.ts starts it locally, cluster-mode.ts against the
// installed system; both re-export from here, so the suites import from harness.ts as before. Its own
// file so that neither start imports the other.
import { stringify } from 'yaml';
import type { Server } from '../../../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../../../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { KubeObject } from '../../../api/schema/meta.js';
import { KubeClient, type ResourceClient } from '../../../lib/kube/client.js';
import { Informer } from '../../../lib/kube/informer.js';
import { Core } from '../../../lib/kube/resources.js';
import { POLICY_CONFIGMAP } from '../../../policies/schema.js';
import { freshNamespace, uniqueName, waitFor } from '../../../e2e/harness/env.js';
import { kubeconfigForBinary, type RunningBinary } from '../../../e2e/harness/processes.js';
import type { WebhookHandle } from '../../../e2e/harness/webhook.js';
import { FleetSimulator } from '../../../e2e/sim/fleet/simulator.js';
import { CLAIM_FINALIZER } from '../../../e2e/sim/fleet/decisions.js';
import { FLEET_LABEL, TENANT_LABEL } from '../../../e2e/sim/fleet/fleet.js';
import {
  ServerClaimResource,
  ServerDisruptionBudgetResource,
  ServerMaintenanceResource,
  ServerResource,
} from '../../../lib/kube/kinds.js';
import type { InstalledBinary } from '../../../e2e/harness/installed.js';
import type { StateRecord } from './history.js';
import type { Created } from './cluster-mode.js';

export type ControllerName =
  'maintenance-controller' | 'approval-controller' | 'budget-controller' | 'drain-controller';
export const CONTROLLERS: readonly ControllerName[] = [
  'maintenance-controller',
  'approval-controller',
  'budget-controller',
];

/** Claims carrying this label have a consumer (policy autoApproval.consumerLabels). */
export const CONSUMER_LABEL = 'lifecycle.metal.ironcore.dev/consumer';
/** Every object of one test case carries its case label, for budgets that select exactly it. */
export const CASE_LABEL = 'lifecycle.metal.ironcore.dev/case';

/** The suite's policy: short, so deadlines, TTLs and timeouts happen within a test. */
export const TEST_POLICY = {
  apiVersion: 'policy.maintenance.metal.ironcore.dev/v1alpha1',
  kind: 'MaintenancePolicy',
  classes: {
    Planned: { approvalRequired: true, deadline: '1h', minNotice: '0s', requireWindow: false },
    Urgent: { approvalRequired: true, deadline: '1h', minNotice: '0s', requireWindow: false },
    Emergency: { approvalRequired: false, deadline: '1h', minNotice: '0s', requireWindow: false },
  },
  autoApproval: {
    consumerLabels: [CONSUMER_LABEL],
    rules: [
      { name: 'no-consumer', when: 'NoConsumer', after: '3s', classes: ['Planned', 'Urgent', 'Emergency'] },
    ],
  },
  windows: [] as unknown[],
  grants: { ttl: '15s', ledgerCap: 2000 },
  legacyLabels: { mode: 'translate' },
  timeouts: { approval: '10m', park: '30s', inMaintenance: '10m', bootPhase: '30s' },
  // Only the firmware controller reads it: phases short enough to time out within a test.
  firmware: {
    class: 'Planned',
    defaultMaxAttempts: 0,
    retryBackoff: '2s',
    retryBackoffMax: '10s',
    timeouts: { admission: '60s', issue: '20s', task: '8s', reboot: '30s', verify: '20s' },
  },
};
export type TestPolicy = typeof TEST_POLICY;

export interface LifecycleOptions {
  policy?: Partial<TestPolicy>;
  /** Extra flags per controller (e.g. --park-mode=off). */
  flags?: Partial<Record<ControllerName, string[]>>;
  /** The simulated actor's default hold once a maintenance is Ready; undefined: no actor. */
  actorHoldMs?: number;
  /** Controllers started besides CONTROLLERS (the drain controller). */
  extra?: ControllerName[];
}

export interface Fleet {
  name: string;
  servers: string[];
  /** claims[i] is bound to servers[i] (when the case has claims). */
  claims: { namespace: string; name: string }[];
  tenant: string;
}

export interface FleetOptions {
  servers: number;
  /** Bind a claim to every server: with a consumer label, without one, or none at all. */
  claims?: 'consumer' | 'no-consumer' | 'none';
  approvalMode?: 'Manual' | 'Automatic';
  serverLabels?: Record<string, string>;
}

export interface Lifecycle {
  admin: KubeClient;
  webhook: WebhookHandle;
  sim: FleetSimulator;
  /** The simulator's fleet label value: every server and claim of this suite carries it. */
  fleetName: string;
  /** Namespace for this suite's ServerMaintenances. */
  ns: string;
  controllers: Record<ControllerName, RunningBinary>;
  /** Cluster mode: the installed binaries by name (webhook and controllers); local mode: undefined. */
  installed?: Record<string, InstalledBinary>;
  /** Every ServerMaintenance state the watch showed in `ns`, in order. */
  history: StateRecord[];
  servers: ResourceClient<Server>;
  claims: ResourceClient<ServerClaim>;
  maintenances: ResourceClient<ServerMaintenance>;
  sdbs: ResourceClient<ServerDisruptionBudget>;
  fleet(caseName: string, options: FleetOptions): Promise<Fleet>;
  maintenance(
    name: string,
    server: string,
    spec?: Partial<ServerMaintenance['spec']>,
    annotations?: Record<string, string>,
  ): Promise<ServerMaintenance>;
  setPolicy(policy: Partial<TestPolicy>): Promise<void>;
  kill(name: ControllerName, signal?: NodeJS.Signals): Promise<void>;
  start(name: ControllerName): Promise<RunningBinary>;
  stop(): Promise<void>;
}

export function policyData(policy: Partial<TestPolicy>): Record<string, string> {
  return { [POLICY_CONFIGMAP.key]: stringify({ ...TEST_POLICY, ...policy }) };
}

export async function writePolicy(admin: KubeClient, data: Record<string, string>): Promise<void> {
  await admin
    .resource<KubeObject & { data?: Record<string, string> }>(Core.ConfigMap)
    .patch(POLICY_CONFIGMAP.name, { data }, { namespace: POLICY_CONFIGMAP.namespace });
}

export type World = Omit<Lifecycle, 'webhook' | 'controllers' | 'installed' | 'kill' | 'start' | 'stop'> & {
  stopObserving(): Promise<void>;
  /** The fleet and maintenance helpers need the finished world. */
  bind(lc: Lifecycle): void;
};

/** The fleet simulator, the state recorder and the clients: the same for both targets. */
export async function observe(
  admin: KubeClient,
  fleetName: string,
  ns: string,
  options: LifecycleOptions,
  created?: Created,
): Promise<World> {
  const simKubeconfig = (await kubeconfigForBinary(admin, 'fleet-simulator', 'e2e/sim/fleet/rbac.yaml'))
    .kubeconfig;
  const sim = new FleetSimulator({
    client: await KubeClient.fromFile(simKubeconfig),
    labelSelector: `${FLEET_LABEL}=${fleetName}`,
    timings: { discoveryMs: 100, powerMs: 100 },
    ...(options.actorHoldMs !== undefined ? { actor: { holdMs: options.actorHoldMs, namespace: ns } } : {}),
  });
  await sim.start();

  const history: StateRecord[] = [];
  const watch = new Informer<ServerMaintenance>(
    admin.resource<ServerMaintenance>(ServerMaintenanceResource),
    { namespace: ns },
  );
  const record = (m: ServerMaintenance, deleted: boolean) =>
    history.push({
      at: Date.now(),
      uid: m.metadata.uid ?? '',
      name: m.metadata.name ?? '',
      server: m.spec.serverRef.name,
      state: m.status?.state ?? 'Pending',
      deleted,
    });
  watch.on({
    add: (m) => record(m, false),
    update: (_o, m) => record(m, false),
    delete: (m) => record(m, true),
  });
  watch.start();
  await watch.waitForSync();

  const servers = admin.resource<Server>(ServerResource);
  const claims = admin.resource<ServerClaim>(ServerClaimResource);
  const maintenances = admin.resource<ServerMaintenance>(ServerMaintenanceResource);
  const sdbs = admin.resource<ServerDisruptionBudget>(ServerDisruptionBudgetResource);
  // Cluster mode deletes the budgets the run created (they are cluster-scoped).
  const trackedSdbs: ResourceClient<ServerDisruptionBudget> = created
    ? new Proxy(sdbs, {
        get(target, prop) {
          if (prop === 'create')
            return async (...args: Parameters<typeof sdbs.create>) => {
              const b = await target.create(...args);
              created.budgets.push(b.metadata.name!);
              return b;
            };
          const v = Reflect.get(target, prop, target) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      })
    : sdbs;

  let lc: Lifecycle | undefined;
  const bound = () => {
    if (!lc) throw new Error('the lifecycle world is not bound yet');
    return lc;
  };
  return {
    admin,
    sim,
    fleetName,
    ns,
    history,
    servers,
    claims,
    maintenances,
    sdbs: trackedSdbs,
    fleet: (caseName, o) => seed(bound(), caseName, o, created),
    maintenance: (name, server, spec = {}, annotations) =>
      maintenances.create({
        metadata: { name, namespace: ns, ...(annotations ? { annotations } : {}) },
        spec: { serverRef: { name: server }, ...spec },
      }),
    setPolicy: (policy) => writePolicy(admin, policyData(policy)),
    bind: (l) => {
      lc = l;
    },
    async stopObserving() {
      await watch.stop();
      await sim.stop().catch(() => undefined);
    },
  };
}

/** Servers (Available, or Reserved and bound) and claims of one case, as metal-operator leaves them. */
async function seed(lc: Lifecycle, caseName: string, o: FleetOptions, created?: Created): Promise<Fleet> {
  const { admin, fleetName } = lc;
  const tenant = await freshNamespace(admin, `lc-${caseName}`);
  created?.namespaces.push(tenant);
  const id = uniqueName(caseName);
  const names = Array.from({ length: o.servers }, (_, i) => `${id}-s${i}`);
  const withClaims = (o.claims ?? 'none') !== 'none';
  const claims = withClaims ? names.map((_, i) => ({ namespace: tenant, name: `${id}-c${i}` })) : [];
  const labels = { [FLEET_LABEL]: fleetName, [CASE_LABEL]: id };
  // Claims first, and seen by the simulator before their servers exist: like metal-operator, it
  // releases a server whose claim it cannot find.
  await Promise.all(
    claims.map((claim, i) =>
      lc.claims.create({
        metadata: {
          name: claim.name,
          namespace: tenant,
          finalizers: [CLAIM_FINALIZER],
          labels: {
            ...labels,
            [TENANT_LABEL]: tenant,
            ...(o.claims === 'consumer' ? { [CONSUMER_LABEL]: 'node' } : {}),
          },
        },
        spec: {
          power: 'On',
          image: 'ghcr.io/ironcore-dev/os-images/gardenlinux:1877.0',
          serverRef: { name: names[i]! },
          ...(o.approvalMode ? { maintenance: { approvalMode: o.approvalMode } } : {}),
        },
      }),
    ),
  );
  await waitFor('the simulator sees the claims', () =>
    claims.every((c) => lc.sim.claims.getByName(c.name, c.namespace)),
  );
  await Promise.all(
    names.map(async (name, i) => {
      const claim = claims[i];
      await lc.servers.create({
        metadata: { name, labels: { ...labels, ...o.serverLabels } },
        spec: { systemUUID: name, ...(claim ? { serverClaimRef: claim } : {}) },
      });
      await lc.servers.patch(
        name,
        {
          status: claim ? { state: 'Reserved', powerState: 'On' } : { state: 'Available', powerState: 'Off' },
        },
        { subresource: 'status' },
      );
      if (claim)
        await lc.claims.patch(
          claim.name,
          { status: { phase: 'Bound' } },
          { namespace: tenant, subresource: 'status' },
        );
    }),
  );
  // Bound as metal-operator leaves it: the server names the claim, the claim is Bound.
  await waitFor('servers bound', async () => {
    for (const [i, name] of names.entries()) {
      const s = await lc.servers.get(name);
      if (claims[i] && s.spec.serverClaimRef?.name !== claims[i].name)
        throw new Error(`server ${name} lost its claim`);
      if (!s.status?.state) return false;
    }
    return true;
  });
  return { name: id, servers: names, claims, tenant };
}
