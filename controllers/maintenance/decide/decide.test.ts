// The maintenance controller's decision for one server, without I/O.
import { describe, expect, it } from '@jest/globals';
import type { Server } from '../../../api/metal/v1alpha1/server.js';
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerBoot } from '../../../api/maintenance/v1alpha1/serverboot.js';
import { DEFAULT_POLICY, type Policy } from '../../../policies/schema.js';
import {
  LEGACY_MMO_FINALIZER,
  MAINTENANCE_FINALIZER,
  MAINTENANCE_TAINT_KEY,
  OPERATION_ANNOTATION,
  PARKED_ANNOTATION,
  PARKED_BY_ANNOTATION,
} from '../../../contract/names.js';
import { compareQueue } from '../../../contract/lifecycle.js';
import { canonicalJSON } from '../../shared/canonical.js';
import { decideServer } from './server.js';
import { deniedStatus } from './queue.js';
import { planPark } from './park.js';
import { FIRST_STATUS_GRACE_MS, type GrantHolding, type ServerInput } from './model.js';

const T0 = Date.parse('2026-09-01T10:00:00Z');
const at = (s: number) => new Date(T0 + s * 1000);
const iso = (s: number) => at(s).toISOString().replace('.000Z', 'Z');

const policy: Policy = {
  ...DEFAULT_POLICY,
  timeouts: { approval: '1h', park: '60s', inMaintenance: '10m', bootPhase: '30s' },
};

function server(
  name = 's1',
  patch: Partial<Server['spec']> = {},
  annotations?: Record<string, string>,
  status: Server['status'] = { state: 'Available' },
): Server {
  return {
    metadata: { name, uid: `uid-${name}`, resourceVersion: '10', ...(annotations ? { annotations } : {}) },
    spec: { systemUUID: name, ...patch },
    status,
  };
}

/** A value as the API server returns it: keys sorted at every level (custom resources are Go maps). */
const sortedKeys = <T>(v: T): T => JSON.parse(canonicalJSON(v)) as T;

let seq = 0;
function maint(
  name: string,
  patch: {
    spec?: Partial<ServerMaintenance['spec']>;
    status?: ServerMaintenance['status'];
    meta?: Partial<ServerMaintenance['metadata']>;
  } = {},
): ServerMaintenance {
  seq++;
  return {
    metadata: {
      name,
      namespace: 'ops',
      uid: `uid-${name}`,
      resourceVersion: String(100 + seq),
      generation: 1,
      creationTimestamp: iso(-600 + seq),
      finalizers: [MAINTENANCE_FINALIZER],
      ...patch.meta,
    },
    spec: { serverRef: { name: 's1' }, ...patch.spec },
    ...(patch.status ? { status: patch.status } : {}),
  };
}

const approved = (source: 'NotRequired' | 'Owner' = 'NotRequired') => ({
  state: 'Approved' as const,
  approval: { source, approvedAt: iso(-60) },
});
const running = (startedAgo = 30, extra: Partial<NonNullable<ServerMaintenance['status']>> = {}) => ({
  state: 'InMaintenance' as const,
  startedAt: iso(-startedAgo),
  approval: { source: 'NotRequired' as const, approvedAt: iso(-startedAgo - 1) },
  ...extra,
});

function input(over: Partial<ServerInput> = {}): ServerInput {
  return {
    serverName: 's1',
    server: server(),
    serverGone: false,
    maintenances: [],
    grants: new Map(),
    boots: new Map(),
    policy,
    now: at(0),
    options: { parkMode: 'annotation', taintKey: MAINTENANCE_TAINT_KEY },
    backoff: new Map(),
    ...over,
  };
}

const cond = (status: ServerMaintenance['status'] | undefined, type: string) =>
  status?.conditions?.find((c) => c.type === type);

