// The controller's side of gangs: a member is tried only when its whole gang is there and ready, the
// hold-back counts the whole gang's need, and a release wakes a gang only when all of it fits.
import { describe, expect, it } from '@jest/globals';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { gangNeed, gangReadiness } from './gang.js';
import { fullBudget } from './hold-back.js';
import { BudgetWaiters } from './waiters.js';

function member(i: number, size: number, status: ServerMaintenance['status'] = { state: 'Approved' }) {
  return {
    metadata: {
      name: `g-${i}`,
      namespace: 'ops',
      uid: `u${i}`,
      creationTimestamp: `2026-01-01T00:00:0${i}Z`,
    },
    spec: { serverRef: { name: `srv-${i}` }, gang: { name: 'bmc-a', size } },
    status: { queuePosition: 0, ...status },
  } as ServerMaintenance;
}

const single = (i: number) =>
  ({
    metadata: {
      name: `m-${i}`,
      namespace: 'ops',
      uid: `s${i}`,
      creationTimestamp: `2026-01-01T00:00:0${i}Z`,
    },
    spec: { serverRef: { name: `solo-${i}` } },
  }) as ServerMaintenance;

describe('gangReadiness', () => {
  it('is ready when every member is in the cache and approved at the head of its queue', () => {
    const g = [member(1, 3), member(2, 3), member(3, 3)];
    const r = gangReadiness(g[0]!, g);
    expect(r.ready && r.others.map((o) => o.metadata.uid)).toEqual(['u2', 'u3']);
  });

  it('waits while a member is missing from the cache', () => {
    const g = [member(1, 3), member(2, 3)];
    expect(gangReadiness(g[0]!, g)).toEqual({
      ready: false,
      message: expect.stringContaining('2 of 3 members'),
    });
  });

  it('waits for a member not approved yet, or behind another maintenance on its server', () => {
    const announced = [member(1, 2), member(2, 2, { state: 'Announced' })];
    expect(gangReadiness(announced[0]!, announced)).toMatchObject({ ready: false });
    const queued = [member(1, 2), member(2, 2, { state: 'Approved', queuePosition: 1 })];
    const r = gangReadiness(queued[0]!, queued);
    expect(r).toMatchObject({ ready: false, message: expect.stringContaining('ops/g-2') });
  });

  it('counts running and finished members as ready; they need no grant', () => {
    const g = [member(1, 3), member(2, 3, { state: 'InMaintenance' }), member(3, 3, { state: 'Completed' })];
    const r = gangReadiness(g[0]!, g);
    expect(r.ready).toBe(true);
    expect(r.ready && gangNeed(r.others)).toEqual([]);
  });

  it('is always ready without a gang', () => {
    expect(gangReadiness(single(1), [])).toEqual({ ready: true, others: [] });
  });
});

describe('fullBudget for a gang', () => {
  const fleet = (held: string[]) => ({
    metadata: { name: 'fleet' },
    spec: { serverSelector: {}, maxUnavailable: 3 },
    status: {
      domains: [{ name: '', expected: 10, unavailable: 0, granted: 0 }],
      grants: held.map((maintenanceUID) => ({ maintenanceUID })),
    },
  });

  it('holds a gang back when the budget has room for some of its members but not all', () => {
    const others = [
      { labels: {}, uid: 'u2' },
      { labels: {}, uid: 'u3' },
    ];
    expect(fullBudget([fleet(['x'])], {}, 'u1', others)).toMatchObject({
      name: 'fleet',
      inUse: 1,
      allowed: 3,
    });
    expect(fullBudget([fleet([])], {}, 'u1', others)).toBeUndefined();
    // The same member alone would pass: one slot is left.
    expect(fullBudget([fleet(['x', 'y'])], {}, 'u1')).toBeUndefined();
  });

  it('counts only the members that hold no grant yet', () => {
    const others = [{ labels: {}, uid: 'u2' }];
    // u1 and u2 hold theirs (the gang's write went through): nothing more is needed.
    expect(fullBudget([fleet(['x', 'u1', 'u2'])], {}, 'u1', others)).toBeUndefined();
  });

  it('counts each domain for the members in it', () => {
    const racks = {
      metadata: { name: 'racks' },
      spec: { serverSelector: {}, topologyKey: 'rack', maxUnavailable: 1 },
      status: {
        domains: [
          { name: 'r1', expected: 4, unavailable: 0, granted: 0 },
          { name: 'r2', expected: 4, unavailable: 0, granted: 0 },
        ],
        grants: [],
      },
    };
    const spread = [{ labels: { rack: 'r2' }, uid: 'u2' }];
    expect(fullBudget([racks], { rack: 'r1' }, 'u1', spread)).toBeUndefined();
    const packed = [{ labels: { rack: 'r1' }, uid: 'u2' }];
    expect(fullBudget([racks], { rack: 'r1' }, 'u1', packed)).toMatchObject({ name: 'racks', domain: 'r1' });
  });
});

describe('BudgetWaiters with gangs', () => {
  it('wakes a gang only when the room fits all of it, and one member for the gang', () => {
    const w = new BudgetWaiters();
    w.add('srv-1', member(1, 2), 'fleet');
    w.add('srv-2', member(2, 2), 'fleet');
    w.add('solo-3', single(3), 'fleet');
    // One slot: the gang (older in queue order) does not fit, the single waiter takes it.
    expect(w.take(1, { budget: 'fleet' }, 1)).toEqual(['solo-3']);
    // A second release of one slot makes room for two: the gang is woken, once.
    expect(w.take(1, { budget: 'fleet' }, 2)).toEqual(['srv-1']);
    expect(w.size).toBe(0);
  });

  it('lets a gang that fits go first in queue order', () => {
    const w = new BudgetWaiters();
    w.add('srv-1', member(1, 2), 'fleet');
    w.add('solo-3', single(3), 'fleet');
    expect(w.take(2, { budget: 'fleet' }, 2)).toEqual(['srv-1']);
    expect(w.take(1, { budget: 'fleet' }, 1)).toEqual(['solo-3']);
  });
});
