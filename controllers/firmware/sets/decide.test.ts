// The Set decision: fan-out (one child per target, once), counters, maxConcurrent (caps, never
// evicts), pause and the failure short-circuit, and properties over random fleets: never more
// released-and-unfinished children than maxConcurrent allows beyond those already started, no
// child started while paused or short-circuited, counters that add up.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { childName, decideSet, failureLimit, type SetInput } from './decide.js';
import type { ChildView, SetObject } from './model.js';

const NOW = new Date('2026-12-01T10:00:00Z');

function set(spec: Partial<SetObject['spec']> = {}, status?: SetObject['status']): SetObject {
  return {
    metadata: { name: 'fleet', uid: 'uid-set', generation: 1 },
    spec: { serverSelector: {}, biosVersionTemplate: { version: '2.0.0' }, ...spec },
    ...(status ? { status } : {}),
  };
}

const targets = (n: number) => Array.from({ length: n }, (_, i) => `srv-${String(i).padStart(3, '0')}`);
const child = (target: string, state?: string, extra: Partial<ChildView> = {}): ChildView => ({
  name: childName('fleet', target),
  target,
  started: false,
  current: true,
  ...(state ? { state } : {}),
  ...extra,
});

const input = (over: Partial<SetInput>): SetInput => ({
  kind: 'BIOSVersionSet',
  set: set(),
  targets: [],
  children: [],
  now: NOW,
  ...over,
});

describe('decideSet', () => {
  it('creates one child per selected target, unheld without maxConcurrent, and counts them', () => {
    const d = decideSet(input({ targets: targets(3) }));
    expect(d.create).toEqual([
      { name: 'fleet-srv-000', target: 'srv-000' },
      { name: 'fleet-srv-001', target: 'srv-001' },
      { name: 'fleet-srv-002', target: 'srv-002' },
    ]);
    expect(d.status).toMatchObject({
      fullyLabeledServers: 3,
      availableBIOSVersion: 3,
      pendingBIOSVersion: 3,
      inProgressBIOSVersion: 0,
      completedBIOSVersion: 0,
      failedBIOSVersion: 0,
      heldChildren: 0,
    });
    expect(d.events.map((e) => e.reason)).toContain('ChildrenCreated');
  });

  it('a selector that selects nothing is not a complete rollout', () => {
    const d = decideSet(input({ targets: [] }));
    expect(d.create).toEqual([]);
    expect(d.status.conditions?.find((c) => c.type === 'RolloutComplete')).toMatchObject({
      status: 'False',
      reason: 'NoTargets',
    });
  });

  it('does not create a second child for a target that has one', () => {
    const d = decideSet(input({ targets: targets(2), children: [child('srv-000', 'Completed')] }));
    expect(d.create.map((c) => c.target)).toEqual(['srv-001']);
    expect(d.status.completedBIOSVersion).toBe(1);
    expect(d.status.availableBIOSVersion).toBe(2);
  });

  it('names the counters after the child kind (BMCSettingsSet counts BMCs, Applied as completed)', () => {
    const d = decideSet(
      input({ kind: 'BMCSettingsSet', targets: ['bmc-a'], children: [child('bmc-a', 'Applied')] }),
    );
    expect(d.status).toMatchObject({ fullyLabeledBMCs: 1, availableBMCSettings: 1, completedBMCSettings: 1 });
    expect(d.status.conditions?.find((c) => c.type === 'RolloutComplete')?.status).toBe('True');
  });

  it('maxConcurrent queues the rest and releases them as children finish', () => {
    const first = decideSet(input({ set: set({ maxConcurrent: 2 }), targets: targets(4) }));
    expect(first.create.map((c) => c.hold ?? 'run')).toEqual(['run', 'run', 'Queued', 'Queued']);
    const children = first.create.map((c) => child(c.target, undefined, c.hold ? { hold: c.hold } : {}));
    children[0] = { ...children[0]!, state: 'Completed' };
    const next = decideSet(input({ set: set({ maxConcurrent: 2 }), targets: targets(4), children }));
    expect(next.create).toEqual([]);
    expect(next.holds).toEqual([{ name: 'fleet-srv-002', hold: null }]);
    expect(next.status.heldChildren).toBe(1);
  });

  it('a lowered maxConcurrent drains: released children keep their slot, none is evicted', () => {
    const children = targets(3).map((t) => child(t, 'InProgress'));
    const d = decideSet(input({ set: set({ maxConcurrent: 1 }), targets: targets(3), children }));
    expect(d.holds).toEqual([]);
  });

  it('paused holds every child not yet started; started ones and finished ones are left alone', () => {
    const children = [
      child('srv-000', 'InProgress', { started: true }),
      child('srv-001', 'InProgress'),
      child('srv-002', 'Completed'),
      child('srv-003'),
    ];
    const d = decideSet(input({ set: set({ paused: true }), targets: targets(5), children }));
    expect(d.holds).toEqual([
      { name: 'fleet-srv-001', hold: 'Paused' },
      { name: 'fleet-srv-003', hold: 'Paused' },
    ]);
    expect(d.create).toEqual([{ name: 'fleet-srv-004', target: 'srv-004', hold: 'Paused' }]);
    expect(d.status.conditions?.find((c) => c.type === 'Paused')).toMatchObject({ status: 'True' });
    expect(d.events.map((e) => e.reason)).toContain('Paused');
    // Resuming releases them.
    const held = children.map((c) =>
      c.name === 'fleet-srv-001' || c.name === 'fleet-srv-003' ? { ...c, hold: 'Paused' } : c,
    );
    const r = decideSet(
      input({ set: set({ paused: false }, d.status), targets: targets(4), children: held }),
    );
    expect(r.holds).toEqual([
      { name: 'fleet-srv-001', hold: null },
      { name: 'fleet-srv-003', hold: null },
    ]);
    expect(r.events.map((e) => e.reason)).toContain('Resumed');
  });

  it('short-circuits once more children failed than maxFailures: condition, Warning Event, holds', () => {
    const children = [
      child('srv-000', 'Failed'),
      child('srv-001', 'Failed'),
      child('srv-002', 'InProgress', { started: true }),
      child('srv-003', 'Pending'),
    ];
    const within = decideSet(input({ set: set({ maxFailures: 2 }), targets: targets(4), children }));
    expect(within.status.conditions?.find((c) => c.type === 'ShortCircuited')?.status).toBe('False');
    expect(within.holds).toEqual([]);
    const over = decideSet(input({ set: set({ maxFailures: 1 }), targets: targets(4), children }));
    expect(over.status.conditions?.find((c) => c.type === 'ShortCircuited')).toMatchObject({
      status: 'True',
      reason: 'TooManyFailures',
    });
    expect(over.events).toContainEqual(
      expect.objectContaining({ type: 'Warning', reason: 'ShortCircuited' }),
    );
    // The started child finishes; the failed ones are not retried; the pending one waits.
    expect(over.holds).toEqual([
      { name: 'fleet-srv-000', hold: 'ShortCircuited' },
      { name: 'fleet-srv-001', hold: 'ShortCircuited' },
      { name: 'fleet-srv-003', hold: 'ShortCircuited' },
    ]);
    // Already short-circuited: no second Event.
    const again = decideSet(
      input({ set: set({ maxFailures: 1 }, over.status), targets: targets(4), children }),
    );
    expect(again.events.filter((e) => e.reason === 'ShortCircuited')).toEqual([]);
  });

  it('maxFailures as a share of the children rounds up as the budgets do', () => {
    expect(failureLimit('10%', 25)).toBe(3);
    expect(failureLimit(0, 25)).toBe(0);
    expect(failureLimit(undefined, 25)).toBeUndefined();
  });

  it('hashes child names longer than a DNS subdomain', () => {
    const n = childName('s'.repeat(200), 't'.repeat(100));
    expect(n.length).toBeLessThanOrEqual(253);
    expect(n).toMatch(/^[a-z0-9.-]+$/);
    expect(childName('s'.repeat(200), 't'.repeat(101))).not.toBe(n);
  });
});

