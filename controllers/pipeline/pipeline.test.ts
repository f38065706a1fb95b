// planRuns and admitted: one run per BMC of the selected servers, serverRefs that follow the
// selector only between runs, runs of a gone pipeline deleted (they stop at a safe point), and
// maxConcurrent.
import { describe, expect, it } from '@jest/globals';
import type { MaintenancePipelineRun } from '../../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import { PIPELINE_RUN_FINALIZER } from '../../contract/names.js';
import { admitted, planRuns } from './pipeline.js';
import { pipelineOf, serverOf } from './testing/fake-world.js';

const STAGES = [{ name: 'tune', kind: 'BIOSSettings' as const, template: { version: '1' } }];
const labelled = (name: string, bmc: string, role = 'compute') => {
  const s = serverOf(name, bmc);
  s.metadata.labels = { role };
  return s;
};
const servers = [
  labelled('a1', 'bmc-a'),
  labelled('a2', 'bmc-a'),
  labelled('b1', 'bmc-b'),
  labelled('x', 'bmc-x', 'storage'),
];
const pipeline = pipelineOf(STAGES, {
  serverSelector: { matchLabels: { role: 'compute' } },
  maxConcurrent: 1,
});

function run(
  name: string,
  serverRefs: string[],
  phase?: string,
  createdAt = '2026-12-03T10:00:00Z',
): MaintenancePipelineRun {
  return {
    apiVersion: 'maintenance.metal.ironcore.dev/v1alpha1',
    kind: 'MaintenancePipelineRun',
    metadata: { name, creationTimestamp: createdAt },
    spec: {
      pipelineRef: { name: 'fleet' },
      bmcRef: { name: name.slice('fleet-'.length) },
      serverRefs: serverRefs.map((n) => ({ name: n })),
    },
    ...(phase ? { status: { phase: phase as 'Pending' } } : {}),
  };
}

describe('planRuns', () => {
  it('creates one run per BMC of the selected servers, owned by the pipeline, with the finalizer', () => {
    const { actions, selected } = planRuns(pipeline, servers, []);
    expect(selected).toBe(3);
    const created = actions.flatMap((a) => (a.kind === 'createRun' ? [a.run] : []));
    expect(created.map((r) => [r.metadata.name, r.spec.serverRefs.map((s) => s.name)])).toEqual([
      ['fleet-bmc-a', ['a1', 'a2']],
      ['fleet-bmc-b', ['b1']],
    ]);
    expect(created[0]!.metadata.finalizers).toEqual([PIPELINE_RUN_FINALIZER]);
    expect(created[0]!.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'MaintenancePipeline',
      uid: 'uid-p',
    });
  });

  it('changes serverRefs only while the run is not in progress, and deletes a run whose BMC left', () => {
    const runs = [
      run('fleet-bmc-a', ['a1'], 'InProgress'),
      run('fleet-bmc-b', [], 'Completed'),
      run('fleet-bmc-z', ['z1'], 'Completed'),
    ];
    const { actions } = planRuns(pipeline, servers, runs);
    expect(actions).toEqual([
      { kind: 'setServers', name: 'fleet-bmc-b', servers: ['b1'] },
      { kind: 'deleteRun', name: 'fleet-bmc-z' },
    ]);
  });

  it('deletes every run of a pipeline being deleted', () => {
    const gone = {
      ...pipeline,
      metadata: { ...pipeline.metadata, deletionTimestamp: '2026-12-03T11:00:00Z' },
    };
    expect(planRuns(gone, servers, [run('fleet-bmc-a', ['a1'])]).actions).toEqual([
      { kind: 'deleteRun', name: 'fleet-bmc-a' },
    ]);
    expect(planRuns(undefined, servers, [run('fleet-bmc-a', ['a1'])]).actions).toEqual([
      { kind: 'deleteRun', name: 'fleet-bmc-a' },
    ]);
  });
});

describe('admitted', () => {
  it('keeps the run in progress, fills the free slots by age', () => {
    const runs = [
      { run: run('fleet-bmc-b', ['b1'], 'Pending', '2026-12-03T10:00:00Z'), wantsWork: true },
      { run: run('fleet-bmc-a', ['a1'], 'InProgress', '2026-12-03T10:01:00Z'), wantsWork: true },
      { run: run('fleet-bmc-c', ['c1'], 'Pending', '2026-12-03T09:00:00Z'), wantsWork: true },
    ];
    expect(admitted(pipeline, runs)).toEqual(new Set(['fleet-bmc-a']));
    const two = { ...pipeline, spec: { ...pipeline.spec, maxConcurrent: 2 } };
    expect(admitted(two, runs)).toEqual(new Set(['fleet-bmc-a', 'fleet-bmc-c']));
  });
});
