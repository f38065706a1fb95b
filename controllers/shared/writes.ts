// Writes the lifecycle controllers make, each with the precondition it needs:
// - status: server-side apply with this binary's field manager, pinned to the object's uid, so a
//   status decided for one object never lands on a recreated one of the same name;
// - finalizers: merge patch with the resourceVersion as an optimistic lock, so a concurrent change
//   to the list is never overwritten;
// - spec fields we own (a taint): server-side apply, optionally with the resourceVersion as a
//   precondition when the write must be a compare-and-swap.
import type { KubeObject } from '../../api/schema/meta.js';
import type { ResourceClient } from '../../lib/kube/client.js';
import { isNotFound } from '../../lib/kube/errors.js';
import { apiVersionOf } from '../../lib/kube/resources.js';

function identity(obj: KubeObject, extra: Record<string, unknown> = {}) {
  return {
    name: obj.metadata.name,
    ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
    ...(obj.metadata.uid ? { uid: obj.metadata.uid } : {}),
    ...extra,
  };
}

/** SSA of `status` (the fields this manager owns); undefined when the object is gone. */
export async function applyStatusOf<T extends KubeObject>(
  resource: ResourceClient<T>,
  obj: KubeObject,
  status: unknown,
  fieldManager: string,
): Promise<T | undefined> {
  const body = {
    apiVersion: apiVersionOf(resource.type),
    kind: resource.type.kind,
    metadata: identity(obj),
    status,
  } as unknown as T;
  try {
    return await resource.apply(body, { fieldManager, force: true, subresource: 'status' });
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
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
  const body = {
    apiVersion: apiVersionOf(resource.type),
    kind: resource.type.kind,
    metadata: identity(obj, extra),
    ...(fields.spec !== undefined ? { spec: fields.spec } : {}),
  } as unknown as T;
  try {
    return await resource.apply(body, { fieldManager, force: true });
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** Sets the finalizer list with the resourceVersion as an optimistic lock (409 when it moved). */
export async function patchFinalizers<T extends KubeObject>(
  resource: ResourceClient<T>,
  obj: KubeObject,
  finalizers: string[],
  fieldManager: string,
): Promise<T | undefined> {
  try {
    return await resource.patch(
      obj.metadata.name ?? '',
      { metadata: { resourceVersion: obj.metadata.resourceVersion, uid: obj.metadata.uid, finalizers } },
      { namespace: obj.metadata.namespace, type: 'merge', fieldManager },
    );
  } catch (e) {
    if (isNotFound(e)) return undefined;
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
  try {
    return await resource.patch(
      obj.metadata.name ?? '',
      { metadata: { uid: obj.metadata.uid, annotations } },
      { namespace: obj.metadata.namespace, type: 'merge', fieldManager },
    );
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** The object with apiVersion and kind set (list items and our writes may lack them), for Events. */
export function withTypeMeta<T extends KubeObject>(obj: T, resource: { type: ResourceClient<T>['type'] }): T {
  return {
    ...obj,
    apiVersion: obj.apiVersion ?? apiVersionOf(resource.type),
    kind: obj.kind ?? resource.type.kind,
  };
}
