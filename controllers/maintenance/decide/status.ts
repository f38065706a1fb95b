// The status this controller owns on a ServerMaintenance, built condition by condition.
import type { Condition } from '../../../api/schema/common.js';
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import { findCondition, makeCondition, type ConditionInput } from '../../../contract/conditions.js';
import { canonicalJSON } from '../../shared/canonical.js';
import { stateOf } from '../../../contract/lifecycle.js';
import { OWNED_CONDITIONS, type OwnedStatus } from './model.js';

export function ownedStatusOf(m: ServerMaintenance): OwnedStatus {
  const s = m.status ?? {};
  return {
    state: stateOf(m),
    ...(s.observedGeneration !== undefined ? { observedGeneration: s.observedGeneration } : {}),
    ...(s.queuePosition !== undefined ? { queuePosition: s.queuePosition } : {}),
    ...(s.startedAt ? { startedAt: s.startedAt } : {}),
    ...(s.completedAt ? { completedAt: s.completedAt } : {}),
    ...(s.message ? { message: s.message } : {}),
    ...(s.grant ? { grant: s.grant } : {}),
    conditions: OWNED_CONDITIONS.flatMap((t) => findCondition(s.conditions, t) ?? []),
  };
}

export function canonical(s: OwnedStatus): string {
  return canonicalJSON({ ...s, conditions: [...s.conditions].sort((a, b) => a.type.localeCompare(b.type)) });
}

/** Whether writing `next` would change anything (a status never written: always). */
export function statusChanged(m: ServerMaintenance, next: OwnedStatus): boolean {
  if (!m.status?.state) return true;
  return canonical(ownedStatusOf(m)) !== canonical(next);
}

export class StatusBuilder {
  readonly #m: ServerMaintenance;
  readonly #now: Date;
  readonly #conditions = new Map<string, Condition>();
  constructor(m: ServerMaintenance, now: Date) {
    this.#m = m;
    this.#now = now;
  }
  set(input: ConditionInput): this {
    this.#conditions.set(
      input.type,
      makeCondition(this.#m.status?.conditions, input, this.#now, this.#m.metadata.generation),
    );
    return this;
  }
  /** Keeps existing conditions as they are (e.g. the last denial while backing off). */
  keep(...types: string[]): this {
    for (const type of types) {
      const c = findCondition(this.#m.status?.conditions, type);
      if (c) this.#conditions.set(type, c);
    }
    return this;
  }
  build(fields: Omit<OwnedStatus, 'conditions' | 'observedGeneration'>): OwnedStatus {
    const generation = this.#m.metadata.generation;
    return {
      ...fields,
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
      conditions: OWNED_CONDITIONS.flatMap((t) => this.#conditions.get(t) ?? []),
    };
  }
}
