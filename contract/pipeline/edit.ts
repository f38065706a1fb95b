// Editing a pipeline's stages while runs progress. The rule: a run finishes the cells in flight
// (nothing new starts meanwhile: the planner runs frozen), then re-plans against the new list. Stages
// before the first one that changed (name, kind or template, at the same position) keep their
// progress; from there on every cell runs again, in order, as after drift. A later stage whose
// template did not change keeps its child (re-activated in place); a changed or removed stage's
// child is deleted, and a changed stage gets a fresh child when its gate opens. So an edit never
// interrupts a flash, and nothing after the edit is left believing an older template.
import type { PipelineStage } from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import type { CellRecord } from './plan.js';
import { cellKey, scopeOf, stageHash } from './stages.js';

/** The stages as a run executes them: name and hash, in order (its status.stages). */
export interface ExecutedStage {
  name: string;
  hash: string;
}

export type EditPlan =
  | { adopt: false }
  | { adopt: true; recorded: Map<string, CellRecord>; deleteChildren: string[]; firstChanged: number };

export function planEdit(
  executed: readonly ExecutedStage[],
  next: readonly PipelineStage[],
  recorded: ReadonlyMap<string, CellRecord>,
  servers: readonly string[],
  inFlight: boolean,
): EditPlan {
  if (inFlight) return { adopt: false };
  const hashes = next.map(stageHash);
  let firstChanged = next.findIndex(
    (s, i) => executed[i]?.name !== s.name || executed[i]?.hash !== hashes[i],
  );
  if (firstChanged === -1) firstChanged = next.length;
  const keysOf = (name: string, kind: PipelineStage['kind']) =>
    scopeOf(kind) === 'BMC' ? [cellKey(name)] : servers.map((s) => cellKey(name, s));
  const before = new Map(executed.map((e) => [e.name, e.hash]));
  const out = new Map<string, CellRecord>();
  const kept = new Set<string>();
  next.forEach((stage, i) => {
    const unchanged = before.get(stage.name) === hashes[i];
    for (const key of keysOf(stage.name, stage.kind)) {
      const rec = recorded.get(key);
      if (i < firstChanged && rec) out.set(key, rec);
      else out.set(key, { phase: 'Pending', child: unchanged && (rec?.child ?? false) });
      if (unchanged) kept.add(key);
    }
  });
  const deleteChildren = [...recorded.entries()]
    .filter(([key, rec]) => rec.child && !kept.has(key))
    .map(([key]) => key)
    .sort();
  return { adopt: true, recorded: out, deleteChildren, firstChanged };
}
