// Writes the lifecycle controllers make, each with the precondition it needs:
// - status: server-side apply with this binary's field manager, pinned to the object's uid, so a
//   status decided for one object never lands on a recreated one of the same name;
// - finalizers: added by server-side apply (a set: our entry only), removed by a JSON patch that tests
//   the list first, so a concurrent change to it is never overwritten;
// - spec fields we own (a taint): server-side apply, optionally with the resourceVersion as a
//   precondition when the write must be a compare-and-swap.
import type { KubeObject } from '../../api/schema/meta.js';
import type { ResourceClient } from '../../lib/kube/client.js';
import { isInvalid, isNotFound } from '../../lib/kube/errors.js';
import { apiVersionOf } from '../../lib/kube/resources.js';

function identity(obj: KubeObject, extra: Record<string, unknown> = {}) {
  return {
    name: obj.metadata.name,
    ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
    ...(obj.metadata.uid ? { uid: obj.metadata.uid } : {}),
    ...extra,
  };
}

/** An apply body for obj's kind: its identity (pinned to its uid, plus `metadata`) and `fields`. */
function applyBody<T extends KubeObject>(
  resource: ResourceClient<T>,
  obj: KubeObject,
  metadata: Record<string, unknown>,
  fields: Record<string, unknown> = {},
): T {
  return {
    apiVersion: apiVersionOf(resource.type),
    kind: resource.type.kind,
    metadata: identity(obj, metadata),
    ...fields,
  } as unknown as T;
}

/** The write's result; undefined when the object is gone (404). */
async function unlessGone<T>(write: () => Promise<T>): Promise<T | undefined> {
  try {
    return await write();
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** SSA of `status` (the fields this manager owns); undefined when the object is gone. */
export async function applyStatusOf<T extends KubeObject>(
  resource: ResourceClient<T>,
  obj: KubeObject,
  status: unknown,
  fieldManager: string,
): Promise<T | undefined> {
  const body = applyBody(resource, obj, {}, { status });
  return unlessGone(() => resource.apply(body, { fieldManager, force: true, subresource: 'status' }));
}

/** SSA of spec/metadata fields this manager owns; with `cas`, only if the object is still at obj's resourceVersion. */
export async function applyOwned<T extends KubeObject>(
  resource: ResourceClient<T>,
  obj: KubeObject,
  fields: { metadata?: Record<string, unknown>; spec?: unknown },
  fieldManager: string,
  options: { cas?: boolean } = {},
): Promise<T | undefined> {
  const extra = options.cas
    ? { resourceVersion: obj.metadata.resourceVersion, ...fields.metadata }
    : { ...fields.metadata };
  const body = applyBody(resource, obj, extra, fields.spec !== undefined ? { spec: fields.spec } : {});
  return unlessGone(() => resource.apply(body, { fieldManager, force: true }));
}

/**
 * Adds a finalizer with server-side apply: metadata.finalizers is a set, so our entry is merged in
 * without touching anybody else's and without a resourceVersion lock that status writes would break.
 */
export async function addFinalizer<T extends KubeObject>(
  resource: ResourceClient<T>,
  obj: KubeObject,
  finalizer: string,
  fieldManager: string,
): Promise<T | undefined> {
  const body = applyBody(resource, obj, { finalizers: [finalizer] });
  return unlessGone(() => resource.apply(body, { fieldManager, force: true }));
}

/**
 * Removes finalizers with a JSON patch that first tests the list is what we read: a concurrent change to
 * the list fails the patch (and the reconcile retries), while status writes do not get in the way.
 */
export async function removeFinalizers<T extends KubeObject>(
  resource: ResourceClient<T>,
  obj: KubeObject,
  remove: readonly string[],
  fieldManager: string,
): Promise<T | undefined> {
  const current = obj.metadata.finalizers ?? [];
  const next = current.filter((f) => !remove.includes(f));
  if (next.length === current.length) return undefined;
  const patch = [
    { op: 'test', path: '/metadata/uid', value: obj.metadata.uid },
    { op: 'test', path: '/metadata/finalizers', value: current },
    { op: 'replace', path: '/metadata/finalizers', value: next },
  ];
  try {
    return await resource.patch(obj.metadata.name ?? '', patch, {
      namespace: obj.metadata.namespace,
      type: 'json',
      fieldManager,
    });
  } catch (e) {
    if (isNotFound(e)) return undefined;
    // A failed test (the list or the uid moved) is a 422: the update event of that change brings the
    // caller back with the new list.
    if (isInvalid(e)) return undefined;
    throw e;
  }
}

/** Merge patch of annotations (null removes a key). */
export async function patchAnnotations<T extends KubeObject>(
  resource: ResourceClient<T>,
  obj: KubeObject,
  annotations: Record<string, string | null>,
  fieldManager: string,
): Promise<T | undefined> {
  return unlessGone(() =>
    resource.patch(
      obj.metadata.name ?? '',
      { metadata: { uid: obj.metadata.uid, annotations } },
      { namespace: obj.metadata.namespace, type: 'merge', fieldManager },
    ),
  );
}

/** The object with apiVersion and kind set (list items and our writes may lack them), for Events. */
export function withTypeMeta<T extends KubeObject>(obj: T, resource: { type: ResourceClient<T>['type'] }): T {
  return {
    ...obj,
    apiVersion: obj.apiVersion ?? apiVersionOf(resource.type),
    kind: obj.kind ?? resource.type.kind,
  };
}
