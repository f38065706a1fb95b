// Drift (IEP-0016): a settled child in Observe that finds its hardware changed goes Completed ->
// Pending without asking for maintenance. Under the pipeline's Reconcile the run resets the cells
// from the earliest dirty stage on, only in the lanes that drifted: a BMC cell resets every later
// cell of the run, a server cell only that server's later server cells. Reset cells keep their
// children; the planner re-activates each in place when its gate opens (no child is deleted or
// re-created). Children in flight among the reset cells are halted (Observe) first. Under Observe
// the run only reports DriftDetected.
import type { DriftPolicy, PipelineStage } from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import type { CellRecord, PlanAction, RunWorld } from './plan.js';
import { cellKey, scopeOf } from './stages.js';

export interface DriftResult {
  /** Records after the reset (the input's when nothing drifted or the policy only observes). */
  recorded: Map<string, CellRecord>;
  /** Cells whose child reports drift. */
  drifted: string[];
  /** Halts of in-flight children among the reset cells. */
  actions: PlanAction[];
}

interface Lane {
  index: number;
  stage: PipelineStage;
  server?: string;
}

/** A completed cell whose watching child now finds its hardware changed. */
function isDirty(recorded: ReadonlyMap<string, CellRecord>, world: RunWorld, key: string): boolean {
  const child = world.children.get(key);
  return (
    recorded.get(key)?.phase === 'Completed' &&
    child?.driftPolicy === 'Observe' &&
    child.current &&
    child.phase !== 'Completed'
  );
}

/** The first index to reset per lane: the BMC lane's, and each server's. */
function resetPoints(dirty: readonly Lane[]) {
  const bmcFrom = Math.min(...dirty.filter((d) => d.server === undefined).map((d) => d.index));
  const serverFrom = new Map<string, number>();
  for (const d of dirty) {
    if (d.server !== undefined)
      serverFrom.set(d.server, Math.min(serverFrom.get(d.server) ?? Infinity, d.index));
  }
  return (l: Lane) =>
    l.index >= bmcFrom || (l.server !== undefined && l.index >= (serverFrom.get(l.server) ?? Infinity));
}

export function applyDrift(
  stages: readonly PipelineStage[],
  recorded: ReadonlyMap<string, CellRecord>,
  world: RunWorld,
  policy: DriftPolicy,
): DriftResult {
  const out = new Map(recorded);
  const lanes = stages.flatMap((stage, index): Lane[] =>
    scopeOf(stage.kind) === 'BMC'
      ? [{ index, stage }]
      : world.servers.map((server) => ({ index, stage, server })),
  );
  const dirty = lanes.filter(({ stage, server }) => isDirty(recorded, world, cellKey(stage.name, server)));
  const drifted = dirty.map(({ stage, server }) => cellKey(stage.name, server));
  if (policy === 'Observe' || dirty.length === 0) return { recorded: out, drifted, actions: [] };

  // The BMC lane's reset point resets everything after it; a server's only that server's cells.
  const reset = resetPoints(dirty);
  const actions: PlanAction[] = [];
  for (const lane of lanes) {
    if (!reset(lane)) continue;
    const { stage, server } = lane;
    const key = cellKey(stage.name, server);
    const child = world.children.get(key);
    if (child && child.driftPolicy === undefined && out.get(key)?.phase === 'InProgress') {
      actions.push({
        type: 'settle',
        stage: stage.name,
        ...(server ? { server } : {}),
        driftPolicy: 'Observe',
      });
    }
    out.set(key, { phase: 'Pending', child: child !== undefined });
  }
  return { recorded: out, drifted, actions };
}

/**
 * DriftDetected: true from the first drifted child until the run completed again (Reconcile) or no
 * child reports drift any more (Observe: nothing repairs it, the hardware may be put back by hand).
 */
export function driftDetected(
  wasTrue: boolean,
  driftedNow: number,
  policy: DriftPolicy,
  allCompleted: boolean,
): boolean {
  if (driftedNow > 0) return true;
  return policy === 'Reconcile' && wasTrue && !allCompleted;
}
