// The maintenance controller's decision for one server, without I/O: the queue, a new maintenance, starting.
import { describe, expect, it } from '@jest/globals';
import { PARKED_ANNOTATION, PARKED_BY_ANNOTATION } from '../../../contract/names.js';
import { compareQueue } from '../../../contract/lifecycle.js';
import { decideServer } from './server.js';
import { deniedStatus } from './queue.js';
import { FIRST_STATUS_GRACE_MS } from './model.js';
import { T0, at, iso, server, maint, approved, running, input, cond } from './testing/fixtures.js';

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
