// The firmware children a run stamps, as objects: the stage's template plus the target (the BMC,
// or one server), the hydrated version, and the references to the run's maintenances (so the
// firmware controller uses them instead of requesting its own). Pure.
import type { PipelineStage, StageKind } from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import type { KubeObject } from '../../api/schema/meta.js';
import { PIPELINE_BMC_LABEL, PIPELINE_LABEL, PIPELINE_RUN_LABEL } from '../../contract/names.js';
import { childName } from '../../contract/pipeline/status.js';
import { scopeOf } from '../../contract/pipeline/stages.js';
import { ownedBy } from './model.js';

export type ChildObject = KubeObject & { spec: Record<string, unknown> };

export const CHILD_API_VERSION: Record<StageKind, string> = {
  BIOSVersion: 'system.metal.ironcore.dev/v1alpha1',
  BIOSSettings: 'system.metal.ironcore.dev/v1alpha1',
  BMCVersion: 'baseboard.metal.ironcore.dev/v1alpha1',
  BMCSettings: 'baseboard.metal.ironcore.dev/v1alpha1',
};

export interface RunIdentity {
  name: string;
  uid: string;
  pipeline: string;
  bmc: string;
}

export type MaintenanceRef = { namespace: string; name: string };

/** The maintenance references in the shape of the kind (upstream has three). */
export function refsSpec(kind: StageKind, refs: readonly MaintenanceRef[]): Record<string, unknown> {
  switch (kind) {
    case 'BIOSVersion':
    case 'BIOSSettings':
      return { serverMaintenanceRef: refs[0] ?? null };
    case 'BMCVersion':
      return { serverMaintenanceRefs: refs };
    case 'BMCSettings':
      return { serverMaintenanceRefs: refs.map((r) => ({ serverMaintenanceRef: r })) };
  }
}

export function childObject(
  run: RunIdentity,
  stage: PipelineStage,
  server: string | undefined,
  version: string | undefined,
  refs: readonly MaintenanceRef[],
): ChildObject {
  const target =
    scopeOf(stage.kind) === 'BMC' ? { bmcRef: { name: run.bmc } } : { serverRef: { name: server } };
  return {
    apiVersion: CHILD_API_VERSION[stage.kind],
    kind: stage.kind,
    metadata: {
      name: childName(run.name, stage.name, server),
      labels: {
        [PIPELINE_LABEL]: run.pipeline,
        [PIPELINE_RUN_LABEL]: run.name,
        [PIPELINE_BMC_LABEL]: run.bmc,
      },
      ownerReferences: [ownedBy('MaintenancePipelineRun', run.name, run.uid, true)],
    },
    spec: {
      ...structuredClone(stage.template),
      ...(version !== undefined ? { version } : {}),
      ...target,
      ...refsSpec(stage.kind, refs),
    },
  };
}