describe('queue order', () => {
  it('runs higher priority first, then the more urgent class, then the older', () => {
    const low = maint('low', { spec: { priority: 0, class: 'Emergency' } });
    const high = maint('high', { spec: { priority: 5 } });
    const urgent = maint('urgent', { spec: { priority: 0, class: 'Urgent' } });
    const oldPlanned = maint('old', {
      spec: { priority: 0, class: 'Planned' },
      meta: { creationTimestamp: iso(-9999) },
    });
    const newPlanned = maint('new', { spec: { priority: 0, class: 'Planned' } });
    expect(
      [newPlanned, urgent, oldPlanned, low, high].sort(compareQueue).map((m) => m.metadata.name),
    ).toEqual(['high', 'low', 'urgent', 'old', 'new']);
  });
});

describe('a new maintenance', () => {
  it('gets the finalizer and a Pending status with its queue position', () => {
    const m = maint('m1', { meta: { finalizers: [] } });
    const plan = decideServer(input({ maintenances: [m] }));
    expect(plan.addFinalizer).toEqual([m]);
    expect(plan.statuses[0]?.status).toMatchObject({ state: 'Pending', queuePosition: 0 });
    expect(cond(plan.statuses[0]?.status, 'Admitted')?.reason).toBe('AwaitingApproval');
    expect(plan.attempt).toBeUndefined();
    expect(plan.taint).toBeUndefined();
  });

  it('is not tried before it has our finalizer (cleanup must be guaranteed first)', () => {
    const m = maint('m1', { meta: { finalizers: [] }, status: approved() });
    expect(decideServer(input({ maintenances: [m] })).attempt).toBeUndefined();
  });
});

describe('a new maintenance', () => {
  it('gets no status of ours until the approval controller has answered, for a few seconds at most', () => {
    const m = maint('m', { meta: { creationTimestamp: iso(-2) } });
    const plan = decideServer(input({ maintenances: [m] }));
    expect(plan.statuses).toEqual([]);
    expect(plan.requeueAfterMs).toBe(FIRST_STATUS_GRACE_MS - 2000);
    const later = decideServer(input({ maintenances: [m], now: at(9) }));
    expect(later.statuses[0]?.status.state).toBe('Pending');
  });

  it('gets its state as soon as the approval controller has answered, approved or not', () => {
    const waiting = maint('m', {
      meta: { creationTimestamp: iso(-2) },
      status: {
        announcedAt: iso(-1),
        conditions: [
          {
            type: 'Approved',
            status: 'False',
            reason: 'AwaitingApproval',
            message: '',
            lastTransitionTime: iso(-1),
          },
        ],
      },
    });
    expect(decideServer(input({ maintenances: [waiting] })).statuses[0]?.status.state).toBe('Announced');
  });
});

