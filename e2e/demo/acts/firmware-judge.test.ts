// Act 6's verdict: a run that went as the act says passes, and each way it can go wrong is named.
import { describe, expect, it } from '@jest/globals';
import type { Server } from '../../../api/metal/v1alpha1/server.js';
import {
  judgeFirmware,
  rolloutTargets,
  setLine,
  type FirmwareFacts,
  type FirmwareObject,
} from './firmware-judge.js';

const RACK = 'metadata.metal.ironcore.dev/rack';
const HOLD = 'hold';
const server = (name: string, rack: string): Server => ({
  metadata: { name, labels: { [RACK]: rack } },
  spec: { systemUUID: name },
});
const child = (
  target: string,
  state: string,
  extra: Partial<FirmwareObject['metadata']> = {},
): FirmwareObject => ({
  metadata: { name: `set-${target}`, ...extra },
  spec: { serverRef: { name: target } },
  status: {
    state,
    ...(state === 'Failed'
      ? { conditions: [{ type: 'Failed', status: 'True', reason: 'UpgradeTaskFailed', message: 'x' }] }
      : {}),
  },
});

function facts(over: Partial<FirmwareFacts> = {}): FirmwareFacts {
  const targets = ['a', 'b', 'c'];
  return {
    set: 'set',
    version: '2.0',
    targets,
    failing: 'a',
    children: [child('a', 'Failed'), child('b', 'Completed'), child('c', 'Completed')],
    shortCircuit: {
      type: 'ShortCircuited',
      status: 'True',
      reason: 'TooManyFailures',
      message: '1 of 3 Failed',
    },
    heldAtShortCircuit: 1,
    cleared: { type: 'ShortCircuited', status: 'False', reason: 'WithinLimit', message: '' },
    ledger: new Map([
      ['a', { version: '1.0', flashes: 0 }],
      ['b', { version: '2.0', flashes: 1 }],
      ['c', { version: '2.0', flashes: 1 }],
    ]),
    ...over,
  };
}

describe('rolloutTargets', () => {
  it('takes the first servers of every rack by name', () => {
    const servers = [
      server('r2-2', 'rack-2'),
      server('r1-2', 'rack-1'),
      server('r2-1', 'rack-2'),
      server('r1-1', 'rack-1'),
      server('r1-3', 'rack-1'),
    ];
    expect(rolloutTargets(servers, 2)).toEqual(['r1-1', 'r1-2', 'r2-1', 'r2-2']);
  });
});

describe('judgeFirmware', () => {
  it('passes the run the act describes and names the failed server and the condition', () => {
    const v = judgeFirmware(facts());
    expect(v.problems).toEqual([]);
    expect(v.rows[0]![1]).toBe(
      'BIOSVersionSet set: 2 of 3 servers at 2.0 (one flash each); a Failed (UpgradeTaskFailed), still at 1.0, not retried',
    );
    expect(v.rows[1]![1]).toContain('ShortCircuited=True (TooManyFailures): 1 of 3 Failed; 1 held');
  });

  it('names each way the act can go wrong', () => {
    expect(judgeFirmware(facts({ shortCircuit: undefined })).problems).toEqual([
      'firmware: the Set did not short-circuit (undefined)',
    ]);
    expect(judgeFirmware(facts({ heldAtShortCircuit: 0 })).problems).toEqual([
      'firmware: the short-circuit held no child back',
    ]);
    expect(judgeFirmware(facts({ cleared: undefined })).problems).toEqual([
      'firmware: raising maxFailures did not lift the short-circuit',
    ]);
    const twice = facts();
    (twice.ledger as Map<string, { version: string; flashes: number }>).set('c', {
      version: '2.0',
      flashes: 2,
    });
    expect(judgeFirmware(twice).problems).toEqual(['firmware: not at 2.0 with one flash: c']);
    const noFailure = facts({
      children: [child('a', 'Completed'), child('b', 'Completed'), child('c', 'Completed')],
    });
    (noFailure.ledger as Map<string, { version: string; flashes: number }>).set('a', {
      version: '2.0',
      flashes: 1,
    });
    expect(judgeFirmware(noFailure).problems).toEqual([
      "firmware: a's child is Completed, not Failed",
      'firmware: a reached 2.0 although its flash failed',
    ]);
  });
});

describe('setLine', () => {
  it('counts done, in flight, failed and held children and shows the short-circuit', () => {
    const line = setLine(
      'set',
      { metadata: {}, spec: {}, status: { conditions: [facts().shortCircuit!] } },
      [
        child('a', 'Failed'),
        child('b', 'InProgress'),
        child('c', 'Pending', { annotations: { [HOLD]: 'ShortCircuited' } }),
        child('d', 'Completed'),
      ],
      5,
      HOLD,
      (d, t) => `${d}/${t}`,
    );
    expect(line).toBe('set 1/5  in flight 1  failed 1 (a)  held 1  ShortCircuited (TooManyFailures)');
  });
});
