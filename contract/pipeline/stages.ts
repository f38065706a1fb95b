// Facts about a pipeline's stages every planner step shares: scope, the drift policy a completed child
// settles into, what a stage's template hashes to (an edit changes it), and how a child's state reads
// as a stage phase.
import { createHash } from 'node:crypto';
import { stringify } from 'safe-stable-stringify';
import {
  BMC_SCOPED_KINDS,
  VERSION_KINDS,
  type PipelineStage,
  type StageKind,
} from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import type { StagePhase } from '../../api/maintenance/v1alpha1/maintenancepipelinerun.js';

export type Scope = 'BMC' | 'Server';
export const scopeOf = (kind: StageKind): Scope => (BMC_SCOPED_KINDS.includes(kind) ? 'BMC' : 'Server');
export const isVersionStage = (kind: StageKind) => VERSION_KINDS.includes(kind);

/** A child's spec.driftPolicy: unset is active (reconciles, requests maintenance, applies). */
export type ChildDriftPolicy = 'Observe' | 'Suspend';

/**
 * What a completed child settles into (IEP-0016): settings always Observe; a version hop Suspend
 * when a later stage of the same kind supersedes it, else Observe (the terminal hop watches).
 */
export function settledPolicy(stages: readonly PipelineStage[], index: number): ChildDriftPolicy {
  const stage = stages[index];
  if (!stage || !isVersionStage(stage.kind)) return 'Observe';
  return stages.slice(index + 1).some((s) => s.kind === stage.kind) ? 'Suspend' : 'Observe';
}

/** Hash of what a stage asks for (kind and template), key order ignored. */
export function stageHash(stage: PipelineStage): string {
  const text = stringify({ kind: stage.kind, template: stage.template }) ?? '';
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/** A firmware child's status.state as a stage phase; settings say Applied where versions say Completed. */
export function childPhase(state: string | undefined): StagePhase {
  switch (state) {
    case 'InProgress':
      return 'InProgress';
    case 'Applied':
    case 'Completed':
      return 'Completed';
    case 'Failed':
      return 'Failed';
    default:
      return 'Pending';
  }
}

/** Key of one cell of a run: a stage on the BMC, or a stage on one server. */
export const cellKey = (stage: string, server?: string) => (server ? `${stage}/${server}` : stage);
