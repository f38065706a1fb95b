// Runs of a pipeline: one per BMC among the selected servers, how many may be in progress at once
// (maxConcurrent), which servers a run holds, and the run's phase.
import { createHash } from 'node:crypto';
import type { PipelineStage } from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import type { RunPhase } from '../../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import type { RunPlan } from './plan.js';
import { cellKey, scopeOf } from './stages.js';

export interface SelectedServer {
  name: string;
  bmc?: string;
}

export interface RunGroup {
  bmc: string;
  servers: string[];
}

/** One group per BMC, servers sorted; servers without a BMC cannot be planned (reported apart). */
export function groupByBMC(servers: readonly SelectedServer[]): { groups: RunGroup[]; noBMC: string[] } {
  const byBMC = new Map<string, string[]>();
  const noBMC: string[] = [];
  for (const s of servers) {
    if (!s.bmc) noBMC.push(s.name);
    else byBMC.set(s.bmc, [...(byBMC.get(s.bmc) ?? []), s.name]);
  }
  const groups = [...byBMC.entries()]
    .map(([bmc, names]) => ({ bmc, servers: [...names].sort() }))
    .sort((a, b) => a.bmc.localeCompare(b.bmc));
  return { groups, noBMC: noBMC.sort() };
}

/** A name that is the same on every reconcile (a restarted controller finds its run, never a twin). */
export function boundedName(...parts: string[]): string {
  const name = parts.join('-');
  if (name.length <= 63) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 10);
  return `${name.slice(0, 52).replace(/[-.]+$/, '')}-${hash}`;
}

export interface RunSlot {
  name: string;
  /** Admitted earlier and not finished: keeps its slot. */
  active: boolean;
  /** Has work to do (new, drifted, edited). */
  wantsWork: boolean;
  createdAt: string;
}

/**
 * Runs that may progress now: the active ones keep their slots (even above a lowered maxConcurrent:
 * a run is never stopped mid-stage for a cap), then waiting runs by age, then name, fill the rest.
 */
export function admitRuns(runs: readonly RunSlot[], maxConcurrent: number): Set<string> {
  const admitted = new Set(runs.filter((r) => r.active).map((r) => r.name));
  const waiting = runs
    .filter((r) => !r.active && r.wantsWork)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.name.localeCompare(b.name));
  for (const r of waiting) {
    if (admitted.size >= maxConcurrent) break;
    admitted.add(r.name);
  }
  return admitted;
}

/** The run's phase: Pending until admitted, then InProgress while it progresses, then the outcome. */
export function runPhase(
  admitted: boolean,
  plan: Pick<RunPlan, 'stagePhases' | 'progressing'>,
  stopping: boolean,
): RunPhase {
  const allDone = plan.stagePhases.every((p) => p === 'Completed');
  if (stopping) return plan.progressing ? 'Stopping' : allDone ? 'Completed' : 'Failed';
  if (!plan.progressing)
    return allDone ? 'Completed' : plan.stagePhases.includes('Failed') ? 'Failed' : 'Pending';
  return admitted ? 'InProgress' : 'Pending';
}

/**
 * Servers a run must keep holding now, from its cells (`planRun`'s, after the reconcile's actions):
 * every server while a BMC cell is in flight or can still start (a BMC stage resets all its
 * servers), else each server with a cell in flight or one that can still start. A cell can still
 * start unless the run is stopping or a cell its lane depends on failed. So a server whose lane
 * failed, or that finished while no BMC stage is left, is given back at once, and never taken
 * again in the same run for a stage that cannot come.
 */
export function serversNeeded(
  stages: readonly PipelineStage[],
  servers: readonly string[],
  cells: ReadonlyMap<string, { phase: string }>,
  stopping: boolean,
): Set<string> {
  const phase = (stage: string, server?: string) => cells.get(cellKey(stage, server))?.phase ?? 'Pending';
  const live = (p: string, blocked: boolean) =>
    p === 'InProgress' || (p === 'Pending' && !blocked && !stopping);
  let bmcFailed = false;
  const serverFailed = new Set<string>();
  const needed = new Set<string>();
  for (const stage of stages) {
    if (scopeOf(stage.kind) === 'BMC') {
      const p = phase(stage.name);
      if (live(p, bmcFailed || serverFailed.size > 0)) return new Set(servers);
      if (p === 'Failed') bmcFailed = true;
      continue;
    }
    for (const srv of servers) {
      const p = phase(stage.name, srv);
      if (live(p, bmcFailed || serverFailed.has(srv))) needed.add(srv);
      if (p === 'Failed') serverFailed.add(srv);
    }
  }
  return needed;
}
