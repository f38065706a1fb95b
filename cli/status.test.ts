// status: the real wait reason, and per-domain budget rows.
import { describe, expect, it } from '@jest/globals';
import type { ServerMaintenance } from '../api/maintenance/v1alpha1/servermaintenance.js';
import { budgetRows, summaryLine, waitingReason, type FleetObjects } from './status.js';

const T = '2026-09-01T00:00:00Z';
const cond = (type: string, status: 'True' | 'False', reason: string) => ({
  type,
  status,
  reason,
  message: '',
  lastTransitionTime: T,
});
const m = (conditions: object[], state = 'Approved'): ServerMaintenance =>
  ({
    metadata: { name: 'm', namespace: 'ops' },
    spec: { serverRef: { name: 's' } },
    status: { state, conditions },
  }) as ServerMaintenance;
const none: FleetObjects = { servers: [], claims: [], maintenances: [], serverBudgets: [], claimBudgets: [] };

describe('waitingReason', () => {
  it("names NotBefore, not an unclaimed server's Unclaimed announcement", () => {
    expect(
      waitingReason(m([cond('Announced', 'False', 'Unclaimed'), cond('Admitted', 'False', 'NotBefore')])),
    ).toBe('NotBefore');
  });
  it('prefers the Admitted reason over the owner side, whatever the order of conditions', () => {
    expect(
      waitingReason(m([cond('Approved', 'False', 'Deferred'), cond('Admitted', 'False', 'BudgetExhausted')])),
    ).toBe('BudgetExhausted');
  });
  it('says nothing for an unclaimed server that only lacks an announcement', () => {
    expect(waitingReason(m([cond('Announced', 'False', 'Unclaimed')]))).toBe('');
  });
  it('shows the failure reason of a failed maintenance', () => {
    expect(waitingReason(m([cond('Failed', 'True', 'ParkTimeout')], 'Failed'))).toBe('ParkTimeout');
  });
});

describe('budgetRows', () => {
  it('shows a per-rack budget per domain, never summed over racks', () => {
    const rows = budgetRows({
      ...none,
      serverBudgets: [
        {
          metadata: { name: 'per-rack' },
          spec: { serverSelector: {}, maxUnavailable: 2, topologyKey: 'rack' },
          status: {
            expected: 20,
            unavailable: 3,
            disruptionsAllowed: 4,
            domains: [
              { name: 'r2', expected: 10, unavailable: 2, granted: 1, allowed: 0 },
              { name: 'r1', expected: 10, unavailable: 1, granted: 1, allowed: 1 },
            ],
            grants: [
              {
                maintenanceUID: 'u1',
                maintenance: { namespace: 'ops', name: 'a' },
                server: 's1',
                domain: 'r1',
                grantedAt: T,
              },
              {
                maintenanceUID: 'u2',
                maintenance: { namespace: 'ops', name: 'b' },
                server: 's2',
                domain: 'r2',
                grantedAt: T,
              },
            ],
          },
        },
      ],
    });
    expect(rows).toEqual([
      ['ServerDisruptionBudget', 'per-rack', '2', 'rack=r1', '10', '1', '1', '1', 'no'],
      ['ServerDisruptionBudget', 'per-rack', '2', 'rack=r2', '10', '2', '0', '1', 'no'],
    ]);
  });
});

describe('summaryLine', () => {
  it('says the servers are hidden instead of counting zero of them', () => {
    const s = {
      servers: 0,
      claimed: 0,
      cordoned: 0,
      parked: 0,
      inMaintenance: 0,
      maintenancesByState: {},
      claimsAwaitingApproval: 0,
    };
    expect(summaryLine(s, { serversHidden: true })).toMatch(
      /^Servers hidden \(not allowed to list them\)\. 0 maintenance/,
    );
  });
});
