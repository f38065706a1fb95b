// The maintenance controller's decision for one server, without I/O: deletion, and the projection onto the server.
import { describe, expect, it } from '@jest/globals';
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerBoot } from '../../../api/maintenance/v1alpha1/serverboot.js';
import {
  LEGACY_MMO_FINALIZER,
  MAINTENANCE_FINALIZER,
  MAINTENANCE_TAINT_KEY,
  OPERATION_ANNOTATION,
  PARKED_ANNOTATION,
  PARKED_BY_ANNOTATION,
} from '../../../contract/names.js';
import { decideServer } from './server.js';
import { type GrantHolding } from './model.js';
import { iso, server, maint, approved, running, input } from './testing/fixtures.js';

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
