// The Set decision: (Set, selected targets, its children, now) -> children to create, holds to
// change, status and Events. Pure. The disruption budgets pace the rollout (every child asks for
// its own ServerMaintenance); the Set only holds children back, before their maintenance gate:
//   - ShortCircuited: more children Failed than spec.maxFailures allows (a count, or a share of the
//     children, rounded up as budgets round): every child not yet started is held, Failed ones too
//     (no automatic retry), until an operator raises maxFailures or deletes failed children;
//   - Paused: spec.paused;
//   - Queued: spec.maxConcurrent children are already in progress (the active ones keep their
//     slots; held ones are released in target order as slots free up).
// A child past its gate (it touches the BMC) is never held: it finishes, so nothing is half-applied.
// A changed template is pushed to every child not past its gate (re-stamped with its hold in one
// write); a child past it is re-stamped once it has finished.
// A Failed child below the short-circuit keeps its own retry policy; an automatic retry is paced by
// the budgets (it asks for a new maintenance) and counts against maxConcurrent once it runs again.
import { createHash } from 'node:crypto';
import type { Condition } from '../../../api/schema/common.js';
import { maxAllowedUnavailable } from '../../../contract/budget-room.js';
import { rfc3339 } from '../../../contract/time.js';
import {
  SET_SHAPES,
  SetConditions as C,
  type ChildView,
  type HoldReason,
  type SetDecision,
  type SetEvent,
  type SetKindName,
  type SetObject,
  type SetStatus,
} from './model.js';

const DONE = new Set(['Completed', 'Applied']);

/** The child's name: `<set>-<target>`, hashed when longer than a DNS subdomain allows. */
export function childName(set: string, target: string): string {
  const plain = `${set}-${target}`;
  if (plain.length <= 253) return plain;
  const hash = createHash('sha256').update(plain).digest('hex').slice(0, 10);
  return `${plain.slice(0, 240).replace(/[-.]+$/, '')}-${hash}`;
}

/** How many failed children the Set tolerates before it short-circuits; undefined: no limit. */
export function failureLimit(maxFailures: number | string | undefined, children: number): number | undefined {
  if (maxFailures === undefined) return undefined;
  return maxAllowedUnavailable(maxFailures, children);
}

export interface SetInput {
  kind: SetKindName;
  set: SetObject;
  /** Names of the servers or BMCs the selector selects. */
  targets: readonly string[];
  /** The children the Set owns. */
  children: readonly ChildView[];
  now: Date;
}

function counters(kind: SetKindName, all: readonly { state?: string }[], selected: number): SetStatus {
  const c = SET_SHAPES[kind].child;
  const count = (f: (s: string | undefined) => boolean) => all.filter((x) => f(x.state)).length;
  return {
    [SET_SHAPES[kind].selected]: selected,
    [`available${c}`]: all.length,
    [`pending${c}`]: count((s) => s === undefined || s === 'Pending'),
    [`inProgress${c}`]: count((s) => s === 'InProgress'),
    [`completed${c}`]: count((s) => s !== undefined && DONE.has(s)),
    [`failed${c}`]: count((s) => s === 'Failed'),
  };
}

/** A condition the Set wants, and the Event its transition to that status records. */
interface Wanted {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
  event?: SetEvent;
}

/**
 * Writes `w` into `list`, keeping the old transition time when the status did not move; returns
 * whether this is a transition worth an Event (a move, or a first appearance as True).
 */
function setCondition(
  list: Condition[],
  old: readonly Condition[] | undefined,
  w: Wanted,
  now: Date,
  generation: number | undefined,
): boolean {
  const prev = old?.find((c) => c.type === w.type);
  const moved = !prev || prev.status !== w.status;
  list.push({
    type: w.type,
    status: w.status,
    reason: w.reason,
    message: w.message,
    lastTransitionTime: moved ? rfc3339(now) : prev.lastTransitionTime,
    observedGeneration: generation,
  });
  return moved && (prev !== undefined || w.status === 'True');
}

/**
 * The hold each child should carry. Started children always run; then, unless the whole Set is
 * held, those already released keep their slot; the rest are released in target order while
 * maxConcurrent allows.
 */
function planHolds(
  existing: readonly ChildView[],
  all: readonly ChildView[],
  maxConcurrent: number | undefined,
  shortCircuited: boolean,
  paused: boolean,
): Map<string, HoldReason | null> {
  const desired = new Map<string, HoldReason | null>();
  const waiting: ChildView[] = [];
  let active = 0;
  for (const c of all) {
    if (c.started) {
      desired.set(c.name, null);
      active++;
    } else if (c.state !== undefined && DONE.has(c.state)) desired.set(c.name, null);
    else if (shortCircuited) desired.set(c.name, 'ShortCircuited');
    else if (paused) desired.set(c.name, 'Paused');
    else if (c.state === 'Failed')
      desired.set(c.name, null); // its own retry policy applies
    else waiting.push(c);
  }
  const cap = maxConcurrent ?? Number.POSITIVE_INFINITY;
  const released = waiting.filter((c) => c.hold === undefined && existing.includes(c));
  const queued = waiting
    .filter((c) => !released.includes(c))
    .sort((a, b) => (a.target < b.target ? -1 : a.target > b.target ? 1 : 0));
  // Released but not started children hold their slot (a lowered maxConcurrent drains, never evicts).
  active += released.length;
  for (const c of released) desired.set(c.name, null);
  for (const c of queued) {
    if (active < cap) {
      desired.set(c.name, null);
      active++;
    } else desired.set(c.name, 'Queued');
  }

  return desired;
}

