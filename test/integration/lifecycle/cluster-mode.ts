// The lifecycle suite's world with E2E_TARGET=cluster (startInCluster; harness.ts's startLifecycle
// calls it): the webhook and controllers are the installed ones (found by their Deployments,
// e2e/harness/installed.ts), a kill deletes their pods, the suite's short policy replaces the
// installed one for the run and the operator's is put back at the end, and everything the suite
// created is deleted again: its namespaces (tenants' claims with them), its Servers and
// ServerDisruptionBudgets, and the fleet simulator's ServiceAccount and RBAC.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../../api/schema/meta.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import { isNotFound } from '../../../lib/kube/errors.js';
import { Core, type ResourceType } from '../../../lib/kube/resources.js';
import { REPO_ROOT } from '../../../e2e/harness/control-plane.js';
import { adminClient, freshNamespace, uniqueName, waitFor } from '../../../e2e/harness/env.js';
import {
  installedBinary,
  installedLogs,
  installNamespace,
  snapshotConfigMap,
  type InstalledBinary,
} from '../../../e2e/harness/installed.js';
import type { RunningBinary } from '../../../e2e/harness/processes.js';
import { localOnly, TargetError } from '../../../e2e/harness/target.js';
import { probe, type WebhookHandle } from '../../../e2e/harness/webhook.js';
import { deleteRunObjects } from '../../../e2e/harness/run-objects.js';
import { CLAIM_FINALIZER } from '../../../e2e/sim/fleet/decisions.js';
import { FLEET_LABEL } from '../../../e2e/sim/fleet/fleet.js';
import {
  ServerClaimResource,
  ServerDisruptionBudgetResource,
  ServerMaintenanceResource,
  ServerResource,
} from '../../../lib/kube/kinds.js';
import { POLICY_CONFIGMAP } from '../../../policies/schema.js';
import {
  CONTROLLERS,
  observe,
  policyData,
  writePolicy,
  type Lifecycle,
  type LifecycleOptions,
} from './world.js';

export const FLEET_SIMULATOR_RBAC = join(REPO_ROOT, 'e2e', 'sim', 'fleet', 'rbac.yaml');

/** What a cluster-mode run created, to delete it again and nothing else. */
export interface Created {
  namespaces: string[];
  budgets: string[];
}

export interface InstalledLifecycle {
  installed: Record<string, InstalledBinary>;
  /** Puts the installed policy back as it was. */
  restorePolicy(): Promise<void>;
}

/**
 * Waits for every binary's Deployment to be rolled out and ready, and for the API server to call the
 * installed webhook; snapshots the installed policy.
 */
export async function installedLifecycle(
  admin: KubeClient,
  binaries: readonly string[],
  timeoutMs = 180_000,
): Promise<InstalledLifecycle> {
  const installed = Object.fromEntries(
    ['webhook', ...binaries].map((b) => [b, installedBinary(admin, b)] as const),
  );
  await Promise.all(Object.values(installed).map((b) => b.waitReady(timeoutMs)));
  let last: string | true = 'not probed';
  await waitFor(
    'the API server to call the installed webhook',
    async () => (last = await probe(admin)) === true,
    {
      timeoutMs: 60_000,
      intervalMs: 250,
    },
  ).catch((e: Error) => {
    throw new Error(`${e.message}: ${String(last)}`, { cause: e });
  });
  const policy = await snapshotConfigMap(admin, POLICY_CONFIGMAP.name, installNamespace());
  return { installed, restorePolicy: () => policy.restore() };
}

const gone = async (p: Promise<unknown>) => {
  await p.catch((e: unknown) => {
    if (!isNotFound(e)) throw e;
  });
};

const RBAC_KINDS: Record<string, ResourceType> = {
  ServiceAccount: Core.ServiceAccount,
  ClusterRole: Core.ClusterRole,
  ClusterRoleBinding: Core.ClusterRoleBinding,
  Role: Core.Role,
  RoleBinding: Core.RoleBinding,
};

/**
 * Deletes what the run created: its maintenances first (the controllers release their servers),
 * then budgets and Servers, claims (the simulator's finalizer taken off: it no longer runs), the
 * namespaces, and the fleet simulator's identity. Waits until the namespaces are gone.
 */
