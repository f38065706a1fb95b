// Act 7's verdict: the run the act describes passes, and each way it can go wrong is named.
import { describe, expect, it } from '@jest/globals';
import type { MaintenancePipelineRun } from '../../../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import { judgePipeline, runsLine, type PipelineFacts } from './pipeline-judge.js';

function run(name: string, phase: string, failed?: string): MaintenancePipelineRun {
  return {
    metadata: { name },
    spec: {
      pipelineRef: { name: 'p' },
      bmcRef: { name: `bmc-${name}` },
      serverRefs: [{ name: `${name}-1` }],
    },
    status: {
      phase: phase as never,
      stages: [
        {
          name: 'bios-fw',
          kind: 'BIOSVersion',
          phase: (failed ? 'Failed' : 'Completed') as never,
          servers: failed ? [{ server: failed, phase: 'Failed' as never }] : [],
        },
      ],
      conditions: [],
    },
  } as unknown as MaintenancePipelineRun;
}

const done = { bios: '2.2.0', bmc: '6.0.0', biosFlashes: 2, settingsWrites: 1 };

function facts(over: Partial<PipelineFacts> = {}): PipelineFacts {
  return {
    pipeline: 'p',
    runs: [run('a', 'Failed', 'a-1'), run('b', 'Completed')],
    servers: 2,
    bmcs: 2,
    ledger: new Map([
      ['a-1', { bios: '1.0.0', bmc: '6.0.0', biosFlashes: 0, settingsWrites: 0 }],
      ['b-1', done],
    ]),
    drift: {
      server: 'b-1',
      run: 'b',
      seen: true,
      cleared: true,
      writesBefore: 1,
      writesAfter: 2,
      value: 'Enabled',
    },
    ...over,
  };
}

describe('judgePipeline', () => {
  it('passes the run the act describes and names the failed lane and the repaired drift', () => {
    const v = judgePipeline(facts());
    expect(v.problems).toEqual([]);
    expect(v.rows[0]![1]).toBe(
      'p: 5 stages, 2 servers on 2 BMCs; 1 runs Completed, 1 Failed (a-1 failed in bios-fw; the rest of a finished)',
    );
    expect(v.rows[1]![1]).toBe(
      'factory reset of b-1: DriftDetected=True on b, repaired with 1 settings write, Completed again',
    );
  });

  it('names each way the act can go wrong', () => {
    expect(judgePipeline(facts({ runs: [run('a', 'Completed'), run('b', 'Completed')] })).problems).toEqual([
      'pipeline: expected one failed lane in one run, got []',
      'pipeline: lanes not at BIOS 2.2.0/BMC 6.0.0 with two flashes: a-1',
    ]);
    expect(
      judgePipeline(facts({ runs: [run('a', 'Failed', 'a-1'), run('b', 'InProgress')] })).problems,
    ).toEqual(['pipeline: runs neither Completed nor Failed: b']);
    const d = facts().drift;
    expect(judgePipeline(facts({ drift: { ...d, seen: false } })).problems).toEqual([
      'pipeline: run b never showed DriftDetected=True after the factory reset',
    ]);
    expect(
      judgePipeline(facts({ drift: { ...d, cleared: false, writesAfter: 1, value: 'Disabled' } })).problems,
    ).toEqual([
      'pipeline: run b did not complete again with the drift repaired',
      "pipeline: b-1's SriovGlobalEnable is Disabled after 0 writes (want Enabled after 1)",
    ]);
    expect(judgePipeline(facts({ bmcs: 3 })).problems).toEqual([
      'pipeline: 2 runs, expected one per BMC (3)',
    ]);
  });
});

describe('runsLine', () => {
  it('counts the runs by phase and names those with drift', () => {
    const drifting = run('b', 'InProgress');
    drifting.status!.conditions = [
      {
        type: 'DriftDetected',
        status: 'True',
        reason: 'Drift',
        message: '',
        lastTransitionTime: '',
      } as never,
    ];
    expect(runsLine('p', [run('a', 'Completed'), drifting])).toBe(
      'p: 2 runs  1 Completed  1 InProgress  0 Pending  0 Failed  DriftDetected: b',
    );
  });
});
