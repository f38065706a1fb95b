// `kubectl metal status`'s firmware rows: failed first with their reason, the phase of running
// ones, and the Set counters under each kind's own field names.
import { describe, expect, it } from '@jest/globals';
import { firmwareRows, firmwareSetRows, type FirmwareObjects } from './firmware-status.js';

const cond = (type: string, status: string, reason: string) => ({
  type,
  status,
  reason,
  message: '',
  lastTransitionTime: '2026-12-01T00:00:00Z',
});

const objects: FirmwareObjects = {
  items: [
    {
      kind: 'BIOSVersion',
      obj: {
        metadata: { name: 'a', creationTimestamp: '2026-12-01T00:00:00Z' },
        spec: { version: '2.0', serverRef: { name: 'srv-1' } },
        status: { state: 'InProgress', conditions: [cond('Progressing', 'True', 'Flashing')] },
      },
    },
    {
      kind: 'BMCVersion',
      obj: {
        metadata: { name: 'b', creationTimestamp: '2026-12-01T00:00:00Z' },
        spec: { version: '6.0', bmcRef: { name: 'bmc-1' } },
        status: { state: 'Failed', conditions: [cond('Failed', 'True', 'PhaseTimeout')] },
      },
    },
  ],
  sets: [
    {
      kind: 'BMCVersionSet',
      obj: {
        metadata: { name: 'rack1' },
        status: { fullyLabeledBMCs: 4, availableBMCVersion: 4, completedBMCVersion: 3, failedBMCVersion: 1 },
      },
    },
  ],
};

describe('kubectl metal status: firmware', () => {
  it('lists failed objects first with their reason, running ones with their phase', () => {
    const rows = firmwareRows(objects, Date.parse('2026-12-01T01:00:00Z'));
    expect(rows).toEqual([
      ['BMCVersion', 'b', 'bmc/bmc-1', '6.0', 'Failed', 'PhaseTimeout', '60m'],
      ['BIOSVersion', 'a', 'server/srv-1', '2.0', 'InProgress', 'Flashing', '60m'],
    ]);
  });

  it("reads each Set's counters under its kind's field names", () => {
    expect(firmwareSetRows(objects)).toEqual([['BMCVersionSet', 'rack1', '4', '4', '0', '0', '3', '1']]);
  });
});
