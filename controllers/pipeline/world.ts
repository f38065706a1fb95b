// What the planner sees of a run (contract/pipeline/plan.ts#RunWorld), from the objects the
// reconciler caches: each cell's child as a ChildView, the versions the hardware reports, and the
// servers the run holds (its maintenance InMaintenance and its taint on). Pure.
import type { PipelineStage } from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import type { RunStageStatus } from '../../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import type { ChildView, RunWorld } from '../../contract/pipeline/plan.js';
import { cellKey, childPhase, scopeOf, type ChildDriftPolicy } from '../../contract/pipeline/stages.js';
import { childName } from '../../contract/pipeline/status.js';
import { hasRunTaint } from './holds.js';
import type { Child, RunInput } from './model.js';

/** The stages a run's status names (kinds, no templates): enough to stop or to compare an edit. */
export function stagesOfStatus(status: readonly RunStageStatus[] | undefined): PipelineStage[] {
  return (status ?? []).map((s) => ({ name: s.name, kind: s.kind, template: {} }));
}

export function childView(child: Child): ChildView {
  const policy = child.spec.driftPolicy;
  const driftPolicy: ChildDriftPolicy | undefined =
    policy === 'Observe' || policy === 'Suspend' ? policy : undefined;
  const observed = child.status?.observedGeneration;
  const version = child.spec.version;
  return {
    phase: childPhase(child.status?.state),
    // A fresh child (no status yet) or one whose spec moved speaks about an older spec: in progress.
    current: observed !== undefined && observed >= (child.metadata.generation ?? 0),
    ...(driftPolicy ? { driftPolicy } : {}),
    ...(typeof version === 'string' ? { version } : {}),
  };
}

export function childWorld(
  input: RunInput,
  stages: readonly PipelineStage[],
  servers: readonly string[],
  /** Children this very pass deletes (an adopted edit): already gone for the plan. */
  deleting: ReadonlySet<string> = new Set(),
): RunWorld {
  const run = input.run.metadata.name ?? '';
  const children = new Map<string, ChildView>();
  for (const stage of stages) {
    const on = scopeOf(stage.kind) === 'BMC' ? [undefined] : servers;
    for (const server of on) {
      const name = childName(run, stage.name, server);
      const child = input.children.get(name);
      // A child going away (an adopted edit deleted it) speaks for a template no longer executed.
      if (child && child.kind === stage.kind && !child.metadata.deletionTimestamp && !deleting.has(name))
        children.set(cellKey(stage.name, server), childView(child));
    }
  }
  const held = new Set(
    servers.filter(
      (s) =>
        input.maintenances.get(s)?.status?.state === 'InMaintenance' &&
        !input.maintenances.get(s)?.metadata.deletionTimestamp &&
        hasRunTaint(input.servers.get(s), run),
    ),
  );
  const serverVersions: Record<string, string | undefined> = {};
  for (const s of servers) serverVersions[s] = input.servers.get(s)?.status?.biosVersion;
  const bmcVersion = input.bmc?.status?.firmwareVersion;
  return { servers, children, held, serverVersions, ...(bmcVersion ? { bmcVersion } : {}) };
}
