// A mutable copy of a ServerBoot's status that the decision edits, plus the Events that go with
// the edits. `act()` freezes it into a Decision.
import { ServerBootPhases } from '../../api/maintenance/v1alpha1/serverboot.js';
import { removeCondition, setCondition, type ConditionInput } from './conditions.js';
import {
  TIMED_PHASES,
  type BootAction,
  type BootContext,
  type BootEvent,
  type ConditionType,
  type Decision,
  type ServerBoot,
  type ServerBootPhase,
  type ServerBootStatus,
} from './model.js';

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1e3, m: 6e4, h: 3.6e6 };

/** A Go duration as the CRD admits it ("90s", "1h30m", "500ms"), in ms; undefined if malformed. */
export function goDurationMs(text: string | undefined): number | undefined {
  if (!text || !/^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/.test(text)) return undefined;
  let total = 0;
  for (const [, amount, , unit] of text.matchAll(/([0-9]+(\.[0-9]+)?)(ns|us|µs|ms|s|m|h)/g)) {
    total += Number(amount) * (UNIT_MS[unit ?? ''] ?? 0);
  }
  return Math.round(total);
}

export function phaseTimeoutMs(boot: ServerBoot, ctx: BootContext): number {
  const own = goDurationMs(boot.spec.phaseTimeout);
  return own !== undefined && own > 0 ? own : ctx.defaultPhaseTimeoutMs;
}

/** A phase read from a status; an unknown word (a newer controller's) reads as Pending. */
export function asPhase(text: string | undefined): ServerBootPhase {
  return (ServerBootPhases as readonly string[]).includes(text ?? '') ? (text as ServerBootPhase) : 'Pending';
}

export function phaseOf(boot: ServerBoot): ServerBootPhase {
  return asPhase(boot.status?.phase);
}

/** ms since the phase of `status` began (0 when the status does not say). */
export function inPhaseMs(status: ServerBootStatus | undefined, now: Date): number {
  const since = status?.phaseSince ? Date.parse(status.phaseSince) : NaN;
  return Number.isNaN(since) ? 0 : Math.max(0, now.getTime() - since);
}

export { formatMs } from '../../lib/policy/durations.js';

export class Draft {
  readonly boot: ServerBoot;
  readonly ctx: BootContext;
  status: ServerBootStatus;
  readonly events: BootEvent[] = [];

  constructor(boot: ServerBoot, ctx: BootContext) {
    this.boot = boot;
    this.ctx = ctx;
    this.status = structuredClone(boot.status ?? {});
    this.status.phase ??= 'Pending';
    if (boot.metadata.generation !== undefined) this.status.observedGeneration = boot.metadata.generation;
  }

  get phase(): ServerBootPhase {
    return asPhase(this.status.phase);
  }

  cond(type: ConditionType, status: ConditionInput['status'], reason: string, message: string): this {
    this.status.conditions = setCondition(
      this.status.conditions,
      { type, status, reason, message },
      this.ctx.now,
      this.boot.metadata.generation,
    );
    return this;
  }

  drop(type: ConditionType): this {
    this.status.conditions = removeCondition(this.status.conditions, type);
    return this;
  }

  event(type: BootEvent['type'], reason: string, note: string): this {
    this.events.push({ type, reason, note });
    return this;
  }

  message(text: string): this {
    this.status.message = text;
    return this;
  }

  /** Moves to `next` (phaseSince = now) with an Event whose reason is the phase. */
  to(next: ServerBootPhase, note: string, type: BootEvent['type'] = 'Normal'): this {
    if (next === this.phase) return this.message(note);
    this.status.phase = next;
    // Milliseconds: a timeout of a few seconds must not fire up to a second early.
    this.status.phaseSince = this.ctx.now.toISOString();
    this.status.message = note;
    return this.event(type, next, note);
  }

  /** ms since the (possibly just entered) phase began. */
  inPhaseMs(): number {
    return inPhaseMs(this.status, this.ctx.now);
  }

  /** ms left before the current phase times out, if it is a timed one. */
  timeLeftMs(): number | undefined {
    if (!TIMED_PHASES.includes(this.phase)) return undefined;
    return phaseTimeoutMs(this.boot, this.ctx) - this.inPhaseMs();
  }

  act(actions: BootAction[], requeueAfterMs?: number, extra: { releaseFinalizer?: boolean } = {}): Decision {
    // Look again when the phase would time out, so a timeout shows within one poll of its time.
    const left = this.timeLeftMs();
    let requeue = requeueAfterMs;
    if (left !== undefined) requeue = Math.min(requeue ?? Number.POSITIVE_INFINITY, Math.max(0, left) + 25);
    return {
      kind: 'act',
      actions,
      status: this.status,
      events: this.events,
      ...(requeue !== undefined ? { requeueAfterMs: requeue } : {}),
      ...extra,
    };
  }
}
