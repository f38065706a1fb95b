// The boot controller's condition list: one entry per ConditionType, set and removed as the draft
// status moves. Each entry is built the contract's way (contract/conditions.ts: lastTransitionTime
// moves only when the status flips).
import type { Condition } from '../../api/schema/common.js';
import { findCondition, makeCondition } from '../../contract/conditions.js';
import type { ConditionType } from './model.js';

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
  const next = makeCondition(conditions, input, now, observedGeneration);
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

export function isTrue(conditions: readonly Condition[] | undefined, type: ConditionType): boolean {
  return findCondition(conditions, type)?.status === 'True';
}
