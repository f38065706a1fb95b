// What the pipeline controller's decisions read and what they ask the reconciler to do. The
// decisions (run.ts, pipeline.ts) are pure over these; the reconciler gathers them from its caches
// and executes the actions in order.
import type { MaintenancePipeline, StageKind } from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import type {
  MaintenancePipelineRun,
  MaintenancePipelineRunStatus,
} from '../../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { BMC } from '../../api/metal/v1alpha1/bmc.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { Taint } from '../../api/schema/common.js';
import type { ChildObject } from './children.js';

export const FIELD_MANAGER_ACTION = 'Pipeline';

/**
 * An ownerReference to one of our cluster-scoped kinds. `controls`: the owner is the dependent's
 * controller and blocks its deletion (the garbage collector removes the dependent after it).
 */
export function ownedBy(
  kind: 'MaintenancePipeline' | 'MaintenancePipelineRun',
  name: string,
  uid: string,
  controls: boolean,
) {
  return {
    apiVersion: 'maintenance.metal.ironcore.dev/v1alpha1',
    kind,
    name,
    uid,
    ...(controls ? { controller: true, blockOwnerDeletion: true } : {}),
  };
}

/** The firmware children of a run, as the run reads them (any of the four kinds). */
export type Child = ChildObject & {
  status?: { state?: string; observedGeneration?: number };
  metadata: ChildObject['metadata'] & { generation?: number };
};

export interface RunInput {
  run: MaintenancePipelineRun;
  /** Undefined once the pipeline is gone: the run stops with the stages its status names. */
  pipeline?: MaintenancePipeline;
  /** A maxConcurrent slot is the run's (runs.ts#admitRuns). */
  admitted: boolean;
  /** The run's children by name (childName). */
  children: ReadonlyMap<string, Child>;
  /** The maintenances named like the run's holds (maintenanceName), by server. */
  maintenances: ReadonlyMap<string, ServerMaintenance>;
  servers: ReadonlyMap<string, Server>;
  bmc?: BMC;
  now: Date;
  /** Namespace of the run's maintenances (the controllers' namespace). */
  namespace: string;
}

export type RunAction =
  | { kind: 'taint'; server: string; taint: Taint }
  | { kind: 'untaint'; server: string }
  | { kind: 'createMaintenance'; maintenance: ServerMaintenance }
  | { kind: 'deleteMaintenance'; namespace: string; name: string; uid?: string }
  | { kind: 'createChild'; child: ChildObject }
  | { kind: 'patchChild'; childKind: StageKind; name: string; spec: Record<string, unknown> }
  | { kind: 'deleteChild'; childKind: StageKind; name: string }
  | { kind: 'removeFinalizer' };

export interface RunEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  note: string;
}

export interface RunDecision {
  status: MaintenancePipelineRunStatus;
  /** In order: taints and takes, child writes, releases, untaints, the finalizer last. */
  actions: RunAction[];
  events: RunEvent[];
  /** Something is in flight or could start: whether the run wants a maxConcurrent slot. */
  progressing: boolean;
  requeueAfterMs?: number;
}
