// The aggregate phase of a stage, of a run, and the run's stage counters (issue 26, point 3). One
// precedence decides every mix: Failed > InProgress > Pending > Completed. So a stage is Failed when
// any server failed, else InProgress when any progresses, else Pending when any has not finished
// (including "none started"), and Completed only when every server completed: the slowest server
// sets the phase, as IEP-0016 says, and a failure is never hidden behind progress elsewhere.
import type { StagePhase } from '../../api/maintenance/v1alpha1/maintenancepipelinerun.js';

/** Highest first. */
export const PHASE_PRECEDENCE: readonly StagePhase[] = ['Failed', 'InProgress', 'Pending', 'Completed'];

/**
 * The aggregate of the servers' phases in one stage (or of the stages of one run). An empty list is
 * Pending: nothing has completed, and a run always holds at least one server (spec.serverRefs).
 */
export function aggregatePhase(phases: Iterable<StagePhase>): StagePhase {
  let best = PHASE_PRECEDENCE.length;
  let any = false;
  for (const p of phases) {
    any = true;
    best = Math.min(best, PHASE_PRECEDENCE.indexOf(p));
  }
  return any ? (PHASE_PRECEDENCE[best] ?? 'Pending') : 'Pending';
}

export interface StageCounters {
  totalStages: number;
  pendingStages: number;
  activeStages: number;
  completedStages: number;
  failedStages: number;
}

/** The run's counters from its stages' aggregate phases; they always sum to totalStages. */
export function stageCounters(phases: readonly StagePhase[]): StageCounters {
  const count = (p: StagePhase) => phases.filter((x) => x === p).length;
  return {
    totalStages: phases.length,
    pendingStages: count('Pending'),
    activeStages: count('InProgress'),
    completedStages: count('Completed'),
    failedStages: count('Failed'),
  };
}
