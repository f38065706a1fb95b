// Taint/toleration matching with upstream metal-operator's rules (internal/controller/taints.go):
// keys must match (an empty-key toleration does NOT match everything, unlike Kubernetes); a toleration
// effect, if set, must equal the taint's (a taint's effect defaults to NoBind); Exists ignores the value;
// Equal or no operator compares values. Only NoBind taints block binding.
import type { Taint, Toleration } from '../api/schema/common.js';

export function tolerates(toleration: Toleration, taint: Taint): boolean {
  if (toleration.key !== taint.key) return false;
  const taintEffect = taint.effect ?? 'NoBind';
  if (toleration.effect && toleration.effect !== taintEffect) return false;
  if (toleration.operator === 'Exists') return true;
  return (toleration.value ?? '') === (taint.value ?? '');
}

/** Whether a taint blocks binding: its effect is NoBind, the default. */
export function isNoBind(t: Taint): boolean {
  return (t.effect ?? 'NoBind') === 'NoBind';
}

/** NoBind taints of a server that none of the tolerations tolerates. */
export function untoleratedNoBindTaints(
  taints: readonly Taint[] | undefined,
  tolerations: readonly Toleration[] | undefined,
): Taint[] {
  return (taints ?? []).filter((t) => isNoBind(t) && !(tolerations ?? []).some((tol) => tolerates(tol, t)));
}

/** Whether any taint blocks binding (is NoBind) for a claim that tolerates nothing. */
export function hasNoBindTaint(taints: readonly Taint[] | undefined): boolean {
  return taints !== undefined && taints.some(isNoBind);
}

export function describeTaint(t: Taint): string {
  return `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect ?? 'NoBind'}`;
}

/**
 * Indices of the tolerations that name `reservedKey` (any operator, value or effect). The maintenance
 * taint is the contract's signal to metal-operator's binder that a server is held: a claim tolerating
 * it would see held servers as claimable, and be refused by the placement rule on each try.
 */
export function reservedTolerations(
  tolerations: readonly Toleration[] | undefined,
  reservedKey: string,
): number[] {
  const out: number[] = [];
  (tolerations ?? []).forEach((t, i) => {
    if (t.key === reservedKey) out.push(i);
  });
  return out;
}
