// What the approval controller keeps of the objects it caches, and what it reads of managedFields. Pure:
// the informers apply these shapes as objects arrive, so 10,000 Servers and claims cost what the
// decisions need, not whole objects.
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { KubeObject } from '../../api/schema/meta.js';

/** Whether `manager` owns `metadata.labels[key]` on the object (from managedFields). */
export function ownsLabel(obj: KubeObject, manager: string, key: string): boolean {
  return (obj.metadata.managedFields ?? []).some((f) => {
    if (f.manager !== manager || f.subresource) return false;
    const labels = (f.fieldsV1 as { 'f:metadata'?: { 'f:labels'?: Record<string, unknown> } } | undefined)?.[
      'f:metadata'
    ]?.['f:labels'];
    return !!labels && Object.hasOwn(labels, `f:${key}`);
  });
}

/**
 * A claim as this controller caches it: managedFields only as far as its decisions read them (our own
 * manager's entries reduced to the labels it owns, for ownsLabel; every other manager by name only, for
 * the policy's consumerFieldManagers), the rest of the claim as it is.
 */
export function claimForCache(manager: string): (c: ServerClaim) => ServerClaim {
  return (c) => {
    const kept: NonNullable<ServerClaim['metadata']['managedFields']> = [];
    const named = new Set<string>();
    for (const f of c.metadata.managedFields ?? []) {
      if (f.manager === manager && !f.subresource) {
        const fields = f.fieldsV1 as { 'f:metadata'?: { 'f:labels'?: Record<string, unknown> } } | undefined;
        const labels = fields?.['f:metadata']?.['f:labels'];
        if (labels) kept.push({ manager, fieldsV1: { 'f:metadata': { 'f:labels': labels } } });
      } else if (f.manager && f.manager !== manager && !named.has(f.manager)) {
        named.add(f.manager);
        kept.push({ manager: f.manager });
      }
    }
    const { managedFields: _all, ...metadata } = c.metadata;
    return { ...c, metadata: kept.length > 0 ? { ...metadata, managedFields: kept } : metadata };
  };
}

/**
 * A server as this controller caches it: who it is and which claim it is bound to, all that the
 * announcement and approval decisions read of it (10,000 whole Servers were most of its memory).
 */
export function serverBinding(s: Server): Server {
  const { name, uid, resourceVersion, deletionTimestamp } = s.metadata;
  const ref = s.spec.serverClaimRef;
  return {
    metadata: { name, uid, resourceVersion, ...(deletionTimestamp ? { deletionTimestamp } : {}) },
    spec: { ...(ref ? { serverClaimRef: ref } : {}) },
  } as Server;
}

/** Whether two versions of a server are bound to the same claim (or both to none). */
export const sameBinding = (a: Server | undefined, b: Server | undefined): boolean =>
  (a?.spec.serverClaimRef?.namespace ?? '') === (b?.spec.serverClaimRef?.namespace ?? '') &&
  (a?.spec.serverClaimRef?.name ?? '') === (b?.spec.serverClaimRef?.name ?? '');