export async function deleteCreated(
  admin: KubeClient,
  created: Created,
  fleetName: string,
  opsNamespace: string,
  timeoutMs = 90_000,
): Promise<void> {
  const maintenances = admin.resource<KubeObject>(ServerMaintenanceResource);
  const left = (await maintenances.list({ namespace: opsNamespace })).items;
  await Promise.all(
    left.map((m) => gone(maintenances.delete(m.metadata.name!, { namespace: opsNamespace }))),
  );
  await waitFor(
    `the run's ServerMaintenances in ${opsNamespace} gone`,
    async () => (await maintenances.list({ namespace: opsNamespace })).items.length === 0,
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  const sdbs = admin.resource<KubeObject>(ServerDisruptionBudgetResource);
  await Promise.all(created.budgets.map((b) => gone(sdbs.delete(b))));
  const servers = admin.resource<KubeObject>(ServerResource);
  const ours = (await servers.list({ labelSelector: `${FLEET_LABEL}=${fleetName}` })).items;
  await Promise.all(ours.map((s) => gone(servers.delete(s.metadata.name!))));
  const claims = admin.resource<KubeObject>(ServerClaimResource);
  for (const ns of created.namespaces)
    for (const c of (await claims.list({ namespace: ns })).items) {
      const rest = (c.metadata.finalizers ?? []).filter((f) => f !== CLAIM_FINALIZER);
      await gone(claims.patch(c.metadata.name!, { metadata: { finalizers: rest } }, { namespace: ns }));
    }
  await Promise.all(created.namespaces.map((ns) => gone(admin.resource(Core.Namespace).delete(ns))));
  for (const doc of parseAllDocuments(readFileSync(FLEET_SIMULATOR_RBAC, 'utf8'))) {
    const o = doc.toJS() as KubeObject | null;
    const rt = o && RBAC_KINDS[o.kind ?? ''];
    if (o && rt) await gone(admin.resource(rt).delete(o.metadata.name!, { namespace: o.metadata.namespace }));
  }
  await waitFor(
    `the run's namespaces gone (${created.namespaces.join(', ')})`,
    async () => {
      const all = new Set((await admin.resource(Core.Namespace).list()).items.map((n) => n.metadata.name));
      return created.namespaces.every((n) => !all.has(n));
    },
    { timeoutMs, intervalMs: 500 },
  );
}

/**
 * `lc.controllers[name]` in cluster mode: a binary's log lines, read through the API from its pods
 * (installedLogs); its process (proc, exited, stop) exists only locally and says so.
 */
export function clusterBinaries(
  admin: KubeClient,
  installed: Record<string, InstalledBinary>,
  why: string,
): Record<string, RunningBinary> {
  return Object.fromEntries(
    Object.entries(installed).map(([name, binary]) => {
      const logs = installedLogs(admin, binary);
      const local = localOnly<RunningBinary>(`lc.controllers['${name}']`, why);
      const view = {
        name,
        get logs() {
          return logs.logs;
        },
        waitForLog: (pred, timeoutMs) => logs.waitForLog(pred, timeoutMs),
        get proc() {
          return local.proc;
        },
        get exited() {
          return local.exited;
        },
        stop: (signal, timeoutMs) => local.stop(signal, timeoutMs),
      } satisfies RunningBinary;
      return [name, view];
    }),
  );
}

const CLUSTER_ONLY_HERE =
  'in cluster mode the binaries run in their pods: their logs are read through the API ' +
  '(lc.controllers[name].logs, waitForLog), their pods are lc.installed[name] (kill by pod delete)';

/** The same world against the installed system (E2E_TARGET=cluster). */
export async function startInCluster(options: LifecycleOptions): Promise<Lifecycle> {
  if (options.flags)
    throw new TargetError(
      `cluster mode: the installed Deployments run with their own args; this suite's extra flags ` +
        `(${JSON.stringify(options.flags)}) exist only with E2E_TARGET=local`,
    );
  const admin = await adminClient();
  const all = [...CONTROLLERS, ...(options.extra ?? [])];
  const system = await installedLifecycle(admin, all);
  const installed = system.installed;
  const created: Created = { namespaces: [], budgets: [] };
  const fleetName = uniqueName('lc');
  const ns = await freshNamespace(admin, 'lc-ops');
  created.namespaces.push(ns);
  await writePolicy(admin, policyData(options.policy ?? {}));
  const world = await observe(admin, fleetName, ns, options, created);
  const killed = new Map<string, string[]>();
  const lc: Lifecycle = {
    ...world,
    webhook: localOnly<WebhookHandle>('lc.webhook', CLUSTER_ONLY_HERE),
    controllers: clusterBinaries(admin, installed, CLUSTER_ONLY_HERE),
    installed,
    async kill(name, signal = 'SIGKILL') {
      killed.set(name, await installed[name]!.kill(signal));
    },
    async start(name) {
      await installed[name]!.waitReplaced(killed.get(name) ?? []);
      return localOnly<RunningBinary>(`lc.start('${name}')`, CLUSTER_ONLY_HERE);
    },
    async stop() {
      await world.stopObserving();
      try {
        await deleteCreated(admin, created, fleetName, ns);
        // What the tests made beside the world (e.g. an owner's ClusterRole), by the run's field manager.
        await deleteRunObjects(admin);
      } finally {
        await system
          .restorePolicy()
          .catch((e: unknown) => console.error(`[lifecycle] restoring the policy: ${String(e)}`));
        await admin.close();
      }
    },
  };
  world.bind(lc);
  return lc;
}