describe('starting', () => {
  it('taints the server for the first approved maintenance and tries it', () => {
    const m1 = maint('m1', { status: { state: 'Announced', announcedAt: iso(-100) } });
    const m2 = maint('m2', { status: approved() });
    const plan = decideServer(input({ maintenances: [m1, m2] }));
    expect(plan.taint).toEqual({ value: 'uid-m2' });
    expect(plan.attempt?.m).toBe(m2);
    expect(plan.attempt?.status).toMatchObject({
      state: 'InMaintenance',
      queuePosition: 0,
      startedAt: iso(0),
    });
    // The waiting one is not started and says why; an approval of M2 never starts M1.
    const w1 = plan.statuses.find((w) => w.m === m1)!.status;
    expect(w1.state).toBe('Announced');
    expect(cond(w1, 'Admitted')?.reason).toBe('AwaitingApproval');
    expect(plan.projection?.state).toBe('Approved');
  });

  it('never tries a second one while one holds the server', () => {
    const a = maint('a', { status: running() });
    const b = maint('b', { spec: { priority: 100 }, status: approved() });
    const plan = decideServer(
      input({
        maintenances: [a, b],
        server: server('s1', {}, { [PARKED_ANNOTATION]: 'true', [PARKED_BY_ANNOTATION]: 'uid-a' }),
      }),
    );
    expect(plan.attempt).toBeUndefined();
    const wb = plan.statuses.find((w) => w.m === b)!.status;
    expect(cond(wb, 'Admitted')).toMatchObject({ status: 'False', reason: 'ServerBusy' });
    expect(wb.queuePosition).toBe(1);
    expect(plan.taint).toEqual({ value: 'uid-a' });
    expect(plan.projection).toMatchObject({
      state: 'InMaintenance',
      activeMaintenanceRef: { uid: 'uid-a' },
      pending: 1,
    });
  });

  it('honours the backoff from a denial and looks again when it ends', () => {
    const m = maint('m', { status: approved() });
    const plan = decideServer(input({ maintenances: [m], backoff: new Map([['uid-m', T0 + 7000]]) }));
    expect(plan.attempt).toBeUndefined();
    expect(plan.requeueAfterMs).toBe(7000);
    // The taint stays on while it waits: an approved maintenance already keeps new claims off.
    expect(plan.taint).toEqual({ value: 'uid-m' });
  });

  it('waits for notBefore', () => {
    const m = maint('m', { spec: { approval: { notBefore: iso(20) } }, status: approved() });
    const plan = decideServer(input({ maintenances: [m] }));
    expect(plan.attempt).toBeUndefined();
    expect(plan.requeueAfterMs).toBe(20_000);
    expect(cond(plan.statuses[0]?.status, 'Admitted')?.reason).toBe('NotBefore');
  });

  it('does not take a "not required" approval for a server that got claimed meanwhile', () => {
    const m = maint('m', { status: approved('NotRequired') });
    const claimed = server('s1', { serverClaimRef: { namespace: 't', name: 'c' } });
    const plan = decideServer(input({ maintenances: [m], server: claimed }));
    expect(plan.attempt).toBeUndefined();
    // Still Approved, so the placement rule refuses the server (should the claim let go of it): the
    // taint says so to metal-operator's binder.
    expect(plan.taint).toEqual({ value: 'uid-m' });
  });

  it('taints for an approved maintenance that is not ours yet, in the plan that writes its Approved state', () => {
    const m = maint('m', {
      meta: { finalizers: [] },
      status: {
        state: 'Announced',
        announcedAt: iso(-100),
        approval: { source: 'Owner', approvedAt: iso(-1) },
      },
    });
    const plan = decideServer(input({ maintenances: [m] }));
    expect(plan.addFinalizer).toEqual([m]);
    expect(plan.statuses.find((w) => w.m === m)?.status.state).toBe('Approved');
    expect(plan.attempt).toBeUndefined();
    expect(plan.taint).toEqual({ value: 'uid-m' });
  });

  it('puts no taint on for a maintenance the placement rule does not refuse for (Pending, Announced)', () => {
    const pending = maint('p');
    const announced = maint('a', { status: { state: 'Announced', announcedAt: iso(-100) } });
    expect(decideServer(input({ maintenances: [pending, announced] })).taint).toBeUndefined();
  });

  it('turns a denial into Admitted=False with the webhook reason, keeping the waiting state', () => {
    const m = maint('m', { status: approved() });
    const plan = decideServer(input({ maintenances: [m] }));
    const denied = deniedStatus(plan.attempt!, 'BudgetExhausted', 'fleet: 3 unavailable, 3 allowed', at(0));
    expect(denied.state).toBe('Approved');
    expect(cond(denied, 'Admitted')).toMatchObject({ status: 'False', reason: 'BudgetExhausted' });
  });
});

