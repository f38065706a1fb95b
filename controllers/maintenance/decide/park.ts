// The server's park request and taint, as this controller asks metal-operator for them.
import type { Server } from '../../../api/metal/v1alpha1/server.js';
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import { isNoBind } from '../../../contract/taints.js';
import { OPERATION_ANNOTATION, PARKED_ANNOTATION, PARKED_BY_ANNOTATION } from '../../../contract/names.js';
import { uidOf } from '../../../contract/lifecycle.js';
import { type ParkMode, type ParkPatch } from './model.js';

export interface ParkView {
  patch?: ParkPatch;
  parked: boolean;
  /** Parked by somebody else before the maintenance: we leave it parked afterwards. */
  alreadyParked: boolean;
}

export function isParked(server: Server): boolean {
  return server.metadata.annotations?.[PARKED_ANNOTATION] === 'true' || server.status?.state === 'Parked';
}

/**
 * The park request for the server. We park through upstream's `operation: park` and record which
 * maintenance asked (`parked-by`), so we unpark only what we parked. parked-by goes only once
 * metal-operator has answered the unpark.
 */
export function planPark(server: Server, active: ServerMaintenance | undefined, mode: ParkMode): ParkView {
  const a = server.metadata.annotations ?? {};
  const op = a[OPERATION_ANNOTATION];
  const by = a[PARKED_BY_ANNOTATION];
  const parked = isParked(server);
  if (active && mode === 'annotation') {
    if (!by && parked) return { parked: true, alreadyParked: true };
    const patch: ParkPatch = {};
    if (by !== uidOf(active)) patch[PARKED_BY_ANNOTATION] = uidOf(active);
    if (!parked && op !== 'park') patch[OPERATION_ANNOTATION] = 'park';
    return { ...(Object.keys(patch).length > 0 ? { patch } : {}), parked, alreadyParked: false };
  }
  if (!by) return { parked, alreadyParked: false };
  // We parked it for a maintenance that no longer holds the server: unpark, then forget.
  if (parked || op === 'park')
    return op === 'unpark'
      ? { parked, alreadyParked: false }
      : { patch: { [OPERATION_ANNOTATION]: 'unpark' }, parked, alreadyParked: false };
  if (op === 'unpark') return { parked, alreadyParked: false };
  return { patch: { [PARKED_BY_ANNOTATION]: null }, parked, alreadyParked: false };
}

/** Whether our park of the server for `uid` is still in place or being undone. */
export function parkHeldBy(server: Server | undefined, uid: string): boolean {
  if (!server) return false;
  const a = server.metadata.annotations ?? {};
  if (a[PARKED_BY_ANNOTATION] !== uid) return false;
  return isParked(server) || a[OPERATION_ANNOTATION] === 'park' || a[OPERATION_ANNOTATION] === 'unpark';
}

export function taintValue(server: Server, key: string): string | undefined {
  const t = (server.spec.taints ?? []).find((x) => x.key === key && isNoBind(x));
  return t ? (t.value ?? '') : undefined;
}
