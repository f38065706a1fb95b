// Cluster mode: what one test file created, found again to delete it and nothing else. The file's admin
// client sends a user agent of its own (RUN_MANAGER, e2e/harness/target.ts), which the API server records as the field
// manager of every object it creates; an object is the run's when it was created after the run began
// and that manager wrote it. Namespaces take what lives in them along (claims, maintenances, the
// identities' ServiceAccounts and Roles); cluster-scoped kinds are listed here. Suites that seed
// through their own world (the lifecycle harness) delete by label instead, and this finds nothing left.
import type { KubeObject } from '../../api/schema/meta.js';
import type { KubeClient } from '../../lib/kube/client.js';
import { isNotFound } from '../../lib/kube/errors.js';
import { Core, type ResourceType } from '../../lib/kube/resources.js';
import { ServerClaimResource, ServerDisruptionBudgetResource, ServerResource } from '../../lib/kube/kinds.js';
import { waitFor } from './env.js';
import { RUN_MANAGER, RUN_MANAGER_PREFIX, RUN_STARTED } from './target.js';

/** The kinds a suite creates outside its namespaces, in the order they are deleted. */
const CLUSTER_KINDS: readonly ResourceType[] = [
  ServerDisruptionBudgetResource,
  ServerResource,
  Core.ClusterRoleBinding,
  Core.ClusterRole,
];

type Managed = KubeObject & {
  metadata: KubeObject['metadata'] & {
    creationTimestamp?: string;
    managedFields?: { manager?: string }[];
  };
};

/** The API server's clock may be behind the test host's; the manager's random name is the real key. */
const CLOCK_SKEW_MS = 5 * 60_000;

/** Pure: created by this run (after it began, written by its manager). */
export function isRunObject(o: Managed, manager = RUN_MANAGER, startedMs = RUN_STARTED): boolean {
  const created = Date.parse(o.metadata.creationTimestamp ?? '');
  return (
    Number.isFinite(created) &&
    created >= startedMs - CLOCK_SKEW_MS &&
    (o.metadata.managedFields ?? []).some((f) => f.manager === manager)
  );
}

const gone = (p: Promise<unknown>) =>
  p.catch((e: unknown) => {
    if (!isNotFound(e)) throw e;
  });

/**
 * Deletes the run's namespaces and cluster-scoped objects, claims' finalizers taken off first (no
 * simulator runs to take them off), and waits until the namespaces are gone. Returns what it deleted.
 */
export async function deleteRunObjects(admin: KubeClient, timeoutMs = 90_000): Promise<string[]> {
  const deleted: string[] = [];
  const nsApi = admin.resource<Managed>(Core.Namespace);
  const namespaces = (await nsApi.list()).items.filter((n) => isRunObject(n)).map((n) => n.metadata.name!);
  const claims = admin.resource<Managed>(ServerClaimResource);
  for (const ns of namespaces)
    for (const c of (await claims.list({ namespace: ns })).items)
      if (c.metadata.finalizers?.length)
        await gone(claims.patch(c.metadata.name!, { metadata: { finalizers: null } }, { namespace: ns }));
  await Promise.all(namespaces.map((ns) => gone(nsApi.delete(ns))));
  deleted.push(...namespaces.map((n) => `Namespace/${n}`));
  for (const kind of CLUSTER_KINDS) {
    const api = admin.resource<Managed>(kind);
    const ours = (await api.list()).items.filter((o) => isRunObject(o));
    await Promise.all(ours.map((o) => gone(api.delete(o.metadata.name!))));
    deleted.push(...ours.map((o) => `${kind.kind}/${o.metadata.name!}`));
  }
  await waitFor(
    `the run's namespaces gone (${namespaces.join(', ')})`,
    async () => {
      const left = new Set((await nsApi.list()).items.map((n) => n.metadata.name));
      return namespaces.every((n) => !left.has(n));
    },
    { timeoutMs, intervalMs: 500 },
  );
  return deleted;
}

/**
 * What any test file's run left behind and is not being deleted: namespaces and cluster-scoped
 * objects a run's manager created. scripts/cluster-mode-local.ts fails when this is not empty.
 */
export async function leftBehind(admin: KubeClient): Promise<string[]> {
  const left: string[] = [];
  for (const kind of [Core.Namespace, ...CLUSTER_KINDS])
    for (const o of (await admin.resource<Managed>(kind).list()).items)
      if (
        !o.metadata.deletionTimestamp &&
        (o.metadata.managedFields ?? []).some((f) => f.manager?.startsWith(RUN_MANAGER_PREFIX))
      )
        left.push(`${kind.kind}/${o.metadata.name!}`);
  return left;
}
