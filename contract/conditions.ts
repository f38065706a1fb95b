// metav1.Condition helpers. A condition keeps its lastTransitionTime while its status stays the
// same, so "since when" questions (park timeout, time waiting) read it directly.
import type { Condition } from '../api/schema/common.js';
import { rfc3339 } from './time.js';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface ConditionInput {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
}

export function findCondition(list: readonly Condition[] | undefined, type: string): Condition | undefined {
  return list?.find((c) => c.type === type);
}

/** The condition to write: the previous transition time survives when the status did not change. */
export function makeCondition(
  previous: readonly Condition[] | undefined,
  input: ConditionInput,
  now: Date,
  observedGeneration?: number,
): Condition {
  const old = findCondition(previous, input.type);
  const lastTransitionTime = old && old.status === input.status ? old.lastTransitionTime : rfc3339(now);
  return {
    type: input.type,
    status: input.status,
    reason: input.reason,
    message: input.message.slice(0, 4096),
    lastTransitionTime,
    ...(observedGeneration !== undefined ? { observedGeneration } : {}),
  };
}

/** Whether a condition of `type` exists with this status (and reason, if given). */
export function hasCondition(
  list: readonly Condition[] | undefined,
  type: string,
  status: ConditionStatus,
  reason?: string,
): boolean {
  const c = findCondition(list, type);
  return !!c && c.status === status && (reason === undefined || c.reason === reason);
}

/** The conditions of the given types only, in that order (what one manager owns). */
export function ownedConditions(
  list: readonly Condition[] | undefined,
  types: readonly string[],
): Condition[] {
  return types.flatMap((t) => findCondition(list, t) ?? []);
}
