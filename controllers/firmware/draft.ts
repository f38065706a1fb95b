// A mutable copy of a firmware object's status that the decision edits, plus the Events that go
// with the edits. `act()` freezes it into a Decision. The phase of an InProgress object is the
// reason of its Progressing condition; its lastTransitionTime is when the phase began.
import type { Condition } from '../../api/schema/common.js';
import { rfc3339 } from '../../contract/time.js';
import {
  ConditionTypes as C,
  Phases,
  type Decision,
  type FirmwareAction,
  type FirmwareContext,
  type FirmwareEvent,
  type FirmwareKindName,
  type FirmwareObject,
  type FirmwareStatus,
  type Phase,
} from './model.js';

export function phaseOf(status: FirmwareStatus | undefined): Phase | undefined {
  const c = status?.conditions?.find((x) => x.type === C.Progressing);
  if (!c || c.status !== 'True') return undefined;
  return (Phases as readonly string[]).includes(c.reason) ? (c.reason as Phase) : undefined;
}

/** ms since the current phase began (0 when unknown). */
export function inPhaseMs(status: FirmwareStatus | undefined, now: Date): number {
  const c = status?.conditions?.find((x) => x.type === C.Progressing);
  const since = c ? Date.parse(c.lastTransitionTime) : NaN;
  return Number.isNaN(since) ? 0 : Math.max(0, now.getTime() - since);
}

export { formatMs } from '../../lib/policy/durations.js';

export class Draft {
  readonly obj: FirmwareObject;
  readonly kind: FirmwareKindName;
  readonly ctx: FirmwareContext;
  status: FirmwareStatus;
  readonly events: FirmwareEvent[] = [];

  constructor(kind: FirmwareKindName, obj: FirmwareObject, ctx: FirmwareContext) {
    this.kind = kind;
    this.obj = obj;
    this.ctx = ctx;
    this.status = structuredClone((obj.status ?? {}) as FirmwareStatus);
  }

  get phase(): Phase | undefined {
    return phaseOf(this.status);
  }

  get attempt(): number {
    return this.status.failedAttempts ?? 0;
  }

  /** Sets a condition; the transition time moves when the status or (for Progressing) the reason changes. */
  cond(type: string, status: 'True' | 'False' | 'Unknown', reason: string, message: string): this {
    const list = this.status.conditions ?? [];
    const old = list.find((c) => c.type === type);
    const moved = !old || old.status !== status || (type === C.Progressing && old.reason !== reason);
    const next: Condition = {
      type,
      status,
      reason,
      message: message.slice(0, 4096),
      lastTransitionTime: moved ? rfc3339(this.ctx.now) : old.lastTransitionTime,
      observedGeneration: this.obj.metadata.generation,
    };
    this.status.conditions = old ? list.map((c) => (c.type === type ? next : c)) : [...list, next];
    return this;
  }

  drop(type: string): this {
    this.status.conditions = (this.status.conditions ?? []).filter((c) => c.type !== type);
    return this;
  }

  /** Enters (or stays in) a phase of InProgress; `message` is the last answer seen. */
  enter(phase: Phase, message: string): this {
    this.status.state = 'InProgress';
    this.status.observedGeneration = this.obj.metadata.generation;
    return this.cond(C.Progressing, 'True', phase, message);
  }

  /** Ends the InProgress phases (Completed, Applied, Failed). */
  settle(state: string, message: string): this {
    this.status.state = state;
    this.status.observedGeneration = this.obj.metadata.generation;
    return this.cond(C.Progressing, 'False', state, message);
  }

  event(type: 'Normal' | 'Warning', reason: string, note: string): this {
    this.events.push({ type, reason, note });
    return this;
  }

  act(actions: FirmwareAction[] = [], requeueAfterMs?: number): Decision {
    return { kind: 'act', actions, status: this.status, events: this.events, requeueAfterMs };
  }
}
