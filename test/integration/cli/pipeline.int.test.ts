// `kubectl metal pipeline status` against the real API server: the shipped example pipeline and its
// run (status written through the status subresource, as the controller will), then a pipeline that
// does not exist.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import type { MaintenancePipeline } from '../../../api/maintenance/v1alpha1/maintenancepipeline.js';
import type { MaintenancePipelineRun } from '../../../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import { loadYamlDir } from '../../../api/testdata/load.js';
import { adminClient, uniqueName } from '../../../e2e/harness/env.js';
import { REPO_ROOT } from '../../../e2e/harness/control-plane.js';
import { adminKubeconfig } from '../../../e2e/harness/processes.js';
import { api, type Api } from '../../../cli/kube.js';
import { main } from '../../../cli/main.js';

let a: Api;
const name = uniqueName('mpl');
const runName = `${name}-bmc-abc123`;

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['--kubeconfig', adminKubeconfig(), '--no-color', ...args], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

beforeAll(async () => {
  a = api(await adminClient());
  const docs = loadYamlDir(join(REPO_ROOT, 'manifests', 'examples')).map((d) => d.object);
  const pipeline = structuredClone(
    docs.find((o) => o.kind === 'MaintenancePipeline' && o.metadata.name === 'ilo6-upgrade-to-v180'),
  ) as unknown as MaintenancePipeline;
  const run = structuredClone(
    docs.find((o) => o.kind === 'MaintenancePipelineRun'),
  ) as unknown as MaintenancePipelineRun;
  delete pipeline.status;
  pipeline.metadata = { name };
  const status = run.status!;
  delete run.status;
  run.metadata = { name: runName };
  run.spec.pipelineRef = { name };
  await a.pipelines.create(pipeline);
  const created = await a.pipelineRuns.create(run);
  await a.pipelineRuns.replaceStatus({ ...created, status });
});

afterAll(async () => {
  await a.pipelineRuns.delete(runName).catch(() => undefined);
  await a.pipelines.delete(name).catch(() => undefined);
});

describe('kubectl metal pipeline status', () => {
  it('shows the runs, stages and servers with the aggregate phases', async () => {
    const r = await cli('pipeline', 'status', name);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain(`MaintenancePipeline ${name}: 7 stages, taint NoClaim, drift Reconcile`);
    expect(r.out).toContain(`run ${runName}  BMC bmc-abc123  InProgress  stages 4/7 completed`);
    expect(r.out).toMatch(
      /bios-pre-upgrade\s+BIOSSettings\s+Server\s+InProgress\s+1 Completed, 1 InProgress, 1 Pending/,
    );
    expect(r.out).toContain('server-c [Approved, tainted]');
  });

  it('names a pipeline that does not exist and exits 1', async () => {
    const r = await cli('pipeline', 'status', `${name}-missing`);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`"${name}-missing" not found`);
  });
});