const STATES = [undefined, 'Pending', 'InProgress', 'Completed', 'Failed'] as const;
const childArb = fc.record({
  state: fc.constantFrom(...STATES),
  started: fc.boolean(),
  hold: fc.constantFrom(undefined, 'Queued', 'Paused', 'ShortCircuited'),
  current: fc.boolean(),
});

describe('decideSet: a changed template', () => {
  const stale = (target: string, state?: string, extra: Partial<ChildView> = {}) =>
    child(target, state, { current: false, ...extra });

  it('re-stamps done children, paced by maxConcurrent like first attempts, and says so', () => {
    const [a, b, c] = targets(3);
    const d = decideSet(
      input({
        set: set({ maxConcurrent: 1 }),
        targets: [a!, b!, c!],
        children: [stale(a!, 'Completed'), stale(b!, 'Completed'), stale(c!, 'Completed')],
      }),
    );
    expect(d.restamp).toEqual([
      { name: 'fleet-srv-000', target: a, hold: null },
      { name: 'fleet-srv-001', target: b, hold: 'Queued' },
      { name: 'fleet-srv-002', target: c, hold: 'Queued' },
    ]);
    expect(d.holds).toEqual([]);
    expect(d.status).toMatchObject({ pendingBIOSVersion: 3, completedBIOSVersion: 0, heldChildren: 2 });
    expect(d.status.conditions?.find((x) => x.type === 'RolloutComplete')).toMatchObject({ status: 'False' });
    expect(d.events).toContainEqual(expect.objectContaining({ reason: 'TemplateChanged' }));
  });

  it('lets a child past its gate finish on the old template, and re-stamps it once it is done', () => {
    const [a] = targets(1);
    const running = decideSet(
      input({ targets: [a!], children: [stale(a!, 'InProgress', { started: true })] }),
    );
    expect(running.restamp).toEqual([]);
    expect(running.events.map((e) => e.reason)).not.toContain('TemplateChanged');
    const done = decideSet(input({ targets: [a!], children: [stale(a!, 'Completed')] }));
    expect(done.restamp).toEqual([{ name: 'fleet-srv-000', target: a, hold: null }]);
  });

  it('re-stamps a child waiting at its gate with the hold it has, and leaves current children alone', () => {
    const [a, b] = targets(2);
    const d = decideSet(
      input({
        set: set({ paused: true }),
        targets: [a!, b!],
        children: [stale(a!, 'InProgress', { hold: 'Paused' }), child(b!, 'Completed')],
      }),
    );
    expect(d.restamp).toEqual([{ name: 'fleet-srv-000', target: a, hold: 'Paused' }]);
    expect(d.holds).toEqual([]);
  });
});