describe('while InMaintenance', () => {
  it('admits with the park conditions already set, so the follow-through writes no status', () => {
    const m = maint('m', { status: approved() });
    const attempt = decideServer(input({ maintenances: [m] })).attempt!;
    expect(cond(attempt.status, 'ServerParked')?.reason).toBe('ParkRequested');
    expect(cond(attempt.status, 'Ready')).toMatchObject({ status: 'False', reason: 'Parking' });
    // As the API server returns it: admitted, with the conditions the attempt wrote, keys sorted.
    const admitted = maint('m', {
      status: sortedKeys({ ...approved(), ...attempt.status, approval: approved().approval }),
    });
    const next = decideServer(input({ maintenances: [admitted] }));
    expect(next.park).toEqual({ [OPERATION_ANNOTATION]: 'park', [PARKED_BY_ANNOTATION]: 'uid-m' });
    expect(next.statuses).toEqual([]);
  });

  it('does not write a status for the grant mirror alone', () => {
    const m = maint('m', { status: approved() });
    const attempt = decideServer(input({ maintenances: [m] })).attempt!;
    const admitted = maint('m', {
      status: { ...approved(), ...attempt.status, approval: approved().approval },
    });
    const grants = new Map<string, GrantHolding[]>([
      ['uid-m', [{ ref: { kind: 'ServerDisruptionBudget', name: 'fleet' }, grantedAt: iso(0) }]],
    ]);
    expect(decideServer(input({ maintenances: [admitted], grants })).statuses).toEqual([]);
    const parked = server(
      's1',
      { taints: [{ key: MAINTENANCE_TAINT_KEY, value: 'uid-m', effect: 'NoBind' }] },
      { [PARKED_ANNOTATION]: 'true', [PARKED_BY_ANNOTATION]: 'uid-m' },
      { state: 'Parked' },
    );
    const ready = decideServer(input({ maintenances: [admitted], grants, server: parked })).statuses[0]!;
    expect(ready.status.grant?.budgets).toEqual([{ kind: 'ServerDisruptionBudget', name: 'fleet' }]);
  });

  it('asks metal-operator to park the server, recording who asked', () => {
    const m = maint('m', { status: running() });
    const plan = decideServer(input({ maintenances: [m] }));
    expect(plan.park).toEqual({ [OPERATION_ANNOTATION]: 'park', [PARKED_BY_ANNOTATION]: 'uid-m' });
    const s = plan.statuses[0]!.status;
    expect(cond(s, 'ServerParked')?.reason).toBe('ParkRequested');
    expect(cond(s, 'Ready')).toMatchObject({ status: 'False', reason: 'Parking' });
  });

  it('is Ready once parked', () => {
    const m = maint('m', { status: running() });
    const parked = server(
      's1',
      { taints: [{ key: MAINTENANCE_TAINT_KEY, value: 'uid-m', effect: 'NoBind' }] },
      { [PARKED_ANNOTATION]: 'true', [PARKED_BY_ANNOTATION]: 'uid-m' },
      { state: 'Parked' },
    );
    const plan = decideServer(input({ maintenances: [m], server: parked }));
    expect(plan.park).toBeUndefined();
    expect(plan.taint).toBeUndefined();
    expect(cond(plan.statuses[0]?.status, 'Ready')).toMatchObject({ status: 'True', reason: 'ServerReady' });
  });

  it('leaves a server somebody else parked as it is', () => {
    const m = maint('m', { status: running() });
    const parked = server('s1', {}, { [PARKED_ANNOTATION]: 'true' }, { state: 'Parked' });
    const plan = decideServer(input({ maintenances: [m], server: parked }));
    expect(plan.park).toBeUndefined();
    expect(cond(plan.statuses[0]?.status, 'ServerParked')?.reason).toBe('AlreadyParked');
    // ... and after it: nothing to unpark.
    expect(planPark(parked, undefined, 'annotation').patch).toBeUndefined();
  });

  it('with --park-mode off neither parks nor waits', () => {
    const m = maint('m', { status: running() });
    const plan = decideServer(
      input({ maintenances: [m], options: { parkMode: 'off', taintKey: MAINTENANCE_TAINT_KEY } }),
    );
    expect(plan.park).toBeUndefined();
    expect(cond(plan.statuses[0]?.status, 'Ready')?.status).toBe('True');
  });

  it('creates the ServerBoot once parked and is Ready when it runs', () => {
    const spec = { boot: { image: 'https://img/iso', method: 'VirtualMedia' as const } };
    const m = maint('m', { spec, status: running() });
    const parked = server('s1', {}, { [PARKED_ANNOTATION]: 'true', [PARKED_BY_ANNOTATION]: 'uid-m' });
    const first = decideServer(input({ maintenances: [m], server: parked }));
    expect(first.createBoots.map((b) => b.spec.image)).toEqual(['https://img/iso']);
    expect(cond(first.statuses[0]?.status, 'Ready')?.reason).toBe('Booting');
    const boot = { ...first.createBoots[0]!, status: { phase: 'Running' } } as ServerBoot;
    const second = decideServer(
      input({ maintenances: [m], server: parked, boots: new Map([['uid-m', boot]]) }),
    );
    expect(second.createBoots).toEqual([]);
    expect(cond(second.statuses[0]?.status, 'Ready')).toMatchObject({ status: 'True', reason: 'Booted' });
  });

  it('mirrors its budget grants into status.grant', () => {
    const m = maint('m', { status: running() });
    const grants = new Map<string, GrantHolding[]>([
      ['uid-m', [{ ref: { kind: 'ServerDisruptionBudget', name: 'fleet' }, grantedAt: iso(-31) }]],
    ]);
    const plan = decideServer(input({ maintenances: [m], grants }));
    expect(plan.statuses[0]?.status.grant).toEqual({
      grantedAt: iso(-31),
      budgets: [{ kind: 'ServerDisruptionBudget', name: 'fleet' }],
    });
  });
});

