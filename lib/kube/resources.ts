// Where a kind lives in the API: the data needed to build its REST paths. Our own kinds derive it
// from their KindDefinition; the few built-in kinds we touch are listed here.
import type { KindDefinition } from '../../api/schema/kind.js';

export interface ResourceType {
  /** '' for the core group. */
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
}

export function resourceOf(def: KindDefinition): ResourceType {
  return {
    group: def.group,
    version: def.version,
    plural: def.plural,
    kind: def.kind,
    namespaced: def.scope === 'Namespaced',
  };
}

export function apiVersionOf(rt: ResourceType): string {
  return rt.group ? `${rt.group}/${rt.version}` : rt.version;
}

export const Core = {
  Namespace: { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false },
  ConfigMap: { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true },
  Secret: { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true },
  ServiceAccount: {
    group: '',
    version: 'v1',
    plural: 'serviceaccounts',
    kind: 'ServiceAccount',
    namespaced: true,
  },
  Node: { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false },
  Pod: { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true },
  PodDisruptionBudget: {
    group: 'policy',
    version: 'v1',
    plural: 'poddisruptionbudgets',
    kind: 'PodDisruptionBudget',
    namespaced: true,
  },
  Deployment: { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true },
  ReplicaSet: { group: 'apps', version: 'v1', plural: 'replicasets', kind: 'ReplicaSet', namespaced: true },
  PodTemplate: { group: '', version: 'v1', plural: 'podtemplates', kind: 'PodTemplate', namespaced: true },
  Event: { group: 'events.k8s.io', version: 'v1', plural: 'events', kind: 'Event', namespaced: true },
  Lease: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true },
  CustomResourceDefinition: {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    plural: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    namespaced: false,
  },
  ValidatingWebhookConfiguration: {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    plural: 'validatingwebhookconfigurations',
    kind: 'ValidatingWebhookConfiguration',
    namespaced: false,
  },
  MutatingWebhookConfiguration: {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    plural: 'mutatingwebhookconfigurations',
    kind: 'MutatingWebhookConfiguration',
    namespaced: false,
  },
  ClusterRole: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: 'clusterroles',
    kind: 'ClusterRole',
    namespaced: false,
  },
  ClusterRoleBinding: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: 'clusterrolebindings',
    kind: 'ClusterRoleBinding',
    namespaced: false,
  },
  Role: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: 'roles',
    kind: 'Role',
    namespaced: true,
  },
  RoleBinding: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: 'rolebindings',
    kind: 'RoleBinding',
    namespaced: true,
  },
} as const satisfies Record<string, ResourceType>;

/** /api/v1/... or /apis/<group>/<version>/..., with optional namespace, name and subresource. */
export function resourcePath(
  rt: ResourceType,
  namespace?: string,
  name?: string,
  subresource?: string,
): string {
  let path = rt.group ? `/apis/${rt.group}/${rt.version}` : `/api/${rt.version}`;
  if (rt.namespaced && namespace) path += `/namespaces/${encodeURIComponent(namespace)}`;
  path += `/${rt.plural}`;
  if (name !== undefined) path += `/${encodeURIComponent(name)}`;
  if (subresource) path += `/${subresource}`;
  return path;
}

/** The cache key of an object: "namespace/name", or "name" for cluster-scoped kinds. */
export function objectKey(meta: { namespace?: string; name?: string }): string {
  return meta.namespace ? `${meta.namespace}/${meta.name ?? ''}` : (meta.name ?? '');
}

export function splitKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/**
 * The copy to act on: `mine` (what our own read or write returned) when it is the same object as
 * `cached` (same uid) at a newer resourceVersion, else `cached`. Missing from the cache stays missing:
 * the object may be gone, and only a fresh read can tell.
 */
export function fresher<T extends { metadata: { uid?: string; resourceVersion?: string } }>(
  cached: T | undefined,
  mine: T | undefined,
): T | undefined {
  if (!cached || !mine) return cached;
  const same = mine.metadata.uid === cached.metadata.uid;
  return same && isNewer(mine.metadata.resourceVersion, cached.metadata.resourceVersion) ? mine : cached;
}

/** Whether resourceVersion a is newer than b. Opaque strings in general; etcd revisions in practice. */
export function isNewer(a: string | undefined, b: string | undefined): boolean {
  if (!a) return false;
  if (!b) return true;
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) return BigInt(a) > BigInt(b);
  return false;
}
