// A run's hold on its servers as objects (contract/pipeline/hold.ts decides): one ServerMaintenance
// per server, named after the run and the server so a restarted controller finds the one it made
// instead of making a second; and the run's taint on the Server. Pure.
import type { MaintenancePipelineSpec } from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import type { MaintenancePipelineRun } from '../../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import { PIPELINE_LABEL, PIPELINE_RUN_LABEL, PIPELINE_TAINT_KEY } from '../../contract/names.js';
import { runMaintenanceSpec, runTaint, type HoldPlan, type HoldView } from '../../contract/pipeline/hold.js';
import { boundedName } from '../../contract/pipeline/runs.js';
import { ownedBy, type RunAction } from './model.js';

export const maintenanceName = (run: string, server: string) => boundedName(run, server);

export const hasRunTaint = (server: Server | undefined, run: string) =>
  (server?.spec.taints ?? []).some((t) => t.key === PIPELINE_TAINT_KEY && t.value === run);

/** The maintenance's state as a hold reads it: undefined when it is gone or going. */
function liveState(m: ServerMaintenance | undefined): string | undefined {
  if (!m || m.metadata.deletionTimestamp) return undefined;
  return m.status?.state ?? 'Pending';
}

/**
 * What the run holds per server. Taken: the status names the maintenance, or one of ours exists and
 * is not going (a crash between create and status write must not make a second one).
 */
export function holdViews(
  run: MaintenancePipelineRun,
  servers: readonly string[],
  maintenances: ReadonlyMap<string, ServerMaintenance>,
  serverObjects: ReadonlyMap<string, Server>,
): HoldView[] {
  const recorded = new Map((run.status?.servers ?? []).map((s) => [s.server, s]));
  const name = run.metadata.name ?? '';
  return servers.map((server) => {
    const m = maintenances.get(server);
    const state = liveState(m);
    return {
      server,
      taken: recorded.get(server)?.maintenanceRef !== undefined || state !== undefined,
      ...(state !== undefined ? { state } : {}),
      tainted: hasRunTaint(serverObjects.get(server), name),
    };
  });
}

export function maintenanceObject(
  run: MaintenancePipelineRun,
  spec: MaintenancePipelineSpec,
  server: string,
  namespace: string,
  /** The servers the run takes in this pass: its gang (all of them at the start, the drifted later). */
  taking: number,
): ServerMaintenance {
  const name = run.metadata.name ?? '';
  return {
    apiVersion: 'maintenance.metal.ironcore.dev/v1alpha1',
    kind: 'ServerMaintenance',
    metadata: {
      name: maintenanceName(name, server),
      namespace,
      labels: { [PIPELINE_LABEL]: run.spec.pipelineRef.name, [PIPELINE_RUN_LABEL]: name },
      // A namespaced dependent of the cluster-scoped run: if the run vanished without its finalizer
      // (forced), the garbage collector still ends the hold.
      ownerReferences: [ownedBy('MaintenancePipelineRun', name, run.metadata.uid ?? '', false)],
    },
    // The run is one BMC's: its uid names the gang of the servers it takes together. Its size is
    // this pass's, not the run's: a drift re-run takes only the drifted servers, and a gang sized for
    // all of them would wait for members that are never requested (a pass's maintenances never meet
    // the last pass's: a take waits until the one of the same name is gone).
    spec: runMaintenanceSpec(run.spec.pipelineRef.name, spec, server, {
      name: (run.metadata.uid ?? name).toLowerCase().slice(0, 63),
      size: Math.max(1, taking),
    }),
  };
}

/**
 * The writes of a hold plan: taint before take (the server is marked before anything can act on it),
 * releases before untaints (the taint is the last thing to go). A take whose maintenance of the
 * same name is still going waits for it (`waiting`).
 */
export function holdActions(
  run: MaintenancePipelineRun,
  spec: MaintenancePipelineSpec | undefined,
  plan: HoldPlan,
  maintenances: ReadonlyMap<string, ServerMaintenance>,
  namespace: string,
): { first: RunAction[]; last: RunAction[]; waiting: string[] } {
  const first: RunAction[] = [];
  const last: RunAction[] = [];
  const waiting: string[] = [];
  const name = run.metadata.name ?? '';
  if (spec) {
    for (const server of plan.taint) first.push({ kind: 'taint', server, taint: runTaint(spec, name) });
    for (const server of plan.take) {
      if (maintenances.get(server)) waiting.push(server);
      else
        first.push({
          kind: 'createMaintenance',
          maintenance: maintenanceObject(run, spec, server, namespace, plan.take.length),
        });
    }
  }
  for (const server of plan.release) {
    const m = maintenances.get(server);
    if (m && !m.metadata.deletionTimestamp)
      last.push({
        kind: 'deleteMaintenance',
        namespace: m.metadata.namespace ?? namespace,
        name: m.metadata.name ?? '',
        ...(m.metadata.uid ? { uid: m.metadata.uid } : {}),
      });
  }
  for (const server of plan.untaint) last.push({ kind: 'untaint', server });
  return { first, last, waiting };
}