describe('timeouts end in Failed with a condition', () => {
  it('fails a maintenance held longer than its maxDuration and starts undoing', () => {
    const m = maint('m', { spec: { maxDuration: '60s' }, status: running(61) });
    const parked = server(
      's1',
      { taints: [{ key: MAINTENANCE_TAINT_KEY, value: 'uid-m', effect: 'NoBind' }] },
      { [PARKED_ANNOTATION]: 'true', [PARKED_BY_ANNOTATION]: 'uid-m' },
    );
    const grants = new Map<string, GrantHolding[]>([
      ['uid-m', [{ ref: { kind: 'ServerDisruptionBudget', name: 'fleet' }, grantedAt: iso(-61) }]],
    ]);
    const plan = decideServer(input({ maintenances: [m], server: parked, grants }));
    const failed = plan.statuses[0]!.status;
    expect(failed.state).toBe('Failed');
    expect(cond(failed, 'Failed')?.reason).toBe('MaxDurationExceeded');
    expect(plan.events.map((e) => e.reason)).toContain('MaxDurationExceeded');
    // Undo in order: first the unpark (the taint stays until metal-operator has answered) ...
    expect(plan.park).toEqual({ [OPERATION_ANNOTATION]: 'unpark' });
    expect(plan.taint).toBeUndefined();
    expect(plan.releaseGrants).toEqual([]);
  });

  it('schedules a look at the maxDuration deadline', () => {
    const m = maint('m', { status: running(30) });
    expect(
      decideServer(
        input({ maintenances: [m], options: { parkMode: 'off', taintKey: MAINTENANCE_TAINT_KEY } }),
      ).requeueAfterMs,
    ).toBe(570_000);
  });

  it('fails a park that metal-operator never confirms', () => {
    const m = maint('m', {
      status: running(120, {
        conditions: [
          {
            type: 'ServerParked',
            status: 'False',
            reason: 'ParkRequested',
            message: '',
            lastTransitionTime: iso(-61),
          },
        ],
      }),
    });
    const plan = decideServer(
      input({
        maintenances: [m],
        server: server('s1', {}, { [OPERATION_ANNOTATION]: 'park', [PARKED_BY_ANNOTATION]: 'uid-m' }),
      }),
    );
    expect(cond(plan.statuses[0]?.status, 'Failed')?.reason).toBe('ParkTimeout');
  });

  it('fails a maintenance nobody approves within timeouts.approval', () => {
    const m = maint('m', { status: { state: 'Announced', announcedAt: iso(-3601) } });
    const plan = decideServer(input({ maintenances: [m] }));
    expect(cond(plan.statuses[0]?.status, 'Failed')?.reason).toBe('ApprovalTimeout');
  });

  it('fails an InMaintenance maintenance whose server was deleted', () => {
    const m = maint('m', { status: running() });
    const plan = decideServer(input({ maintenances: [m], server: undefined, serverGone: true }));
    expect(cond(plan.statuses[0]?.status, 'Failed')?.reason).toBe('ServerDeleted');
  });

  it('keeps the server parked and tainted after a boot that could not be restored', () => {
    const m = maint('m', { spec: { boot: { image: 'x', method: 'VirtualMedia' } }, status: running() });
    const boot = {
      metadata: { name: 'm-boot', namespace: 'ops' },
      spec: { serverRef: { name: 's1' }, method: 'VirtualMedia', image: 'x' },
      status: { phase: 'Failed', notRestored: ['BootOverride'] },
    } as unknown as ServerBoot;
    const held = server(
      's1',
      { taints: [{ key: MAINTENANCE_TAINT_KEY, value: 'uid-m', effect: 'NoBind' }] },
      { [PARKED_ANNOTATION]: 'true', [PARKED_BY_ANNOTATION]: 'uid-m' },
    );
    const failing = decideServer(
      input({ maintenances: [m], server: held, boots: new Map([['uid-m', boot]]) }),
    );
    expect(cond(failing.statuses[0]?.status, 'Failed')?.reason).toBe('BootNotRestored');
    expect(failing.park).toBeUndefined();
    expect(failing.taint).toBeUndefined();
    expect(failing.deleteBoots).toEqual([]);
  });
});

