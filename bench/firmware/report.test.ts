import type { MaintenanceRecord } from '../../e2e/demo/watch.js';
import { benchPolicy, holdSummary, partialGangs, slotAccount } from './report.js';

describe('partialGangs', () => {
  test('counts gangs with some but not all members admitted, and the slots they hold', () => {
    const m = (owner: string, inMaintenance: boolean, bmcScoped = true) => ({
      owner,
      inMaintenance,
      bmcScoped,
    });
    const r = partialGangs([
      m('a', true),
      m('a', false),
      m('a', true), // 2 of 3: partial
      m('b', true),
      m('b', true), // complete: flashing, not waiting
      m('c', false),
      m('c', false), // none admitted: holds nothing
      m('d', true, false), // a BIOS maintenance: no gang
    ]);
    expect(r).toEqual({ gangs: 1, slotsHeld: 2 });
  });
});

describe('holdSummary', () => {
  test('hold beyond the flash and the idle share of K x makespan', () => {
    const rec = (created: number, inAt: number, gone: number): MaintenanceRecord => ({
      key: `k${created}`,
      server: 's',
      createdAt: created,
      states: [],
      waitedFor: new Set(),
      inMaintenanceAt: inAt,
      deletedAt: gone,
    });
    // Two slots for 10 s: one held 6 s (flash 5 s), one 4 s... of 20 slot-seconds, 10 idle.
    const s = holdSummary([rec(0, 0, 6000), rec(0, 1000, 5000)], 5000, 2, 10_000);
    expect(s.json).toMatchObject({ maintenances: 2, hold_mean_s: 5, idle_slot_share: 0.5 });
    expect(s.json.beyond_flash_max_s).toBe(1);
  });
});

describe('benchPolicy', () => {
  test('is a valid policy whose task timeout outlasts the flash', () => {
    const p = benchPolicy(30_000, { admission: '60s', attempts: 10 }) as {
      firmware: { defaultMaxAttempts: number; timeouts: { task: string; admission: string } };
    };
    expect(p.firmware).toMatchObject({
      defaultMaxAttempts: 10,
      timeouts: { task: '210s', admission: '60s' },
    });
    expect(() => benchPolicy(1000, { admission: 'soon', attempts: 1 })).toThrow(/bench policy/);
  });
});

describe('slotAccount', () => {
  const rec = (name: string, server: string, inAt?: number, gone?: number): MaintenanceRecord => ({
    key: `ns/${name}`,
    server,
    createdAt: 0,
    states: [],
    waitedFor: new Set(),
    ...(inAt !== undefined ? { inMaintenanceAt: inAt } : {}),
    ...(gone !== undefined ? { deletedAt: gone } : {}),
  });
  test('BIOS work, a gang that waited for its last server, a gang released, the rest idle', () => {
    const a = slotAccount(
      [
        rec('biosv-set-s1-abc-0', 's1', 0, 6_000), // 6 s held, 1 s beyond a 5 s flash
        rec('bmcv-set-b1-s2-def-0', 's2', 0, 9_000), // in at 0, gang complete at 2 s
        rec('bmcv-set-b1-s3-def-0', 's3', 2_000, 9_000),
        rec('bmcv-set-b2-s4-ghi-0', 's4', 1_000, 4_000), // its sibling never came in: released
        rec('bmcv-set-b2-s5-ghi-0', 's5'),
      ],
      5_000,
      3,
      10_000,
    );
    expect(a).toEqual({
      working_s: 6 + 7 + 7,
      beyond_flash_s: 1 + 2 + 2,
      gang_wait_s: 2,
      gang_released_s: 3,
      idle_s: 30 - 20 - 2 - 3,
    });
  });
});