describe('decideSet properties', () => {
  it('holds the invariants on any fleet', () => {
    fc.assert(
      fc.property(
        fc.array(childArb, { maxLength: 40 }),
        fc.integer({ min: 0, max: 10 }),
        fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
        fc.option(fc.oneof(fc.integer({ min: 0, max: 5 }), fc.constantFrom('0%', '10%', '50%')), {
          nil: undefined,
        }),
        fc.boolean(),
        (raw, extra, maxConcurrent, maxFailures, paused) => {
          const children: ChildView[] = raw.map((r, i) => ({
            name: childName('fleet', `srv-${i}`),
            target: `srv-${i}`,
            ...(r.state ? { state: r.state } : {}),
            // Only InProgress children can be past their gate.
            started: r.state === 'InProgress' && r.started,
            ...(r.hold ? { hold: r.hold } : {}),
            current: r.current,
          }));
          const all = targets(0).concat(children.map((c) => c.target));
          for (let i = 0; i < extra; i++) all.push(`new-${i}`);
          const d = decideSet(
            input({ set: set({ maxConcurrent, maxFailures, paused }), targets: all, children }),
          );
          // Fan-out: every target has exactly one child afterwards.
          const names = [...children.map((c) => c.name), ...d.create.map((c) => c.name)];
          expect(new Set(names).size).toBe(all.length);
          // The hold each child ends up with.
          const holdOf = new Map<string, string | undefined>(children.map((c) => [c.name, c.hold]));
          for (const h of d.holds) holdOf.set(h.name, h.hold ?? undefined);
          for (const r of d.restamp) holdOf.set(r.name, r.hold ?? undefined);
          for (const c of d.create) holdOf.set(c.name, c.hold);
          // Re-stamped exactly the stale children not past their gate, each written once.
          const stale = children.filter((c) => !c.current && !c.started).map((c) => c.name);
          expect(d.restamp.map((r) => r.name).sort()).toEqual([...stale].sort());
          for (const h of d.holds) expect(stale).not.toContain(h.name);
          // A re-stamped child that was done is a new attempt: it waits like a pending one.
          const view = [
            ...children.map((c) =>
              stale.includes(c.name) && c.state === 'Completed' ? { ...c, state: 'Pending' } : c,
            ),
            ...d.create.map((c): ChildView => ({
              name: c.name,
              target: c.target,
              started: false,
              current: true,
            })),
          ];
          const runnable = view.filter(
            (c) => !holdOf.get(c.name) && c.state !== 'Completed' && c.state !== 'Failed',
          );
          const failed = view.filter((c) => c.state === 'Failed').length;
          const limit = failureLimit(maxFailures, view.length);
          if (paused || (limit !== undefined && failed > limit))
            // Nothing that has not started may run; Failed children are not retried.
            expect(runnable.every((c) => c.started)).toBe(true);
          if (maxConcurrent !== undefined) {
            // Only children already running before this step may exceed the cap (drain, not evict).
            const before = children.filter(
              (c) => c.started || (!c.hold && c.state !== 'Completed' && c.state !== 'Failed'),
            ).length;
            expect(runnable.length).toBeLessThanOrEqual(Math.max(maxConcurrent, before));
          }
          // Started children are never held.
          for (const c of view) if (c.started) expect(holdOf.get(c.name)).toBeUndefined();
          // Counters add up.
          const s = d.status;
          expect(
            (s.pendingBIOSVersion as number) +
              (s.inProgressBIOSVersion as number) +
              (s.completedBIOSVersion as number) +
              (s.failedBIOSVersion as number),
          ).toBe(s.availableBIOSVersion);
          expect(s.availableBIOSVersion).toBe(view.length);
          expect(s.heldChildren).toBe([...holdOf.values()].filter(Boolean).length);
        },
      ),
      { numRuns: 500 },
    );
  });
});