describe('deletion undoes taint, park, boot and grant, in that order', () => {
  const deleting = (
    status: ServerMaintenance['status'],
    extra: Partial<ServerMaintenance['metadata']> = {},
  ) => maint('d', { status, meta: { deletionTimestamp: iso(-1), ...extra } });
  const grants = new Map<string, GrantHolding[]>([
    ['uid-d', [{ ref: { kind: 'ServerDisruptionBudget', name: 'fleet' }, grantedAt: iso(-100) }]],
  ]);

  it('deletes the ServerBoot and waits until it is gone before unparking', () => {
    const d = deleting(running());
    const boot = {
      metadata: { name: 'd-boot', namespace: 'ops', uid: 'b1' },
      spec: { serverRef: { name: 's1' } },
    } as ServerBoot;
    const held = server(
      's1',
      { taints: [{ key: MAINTENANCE_TAINT_KEY, value: 'uid-d', effect: 'NoBind' }] },
      { [PARKED_ANNOTATION]: 'true', [PARKED_BY_ANNOTATION]: 'uid-d' },
    );
    const plan = decideServer(
      input({ maintenances: [d], server: held, grants, boots: new Map([['uid-d', boot]]) }),
    );
    expect(plan.deleteBoots).toEqual([boot]);
    expect(plan.park).toBeUndefined();
    expect(plan.removeFinalizer).toEqual([]);
    expect(plan.requeueAfterMs).toBe(29_000);
  });

  it('then unparks and waits for metal-operator', () => {
    const d = deleting(running());
    const held = server(
      's1',
      { taints: [{ key: MAINTENANCE_TAINT_KEY, value: 'uid-d', effect: 'NoBind' }] },
      { [PARKED_ANNOTATION]: 'true', [PARKED_BY_ANNOTATION]: 'uid-d' },
    );
    const plan = decideServer(input({ maintenances: [d], server: held, grants }));
    expect(plan.park).toEqual({ [OPERATION_ANNOTATION]: 'unpark' });
    expect(plan.taint).toBeUndefined();
    expect(plan.releaseGrants).toEqual([]);
    expect(plan.removeFinalizer).toEqual([]);
  });

  it('then hands the taint on, removes the finalizer and releases the grant', () => {
    const d = deleting(running());
    const next = maint('next', { status: approved() });
    const back = server(
      's1',
      {
        taints: [
          { key: MAINTENANCE_TAINT_KEY, value: 'uid-d', effect: 'NoBind' },
          { key: 'admin/cordon', effect: 'NoBind' },
        ],
        unclaimable: true,
      },
      { [PARKED_BY_ANNOTATION]: 'uid-d' },
    );
    const plan = decideServer(input({ maintenances: [d, next], server: back, grants }));
    expect(plan.park).toEqual({ [PARKED_BY_ANNOTATION]: null });
    expect(plan.taint).toEqual({ value: 'uid-next' });
    expect(plan.releaseGrants).toEqual([{ m: d, refs: [{ kind: 'ServerDisruptionBudget', name: 'fleet' }] }]);
    // Removing the finalizer deletes it: no Completed status first, nobody would read it.
    expect(plan.completions).toEqual([]);
    expect(plan.statuses.find((w) => w.m === d)).toBeUndefined();
    expect(plan.removeFinalizer).toEqual([d]);
    expect(plan.transitions).toContainEqual(expect.objectContaining({ m: d, to: 'Completed' }));
    // The next one waits for the delete event: the webhook's cache may still see the old holder.
    expect(plan.attempt).toBeUndefined();
  });

  it('says Completed first when other finalizers keep the object after ours', () => {
    const d = deleting(running(), { finalizers: [MAINTENANCE_FINALIZER, 'example.com/audit'] });
    const back = server('s1', { taints: [{ key: MAINTENANCE_TAINT_KEY, value: 'uid-d', effect: 'NoBind' }] });
    const plan = decideServer(input({ maintenances: [d], server: back, grants }));
    expect(plan.completions.find((w) => w.m === d)?.status.state).toBe('Completed');
    expect(plan.removeFinalizer).toEqual([d]);
  });

  it('releases a grant of a maintenance deleted before it started, and lets the next one go', () => {
    const d = deleting(approved());
    const next = maint('next', { status: approved() });
    const plan = decideServer(input({ maintenances: [d, next], grants }));
    expect(plan.releaseGrants.map((r) => r.m)).toEqual([d]);
    expect(plan.removeFinalizer).toEqual([d]);
    expect(plan.attempt?.m).toBe(next);
  });

  it("removes metal-maintenance-operator's finalizer from an adopted object too", () => {
    const d = deleting({ state: 'Pending' }, { finalizers: [LEGACY_MMO_FINALIZER] });
    expect(decideServer(input({ maintenances: [d] })).removeFinalizer).toEqual([d]);
  });

  it("never removes somebody else's finalizer-only object", () => {
    const d = deleting({ state: 'Pending' }, { finalizers: ['example.com/other'] });
    expect(decideServer(input({ maintenances: [d] })).removeFinalizer).toEqual([]);
  });

  it('gives up waiting for an unpark after timeouts.park, leaving the request in place', () => {
    const d = maint('d', { status: running(), meta: { deletionTimestamp: iso(-61) } });
    const stuck = server(
      's1',
      { taints: [{ key: MAINTENANCE_TAINT_KEY, value: 'uid-d', effect: 'NoBind' }] },
      { [PARKED_ANNOTATION]: 'true', [PARKED_BY_ANNOTATION]: 'uid-d', [OPERATION_ANNOTATION]: 'unpark' },
    );
    const plan = decideServer(input({ maintenances: [d], server: stuck, grants }));
    expect(plan.events.map((e) => e.reason)).toContain('UnparkTimeout');
    expect(plan.taint).toEqual({ value: undefined });
    expect(plan.removeFinalizer).toEqual([d]);
  });
});

describe('the projection onto the server', () => {
  it('writes nothing for a server that never had maintenance', () => {
    expect(decideServer(input()).projection).toBeUndefined();
  });

  it('keeps since while the state stays', () => {
    const m = maint('m', { status: { state: 'Announced', announcedAt: iso(-5) } });
    const s = server('s1', {}, undefined, {
      state: 'Reserved',
      maintenance: { state: 'Announced', since: iso(-5), pending: 1, reason: 'Other' },
    });
    const plan = decideServer(
      input({ maintenances: [{ ...m, spec: { ...m.spec, reason: 'Other' } }], server: s }),
    );
    expect(plan.projection).toBeUndefined();
  });
});
