// The pipeline suite's world: the firmware suite (real webhook; maintenance, approval, budget and
// firmware controllers as processes; the BMC simulator) plus the pipeline controller as its own
// process under its own ServiceAccount (manifests/pipeline-controller/rbac.yaml), in replicas (one
// leads, the others stand by) so the crash test can kill -9 the leader.
import type { MaintenancePipeline } from '../../../api/maintenance/v1alpha1/maintenancepipeline.js';
import type { MaintenancePipelineRun } from '../../../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import { PIPELINE_LABEL, PIPELINE_TAINT_KEY, SYSTEM_NAMESPACE } from '../../../contract/names.js';
import type { SimServer } from '../../../e2e/sim/bmc/server.js';
import { spawnShipped } from '../../../e2e/harness/deployed.js';
import { waitFor } from '../../../e2e/harness/env.js';
import { kubeconfigForBinary, type RunningBinary } from '../../../e2e/harness/processes.js';
import { startReplicas } from '../../../e2e/harness/replicas.js';
import type { SimTiming } from '../../../e2e/sim/bmc/model.js';
import type { ResourceClient } from '../../../lib/kube/client.js';
import {
  MaintenancePipelineResource,
  MaintenancePipelineRunResource,
  ServerMaintenanceResource,
} from '../../../lib/kube/kinds.js';
import { startFirmwareSuite, type Firmware, type FirmwareSuite } from '../firmware/harness.js';
import { SHORT_LEASE_ARGS } from '../../../e2e/harness/dist.js';

export const CASE = 'pipeline.test.metal.ironcore.dev/case';

export interface PipelineSuite {
  fw: FirmwareSuite;
  /** The pipeline-controller replica that leads now. */
  readonly controller: RunningBinary;
  /** kill -9 of the leading pipeline-controller once a standby is synced; a standby takes over. */
  killLeader(): Promise<void>;
  pipelines: ResourceClient<MaintenancePipeline>;
  runs: ResourceClient<MaintenancePipelineRun>;
  /** Servers of a new case behind the given simulated BMCs, labelled `CASE=<caseName>`. */
  servers(
    caseName: string,
    bmcIndexes: number[],
    opts?: { claims?: 'consumer' | 'none' },
  ): Promise<{ names: string[]; bmcs: string[]; sim: SimServer[] }>;
  /** Waits until no maintenance of the pipeline's runs is left and no server of `names` has the run taint. */
  released(pipeline: string, names: readonly string[], timeoutMs?: number): Promise<void>;
  runsOf(pipeline: string): Promise<MaintenancePipelineRun[]>;
  /** The maintenances the runs of a pipeline hold now. */
  maintenancesOf(pipeline: string): Promise<ServerMaintenance[]>;
  /** The firmware children the runs of a pipeline stamped, of every kind. */
  childrenOf(pipeline: string): Promise<Firmware[]>;
  /** Servers among `names` that carry the run taint. */
  tainted(names: readonly string[]): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startPipelineSuite(opts: {
  bmcs: number;
  systems?: (i: number) => number;
  /** pipeline-controller replicas (default 1). */
  replicas?: number;
  /** firmware-controller replicas (the firmware suite's default when unset). */
  firmwareReplicas?: number;
  timing?: Partial<SimTiming>;
}): Promise<PipelineSuite> {
  const fw = await startFirmwareSuite({
    bmcs: opts.bmcs,
    ...(opts.systems ? { systems: opts.systems } : {}),
    ...(opts.firmwareReplicas ? { replicas: opts.firmwareReplicas } : {}),
    ...(opts.timing ? { timing: opts.timing } : {}),
  });
  const admin = fw.lc.admin;
  const { kubeconfig } = await kubeconfigForBinary(admin, 'pipeline-controller');
  const spawn = () =>
    spawnShipped('pipeline-controller', [
      `--kubeconfig=${kubeconfig}`,
      '--ops-host=127.0.0.1',
      '--ops-port=0',
      ...SHORT_LEASE_ARGS,
    ]);
  const replicas = await startReplicas('pipeline-controller', spawn, opts.replicas ?? 1);
  const maintenances = admin.resource<ServerMaintenance>(ServerMaintenanceResource);
  const runs = admin.resource<MaintenancePipelineRun>(MaintenancePipelineRunResource);
  const suite: PipelineSuite = {
    fw,
    get controller() {
      return replicas.leader;
    },
    killLeader: () => replicas.killLeader(),
    pipelines: admin.resource<MaintenancePipeline>(MaintenancePipelineResource),
    runs,
    async servers(caseName, bmcIndexes, opts) {
      const { names, bmcs, sim } = await fw.servers(caseName, bmcIndexes, opts);
      await Promise.all(
        names.map((n) => fw.lc.servers.patch(n, { metadata: { labels: { [CASE]: caseName } } })),
      );
      return { names, bmcs, sim };
    },
    async runsOf(pipeline) {
      return (await runs.list({ labelSelector: `${PIPELINE_LABEL}=${pipeline}` })).items;
    },
    async maintenancesOf(pipeline) {
      const list = await maintenances.list({
        namespace: SYSTEM_NAMESPACE,
        labelSelector: `${PIPELINE_LABEL}=${pipeline}`,
      });
      return list.items;
    },
    async childrenOf(pipeline) {
      const kinds = [fw.bmcVersions, fw.bmcSettings, fw.biosVersions, fw.biosSettings];
      const lists = await Promise.all(
        kinds.map((k) => k.list({ labelSelector: `${PIPELINE_LABEL}=${pipeline}` })),
      );
      return lists.flatMap((l, i) =>
        l.items.map((c) => ({
          ...c,
          kind: c.kind ?? ['BMCVersion', 'BMCSettings', 'BIOSVersion', 'BIOSSettings'][i],
        })),
      );
    },
    async tainted(names) {
      const out: string[] = [];
      for (const n of names) {
        const s = await fw.lc.servers.get(n);
        if ((s.spec.taints ?? []).some((t) => t.key === PIPELINE_TAINT_KEY)) out.push(n);
      }
      return out;
    },
    async released(pipeline, names, timeoutMs = 30_000) {
      await waitFor(
        'maintenances and taints gone',
        async () =>
          (await suite.maintenancesOf(pipeline)).length === 0 && (await suite.tainted(names)).length === 0,
        { timeoutMs },
      );
    },
    async stop() {
      await replicas.stop();
      await fw.stop();
    },
  };
  return suite;
}
