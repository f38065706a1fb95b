// pipeline-controller: executes MaintenancePipelines (maintenance.metal.ironcore.dev): one
// MaintenancePipelineRun per BMC of the selected servers, each holding its servers in one
// ServerMaintenance and the run's taint for its whole duration, stamping the firmware children in
// stage order. See docs/pipeline.md.
//
//   tsx controllers/pipeline/main.ts [--kubeconfig FILE] [--namespace NS] [--workers 2] …
import { runControllerBinary, type CommonFlags } from '../../lib/kube/index.js';
import { PipelineController } from './reconciler.js';

interface PipelineFlags extends CommonFlags {
  workers: number;
}

await runControllerBinary({
  name: 'pipeline-controller',
  description: 'Executes MaintenancePipelines: one run per BMC, one maintenance per server for the whole run',
  flags: (cmd) =>
    cmd.option('--workers <n>', 'pipelines reconciled at once', (v) => Number.parseInt(v, 10), 2),
  setup: (m, common) => {
    const flags = common as PipelineFlags;
    new PipelineController(m, { namespace: flags.namespace, workers: flags.workers });
  },
});
