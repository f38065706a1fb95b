import { describe, expect, it } from '@jest/globals';
import type { Announcement } from '../../api/metal/v1alpha1/serverclaim.js';
import { MAINTENANCE_SCHEDULED, planScheduled, scheduledPatch } from './scheduled.js';
import type { Node, NodeCondition } from './workload-types.js';

const NOW = '2026-08-21T22:00:00Z';
const announcement = (name: string, notBefore: string, extra: Partial<Announcement> = {}): Announcement => ({
  maintenanceUID: `u-${name}`,
  maintenanceName: name,
  maintenanceNamespace: 'ops',
  reason: 'FirmwareUpdate',
  class: 'Planned',
  announcedAt: '2026-08-21T21:00:00Z',
  notBefore,
  deadline: '2026-08-22T06:00:00Z',
  state: 'Announced',
  ...extra,
});
const node = (...conditions: NodeCondition[]): Node => ({
  metadata: { name: 'n1' },
  status: { conditions: [{ type: 'Ready', status: 'True' }, ...conditions] },
});

describe('planScheduled', () => {
  it('announces the first maintenance to start, with its class, notBefore and deadline', () => {
    const later = announcement('m-later', '2026-08-22T03:00:00Z', { class: 'Urgent' });
    const first = announcement('m-first', '2026-08-22T01:00:00Z');
    expect(planScheduled(node(), [later, first], NOW)).toEqual({
      kind: 'set',
      condition: {
        type: MAINTENANCE_SCHEDULED,
        status: 'True',
        reason: 'Planned',
        message:
          'ServerMaintenance ops/m-first (FirmwareUpdate) is Announced: not before 2026-08-22T01:00:00Z, deadline 2026-08-22T06:00:00Z (+1 more announced)',
        lastHeartbeatTime: NOW,
        lastTransitionTime: NOW,
      },
    });
  });

  it('writes nothing when the Node already shows it, and keeps the transition time on a change', () => {
    const a = announcement('m1', '2026-08-22T01:00:00Z');
    const set = planScheduled(node(), [a], NOW);
    if (set?.kind !== 'set') throw new Error('expected a condition');
    const shown = { ...set.condition, lastTransitionTime: '2026-08-21T21:30:00Z' };
    expect(planScheduled(node(shown), [a], NOW)).toBeUndefined();
    const approved = planScheduled(node(shown), [{ ...a, state: 'Approved' }], NOW);
    expect(approved).toMatchObject({
      kind: 'set',
      condition: {
        lastTransitionTime: '2026-08-21T21:30:00Z',
        message: expect.stringContaining('is Approved'),
      },
    });
  });

  it('removes it once nothing is announced, and leaves a Node without it alone', () => {
    const shown: NodeCondition = {
      type: MAINTENANCE_SCHEDULED,
      status: 'True',
      reason: 'Planned',
      message: 'x',
    };
    expect(planScheduled(node(shown), [], NOW)).toEqual({ kind: 'remove' });
    expect(planScheduled(node(), [], NOW)).toBeUndefined();
    expect(scheduledPatch({ kind: 'remove' })).toEqual({
      status: { conditions: [{ type: MAINTENANCE_SCHEDULED, $patch: 'delete' }] },
    });
  });
});
