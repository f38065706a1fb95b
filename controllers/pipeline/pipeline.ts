// The pipeline-level decision, pure over (pipeline, servers, its runs): one run per BMC among the
// selected servers (created with the finalizer through which it stops at a safe point), a run's
// serverRefs follow the selector only while it is not in progress, a run whose BMC left the
// selection is deleted (it stops at a safe point), which runs hold a maxConcurrent slot, and the
// pipeline's status.
import type {
  MaintenancePipeline,
  MaintenancePipelineStatus,
} from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import type { MaintenancePipelineRun } from '../../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { Static } from '@sinclair/typebox';
import { makeCondition } from '../../contract/conditions.js';
import { PIPELINE_BMC_LABEL, PIPELINE_LABEL, PIPELINE_RUN_FINALIZER } from '../../contract/names.js';
import { admitRuns, boundedName, groupByBMC } from '../../contract/pipeline/runs.js';
import { matchesSelector } from '../../contract/selectors.js';
import { ownedBy } from './model.js';

type PipelineStatus = Static<typeof MaintenancePipelineStatus>;

export type PipelineAction =
  | { kind: 'createRun'; run: MaintenancePipelineRun }
  | { kind: 'setServers'; name: string; servers: string[] }
  | { kind: 'deleteRun'; name: string };

export const runName = (pipeline: string, bmc: string) => boundedName(pipeline, bmc);

const inProgress = (r: MaintenancePipelineRun) =>
  r.status?.phase === 'InProgress' || r.status?.phase === 'Stopping';

function runObject(
  pipeline: MaintenancePipeline,
  bmc: string,
  servers: readonly string[],
): MaintenancePipelineRun {
  const name = pipeline.metadata.name ?? '';
  return {
    apiVersion: 'maintenance.metal.ironcore.dev/v1alpha1',
    kind: 'MaintenancePipelineRun',
    metadata: {
      name: runName(name, bmc),
      labels: { [PIPELINE_LABEL]: name, [PIPELINE_BMC_LABEL]: bmc },
      finalizers: [PIPELINE_RUN_FINALIZER],
      ownerReferences: [ownedBy('MaintenancePipeline', name, pipeline.metadata.uid ?? '', true)],
    },
    spec: {
      pipelineRef: { name },
      bmcRef: { name: bmc },
      serverRefs: servers.map((s) => ({ name: s })),
    },
  };
}

/** The runs the pipeline wants (one per BMC) against those that exist. */
export function planRuns(
  pipeline: MaintenancePipeline | undefined,
  servers: readonly Server[],
  runs: readonly MaintenancePipelineRun[],
): { actions: PipelineAction[]; selected: number; noBMC: string[] } {
  const actions: PipelineAction[] = [];
  if (!pipeline || pipeline.metadata.deletionTimestamp) {
    for (const r of runs)
      if (!r.metadata.deletionTimestamp) actions.push({ kind: 'deleteRun', name: r.metadata.name ?? '' });
    return { actions, selected: 0, noBMC: [] };
  }
  const selected = servers
    .filter((s) => matchesSelector(pipeline.spec.serverSelector, s.metadata.labels))
    .map((s) => ({
      name: s.metadata.name ?? '',
      ...(s.spec.bmcRef?.name ? { bmc: s.spec.bmcRef.name } : {}),
    }));
  const { groups, noBMC } = groupByBMC(selected);
  const byName = new Map(runs.map((r) => [r.metadata.name ?? '', r]));
  const wanted = new Set<string>();
  for (const g of groups) {
    const name = runName(pipeline.metadata.name ?? '', g.bmc);
    wanted.add(name);
    const run = byName.get(name);
    if (!run) {
      actions.push({ kind: 'createRun', run: runObject(pipeline, g.bmc, g.servers) });
      continue;
    }
    const current = run.spec.serverRefs.map((s) => s.name).sort();
    const same = current.length === g.servers.length && current.every((s, i) => s === g.servers[i]);
    // A run's servers change only between runs: never under a stage in flight.
    if (!same && !inProgress(run) && !run.metadata.deletionTimestamp)
      actions.push({ kind: 'setServers', name, servers: g.servers });
  }
  for (const [name, r] of byName)
    if (!wanted.has(name) && !r.metadata.deletionTimestamp) actions.push({ kind: 'deleteRun', name });
  return { actions, selected: selected.length, noBMC };
}

/** Runs holding a maxConcurrent slot: those in progress keep it, waiting ones with work fill the rest. */
export function admitted(
  pipeline: MaintenancePipeline | undefined,
  runs: readonly { run: MaintenancePipelineRun; wantsWork: boolean }[],
): Set<string> {
  return admitRuns(
    runs.map(({ run, wantsWork }) => ({
      name: run.metadata.name ?? '',
      active: inProgress(run),
      wantsWork,
      createdAt: run.metadata.creationTimestamp ?? '',
    })),
    pipeline?.spec.maxConcurrent ?? 1,
  );
}

export function pipelineStatus(
  pipeline: MaintenancePipeline,
  selected: number,
  noBMC: readonly string[],
  runs: readonly MaintenancePipelineRun[],
  now: Date,
): PipelineStatus {
  const count = (phase: string) => runs.filter((r) => (r.status?.phase ?? 'Pending') === phase).length;
  const ready = noBMC.length === 0;
  return {
    observedGeneration: pipeline.metadata.generation,
    selectedServers: selected,
    runs: runs.length,
    pendingRuns: count('Pending'),
    activeRuns: count('InProgress') + count('Stopping'),
    completedRuns: count('Completed'),
    failedRuns: count('Failed'),
    conditions: [
      makeCondition(
        pipeline.status?.conditions,
        {
          type: 'ServersPlanned',
          status: ready ? 'True' : 'False',
          reason: ready ? 'EveryServerHasABMC' : 'ServersWithoutBMC',
          message: ready
            ? `${selected} server(s) in ${runs.length} run(s)`
            : `selected servers without spec.bmcRef cannot be planned: ${noBMC.slice(0, 20).join(', ')}`,
        },
        now,
        pipeline.metadata.generation,
      ),
    ],
  };
}