function shortCircuitWanted(
  maxFailures: number | string | undefined,
  why: string,
  limit: number | undefined,
  shortCircuited: boolean,
): Wanted {
  const max = String(maxFailures);
  if (shortCircuited)
    return {
      type: C.ShortCircuited,
      status: 'True',
      reason: 'TooManyFailures',
      message: `${why}, more than maxFailures ${max} (${limit}): no child starts; raise maxFailures or delete failed children to go on`,
      event: {
        type: 'Warning',
        reason: 'ShortCircuited',
        note: `${why}, more than maxFailures ${max}: no further child starts`,
      },
    };
  return {
    type: C.ShortCircuited,
    status: 'False',
    reason: 'WithinLimit',
    message:
      limit === undefined
        ? `${why}; no maxFailures set`
        : `${why}; at most ${limit} tolerated (maxFailures ${max})`,
    event: { type: 'Normal', reason: 'ShortCircuitCleared', note: `${why}: children start again` },
  };
}

function pausedWanted(paused: boolean): Wanted {
  return paused
    ? {
        type: C.Paused,
        status: 'True',
        reason: 'Paused',
        message: 'spec.paused: no child starts',
        event: { type: 'Normal', reason: 'Paused', note: 'spec.paused: no child starts' },
      }
    : {
        type: C.Paused,
        status: 'False',
        reason: 'Running',
        message: 'not paused',
        event: { type: 'Normal', reason: 'Resumed', note: 'resumed' },
      };
}

function rolloutWanted(childKind: string, all: readonly ChildView[]): Wanted {
  const done = all.filter((c) => c.state !== undefined && DONE.has(c.state)).length;
  const message = `${done} of ${all.length} ${childKind} children done`;
  if (all.length === 0)
    return {
      type: C.RolloutComplete,
      status: 'False',
      reason: 'NoTargets',
      message: 'the selector selects nothing',
    };
  if (done < all.length) return { type: C.RolloutComplete, status: 'False', reason: 'InProgress', message };
  return {
    type: C.RolloutComplete,
    status: 'True',
    reason: 'AllChildrenDone',
    message,
    event: { type: 'Normal', reason: 'RolloutComplete', note: `all ${all.length} children done` },
  };
}

/** The Set's conditions, with an Event for each transition worth one. */
function setConditions(
  set: SetObject,
  wanted: readonly Wanted[],
  now: Date,
  events: SetEvent[],
): Condition[] {
  const conditions: Condition[] = [];
  for (const w of wanted)
    if (setCondition(conditions, set.status?.conditions, w, now, set.metadata.generation) && w.event)
      events.push(w.event);
  return conditions;
}

export function decideSet(input: SetInput): SetDecision {
  const { kind, set, now } = input;
  const spec = set.spec;
  const setName = set.metadata.name ?? '';
  const events: SetEvent[] = [];
  const childKind = SET_SHAPES[kind].child;

  // A child not stamped from the current template is re-stamped, unless it is past its gate (it
  // finishes what it started, then is re-stamped). One done before the change reads as waiting:
  // re-stamped, it is a new attempt and waits for a slot like a first one.
  const stale = new Set(input.children.filter((c) => !c.current && !c.started).map((c) => c.name));
  const rerun = new Set(
    input.children
      .filter((c) => stale.has(c.name) && c.state !== undefined && DONE.has(c.state))
      .map((c) => c.name),
  );
  const existing = input.children.map((c) => (rerun.has(c.name) ? { ...c, state: 'Pending' } : c));
  // The children after this step: the existing ones, plus one per selected target without a child.
  const have = new Set(existing.map((c) => c.target));
  const fresh: ChildView[] = [...new Set(input.targets)]
    .filter((t) => !have.has(t))
    .sort()
    .map((target) => ({ name: childName(setName, target), target, started: false, current: true }));
  const all = [...existing, ...fresh];

  const failed = all.filter((c) => c.state === 'Failed').length;
  const limit = failureLimit(spec.maxFailures, all.length);
  const shortCircuited = limit !== undefined && failed > limit;
  const paused = spec.paused === true;

  // A re-run holds no slot yet: it queues in target order like a fresh child.
  const released = existing.filter((c) => !rerun.has(c.name));
  const desired = planHolds(released, all, spec.maxConcurrent, shortCircuited, paused);

  const create = fresh.map((c) => {
    const hold = desired.get(c.name) ?? undefined;
    return hold ? { name: c.name, target: c.target, hold } : { name: c.name, target: c.target };
  });
  const holds = existing.flatMap((c) => {
    const want = desired.get(c.name) ?? null;
    return stale.has(c.name) || (c.hold ?? null) === want ? [] : [{ name: c.name, hold: want }];
  });
  const restamp = existing
    .filter((c) => stale.has(c.name))
    .map((c) => ({ name: c.name, target: c.target, hold: desired.get(c.name) ?? null }));
  const heldChildren = [...desired.values()].filter((h) => h !== null).length;

  const why = `${failed} of ${all.length} ${childKind} children Failed`;
  const conditions = setConditions(
    set,
    [
      shortCircuitWanted(spec.maxFailures, why, limit, shortCircuited),
      pausedWanted(paused),
      rolloutWanted(childKind, all),
    ],
    now,
    events,
  );
  if (create.length > 0)
    events.push({
      type: 'Normal',
      reason: 'ChildrenCreated',
      note: `created ${create.length} ${childKind}${create.length === 1 ? '' : 's'}`,
    });

  if (restamp.length > 0)
    events.push({
      type: 'Normal',
      reason: 'TemplateChanged',
      note: `re-stamping ${restamp.length} ${childKind}${restamp.length === 1 ? '' : 's'} from the changed template`,
    });

  return {
    create,
    holds,
    restamp,
    status: {
      ...counters(kind, all, new Set(input.targets).size),
      heldChildren,
      observedGeneration: set.metadata.generation,
      conditions,
    },
    events,
  };
}
