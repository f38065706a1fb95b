// metav1.Condition bookkeeping: lastTransitionTime moves only when the status flips, so a
// condition says since when it has been true, not when the controller last looked.
import type { Condition } from '../../api/schema/common.js';
import type { ConditionType } from './model.js';

/** RFC 3339 without fractions, as the API server stores metav1.Time. */
export function timeString(at: Date): string {
  return at.toISOString().replace(/\.\d+Z$/, 'Z');
}

export interface ConditionInput {
  type: ConditionType;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

/** Returns a new list with `input` set; keeps lastTransitionTime when the status is unchanged. */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  now: Date,
  observedGeneration?: number,
): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === input.type);
  const old = i >= 0 ? list[i] : undefined;
  const next: Condition = {
    type: input.type,
    status: input.status,
    reason: input.reason,
    message: input.message.slice(0, 4096),
    lastTransitionTime: old && old.status === input.status ? old.lastTransitionTime : timeString(now),
    ...(observedGeneration !== undefined ? { observedGeneration } : {}),
  };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}

export function removeCondition(
  conditions: readonly Condition[] | undefined,
  type: ConditionType,
): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: ConditionType,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isTrue(conditions: readonly Condition[] | undefined, type: ConditionType): boolean {
  return findCondition(conditions, type)?.status === 'True';
}
