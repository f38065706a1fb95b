// `kubectl metal pipeline status` over the shipped examples: the IEP pipeline and its run.
import { join } from 'node:path';
import type { MaintenancePipeline } from '../api/maintenance/v1alpha1/maintenancepipeline.js';
import type { MaintenancePipelineRun } from '../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import { loadYamlDir } from '../api/testdata/load.js';
import { painter } from './output.js';
import { pipelineStatusLines, stageRows } from './pipeline.js';

const docs = loadYamlDir(join(import.meta.dirname, '..', 'manifests', 'examples')).map((d) => d.object);
const pipeline = docs.find(
  (o) => o.kind === 'MaintenancePipeline' && o.metadata.name === 'ilo6-upgrade-to-v180',
) as unknown as MaintenancePipeline;
const run = docs.find((o) => o.kind === 'MaintenancePipelineRun') as unknown as MaintenancePipelineRun;
const plain = painter(false);

describe('kubectl metal pipeline status', () => {
  it('shows each stage with its scope and aggregate phase, servers counted', () => {
    const rows = stageRows(pipeline, run, plain);
    expect(rows.map((r) => [r[0], r[2], r[3]])).toEqual([
      ['bmc-baseline', 'BMC', 'Completed'],
      ['bmc-fw-v160', 'BMC', 'Completed'],
      ['bmc-fw-v180', 'BMC', 'Completed'],
      ['bmc-post-upgrade', 'BMC', 'Completed'],
      ['bios-pre-upgrade', 'Server', 'InProgress'],
      ['bios-fw-v250', 'Server', 'Pending'],
      ['bios-post-upgrade', 'Server', 'Pending'],
    ]);
    expect(rows[4]![4]).toBe('1 Completed, 1 InProgress, 1 Pending');
    expect(rows[6]![4]).toBe('3 Pending');
  });

  it('recomputes a server stage from its servers: one failed server makes it Failed', () => {
    const failed = structuredClone(run);
    failed.status!.stages![4]!.servers![2]!.phase = 'Failed';
    const row = stageRows(pipeline, failed, plain)[4]!;
    expect(row[3]).toBe('Failed');
    expect(row[4]).toBe('1 Completed, 1 InProgress, 1 Failed (failed: server-c)');
  });

  it('heads with the pipeline, counts runs, and shows what each run holds', () => {
    const text = pipelineStatusLines(pipeline, [run], plain).join('\n');
    expect(text).toContain(
      'MaintenancePipeline ilo6-upgrade-to-v180: 7 stages, taint NoClaim, drift Reconcile, maxConcurrent 3',
    );
    expect(text).toContain('runs: 1 (1 InProgress, 0 Pending, 0 Completed, 0 Failed, 0 Stopping)');
    expect(text).toContain('Progressing=True (StageInProgress)  DriftDetected=False (NoDrift)');
    expect(text).toContain('server-c [Approved, tainted]');
  });

  it("says so when the pipeline has no runs, and ignores other pipelines' runs", () => {
    const other = structuredClone(run);
    other.spec.pipelineRef.name = 'another';
    expect(pipelineStatusLines(pipeline, [other], plain).at(-1)).toBe('no runs yet');
  });
});
