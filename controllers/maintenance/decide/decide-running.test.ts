// The maintenance controller's decision for one server, without I/O: while InMaintenance, and timeouts.
import { describe, expect, it } from '@jest/globals';
import type { ServerBoot } from '../../../api/maintenance/v1alpha1/serverboot.js';
import {
  MAINTENANCE_TAINT_KEY,
  OPERATION_ANNOTATION,
  PARKED_ANNOTATION,
  PARKED_BY_ANNOTATION,
} from '../../../contract/names.js';
import { decideServer } from './server.js';
import { planPark } from './park.js';
import { type GrantHolding } from './model.js';
import { iso, server, sortedKeys, maint, approved, running, input, cond } from './testing/fixtures.js';

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
