// approve / defer / cordon edits, the diff, and the status tables.
import { describe, expect, it } from '@jest/globals';
import type { Announcement, ServerClaim } from '../api/metal/v1alpha1/serverclaim.js';
import type { Server } from '../api/metal/v1alpha1/server.js';
import type { ServerMaintenance } from '../api/maintenance/v1alpha1/servermaintenance.js';
import { isMetalError } from '../lib/errors.js';
import {
  CliErrors,
  findAnnouncement,
  parseUntil,
  selectToApprove,
  withApprovals,
  withDeferral,
  withUnclaimable,
} from './claims.js';
import { age, lineDiff, renderDiff, painter } from './output.js';
import { budgetRows, fleetSummary, maintenanceRows, summaryLine, waitingReason } from './status.js';

const now = new Date('2026-09-01T12:00:00Z');

function announcement(uid: string, name: string, deadline?: string): Announcement {
  return {
    maintenanceUID: uid,
    maintenanceName: name,
    maintenanceNamespace: 'ops',
    reason: 'FirmwareUpdate',
    class: 'Planned',
    announcedAt: '2026-09-01T00:00:00Z',
    state: 'Announced',
    ...(deadline ? { deadline } : {}),
  };
}

const claim: ServerClaim = {
  metadata: { name: 'c1', namespace: 'tenant-a' },
  spec: { power: 'On', image: 'img', serverRef: { name: 's1' } },
  status: {
    maintenance: {
      announcements: [announcement('u1', 'bios', '2026-09-02T12:00:00Z'), announcement('u2', 'bmc')],
    },
  },
};

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return isMetalError(e) ? e.code : 'not a MetalError';
  }
  return undefined;
}

describe('approve', () => {
  it('finds announcements by name, namespace/name or uid, and names the announced ones when it cannot', () => {
    expect(findAnnouncement(claim, 'bios').maintenanceUID).toBe('u1');
    expect(findAnnouncement(claim, 'ops/bmc').maintenanceUID).toBe('u2');
    expect(findAnnouncement(claim, 'u2').maintenanceName).toBe('bmc');
    expect(() => findAnnouncement(claim, 'nope')).toThrow(/announced: ops\/bios, ops\/bmc/);
    expect(code(() => findAnnouncement(claim, 'nope'))).toBe(CliErrors.NOT_ANNOUNCED);
  });

  it('approves each named maintenance by uid, once', () => {
    const next = withApprovals(claim, selectToApprove(claim, ['bios'], false))!;
    expect(next.spec.maintenance?.approvals).toEqual([{ maintenanceUID: 'u1', maintenanceName: 'bios' }]);
    expect(withApprovals(next, selectToApprove(next, ['bios'], false))).toBeUndefined();
  });

  it('--all approves what is not yet approved, and says when nothing is left', () => {
    const one = withApprovals(claim, selectToApprove(claim, ['u1'], false))!;
    expect(selectToApprove(one, [], true).map((a) => a.maintenanceUID)).toEqual(['u2']);
    const both = withApprovals(one, selectToApprove(one, [], true))!;
    expect(code(() => selectToApprove(both, [], true))).toBe(CliErrors.NOTHING_TO_APPROVE);
    expect(code(() => selectToApprove(claim, [], false))).toBe(CliErrors.USAGE);
    expect(code(() => selectToApprove(claim, ['bios'], true))).toBe(CliErrors.USAGE);
  });

  it('lifts the owner deferral of what it approves', () => {
    const deferred = withDeferral(
      claim,
      announcement('u1', 'bios', '2026-09-02T12:00:00Z'),
      new Date('2026-09-01T18:00:00Z'),
      now,
    );
    const next = withApprovals(deferred, selectToApprove(deferred, ['bios'], false))!;
    expect(next.spec.maintenance?.deferrals).toBeUndefined();
  });
});

describe('defer', () => {
  it('takes an RFC 3339 time or a duration from now', () => {
    expect(parseUntil('2h', now).toISOString()).toBe('2026-09-01T14:00:00.000Z');
    expect(parseUntil('2026-09-01T20:00:00Z', now).toISOString()).toBe('2026-09-01T20:00:00.000Z');
    expect(code(() => parseUntil('tomorrow', now))).toBe(CliErrors.BAD_TIME);
  });

  it('defers within the deadline, replacing an earlier deferral of the same maintenance', () => {
    const a = announcement('u1', 'bios', '2026-09-02T12:00:00Z');
    const once = withDeferral(claim, a, new Date('2026-09-01T18:00:00Z'), now, 'batch job');
    const twice = withDeferral(once, a, new Date('2026-09-01T20:00:00Z'), now);
    expect(twice.spec.maintenance?.deferrals).toEqual([
      { maintenanceUID: 'u1', until: '2026-09-01T20:00:00Z' },
    ]);
  });

  it('refuses a time past the deadline or in the past', () => {
    const a = announcement('u1', 'bios', '2026-09-02T12:00:00Z');
    expect(code(() => withDeferral(claim, a, new Date('2026-09-03T00:00:00Z'), now))).toBe(
      CliErrors.DEFER_PAST_DEADLINE,
    );
    expect(code(() => withDeferral(claim, a, new Date('2026-09-01T11:00:00Z'), now))).toBe(
      CliErrors.BAD_TIME,
    );
  });
});

describe('cordon', () => {
  it('sets spec.unclaimable and reports no change when already so', () => {
    const s: Server = { metadata: { name: 's1' }, spec: { systemUUID: 'x' } };
    expect(withUnclaimable(s, true)?.spec.unclaimable).toBe(true);
    expect(withUnclaimable(s, false)).toBeUndefined();
    expect(withUnclaimable({ ...s, spec: { ...s.spec, unclaimable: true } }, true)).toBeUndefined();
  });
});

describe('output', () => {
  it('diffs lines: keeps the common ones, marks removals and additions', () => {
    expect(lineDiff(['a', 'b', 'c'], ['a', 'x', 'c', 'd'])).toEqual([
      { op: ' ', line: 'a' },
      { op: '-', line: 'b' },
      { op: '+', line: 'x' },
      { op: ' ', line: 'c' },
      { op: '+', line: 'd' },
    ]);
  });

  it('shows context around changes and elides the rest', () => {
    const before = Array.from({ length: 20 }, (_, i) => `l${i}`);
    const after = before.map((l) => (l === 'l10' ? 'L10' : l));
    const text = renderDiff(lineDiff(before, after), painter(false), '', 1);
    expect(text).toEqual(['  …', '  l9', '- l10', '+ L10', '  l11', '  …']);
  });

  it('prints ages like kubectl', () => {
    const t = Date.parse('2026-09-01T12:00:00Z');
    expect(age('2026-09-01T11:59:30Z', t)).toBe('30s');
    expect(age('2026-09-01T11:00:00Z', t)).toBe('60m');
    expect(age('2026-08-30T12:00:00Z', t)).toBe('2d');
    expect(age(undefined, t)).toBe('-');
  });
});

describe('status', () => {
  const servers: Server[] = [
    {
      metadata: { name: 's1' },
      spec: { systemUUID: '1', serverClaimRef: { namespace: 'tenant-a', name: 'c1' } },
      status: { state: 'Parked', maintenance: { state: 'InMaintenance' } },
    },
    {
      metadata: { name: 's2' },
      spec: { systemUUID: '2', unclaimable: true },
      status: { state: 'Available' },
    },
  ];
  const m = (name: string, server: string, state: string, conditions: object[] = []): ServerMaintenance =>
    ({
      metadata: { name, namespace: 'ops' },
      spec: { serverRef: { name: server }, reason: 'FirmwareUpdate' },
      status: { state, conditions },
    }) as ServerMaintenance;
  const blocked = {
    type: 'Admitted',
    status: 'False',
    reason: 'BudgetExhausted',
    message: '',
    lastTransitionTime: '2026-09-01T00:00:00Z',
  };
  const maintenances = [m('b', 's2', 'Approved', [blocked]), m('a', 's1', 'InMaintenance')];
  const objects = { servers, claims: [claim], maintenances, serverBudgets: [], claimBudgets: [] };

  it('lists maintenances busiest first with claim, approval and why they wait', () => {
    const rows = maintenanceRows(objects);
    expect(rows.map((r) => [r[1], r[3], r[6], r[8]])).toEqual([
      ['a', 'InMaintenance', 'tenant-a/c1', '-'],
      ['b', 'Approved', '-', 'BudgetExhausted'],
    ]);
    expect(waitingReason(maintenances[0]!)).toBe('BudgetExhausted');
  });

  it('summarises the fleet', () => {
    const s = fleetSummary(objects);
    expect(s).toMatchObject({
      servers: 2,
      claimed: 1,
      cordoned: 1,
      parked: 1,
      inMaintenance: 1,
      claimsAwaitingApproval: 1,
    });
    expect(summaryLine(s)).toBe(
      '2 servers: 1 claimed, 1 cordoned, 1 parked, 1 in maintenance. 2 maintenance(s): 1 InMaintenance, 1 Approved. 1 claim(s) awaiting approval.',
    );
  });

  it('shows budgets with their counters and grants', () => {
    const rows = budgetRows({
      ...objects,
      serverBudgets: [
        {
          metadata: { name: 'fleet' },
          spec: { serverSelector: {}, maxUnavailable: '10%', topologyKey: 'rack' },
          status: { expected: 50, unavailable: 2, disruptionsAllowed: 3, grants: [] },
        },
      ],
    });
    expect(rows).toEqual([['ServerDisruptionBudget', 'fleet', '10%', 'rack', '50', '2', '3', '0', 'no']]);
  });
});
