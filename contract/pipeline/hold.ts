// How a run holds its servers (issue 26, points 1 and 2). A run takes exactly one ServerMaintenance
// per server when it starts and keeps it until it stops progressing (completed, or failed as far as
// it could go): one approval and one budget grant per server per run, where IEP-0016 had one per
// stage. The run's taint goes on every server with the maintenance and comes off with it. Every
// firmware child the run stamps references these maintenances instead of requesting its own.
import type { ServerMaintenanceSpec } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type {
  MaintenancePipelineSpec,
  MaintenanceTaintEffect,
} from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import type { Taint, TaintEffect } from '../../api/schema/common.js';
import { PIPELINE_TAINT_KEY } from '../names.js';
import { isVersionStage, scopeOf } from './stages.js';

/**
 * Our names onto upstream's Server taint effects (metal-operator #878): NoClaim is NoBind (no new
 * claim binds, bound claims stay); Evict is Evict (the bound claim's consumer is asked to leave).
 */
export const UPSTREAM_TAINT_EFFECT: Readonly<Record<MaintenanceTaintEffect, TaintEffect>> = {
  NoClaim: 'NoBind',
  Evict: 'Evict',
};

export function runTaint(spec: MaintenancePipelineSpec, runName: string): Taint {
  return {
    key: PIPELINE_TAINT_KEY,
    value: runName,
    effect: UPSTREAM_TAINT_EFFECT[spec.maintenanceTaintEffect ?? 'NoClaim'],
  };
}

/**
 * Whether the tenant must approve the run's maintenance. Evict always asks (approving is how the
 * consumer says it has left); otherwise any stage asking OwnerApproval asks, stages that all say
 * Enforced do not, and when none says, the policy's default for the class decides (unset).
 */
export function approvalRequired(spec: MaintenancePipelineSpec): boolean | undefined {
  if ((spec.maintenanceTaintEffect ?? 'NoClaim') === 'Evict') return true;
  const said = spec.stages.map((s) => s.template.serverMaintenancePolicy);
  if (said.includes('OwnerApproval')) return true;
  if (said.length > 0 && said.every((p) => p === 'Enforced')) return false;
  return undefined;
}

/** The one maintenance of a server for the run. */
export function runMaintenanceSpec(
  pipelineName: string,
  spec: MaintenancePipelineSpec,
  server: string,
  /** The run's gang (its uid, its servers): set when a stage acts on the BMC. */
  gang?: { name: string; size: number },
): ServerMaintenanceSpec {
  const required = approvalRequired(spec);
  // A BMC stage needs every server of the run (one BMC) down at once: the run's maintenances are one
  // gang, admitted together or not at all, so a half-admitted run holds no budget slots while it waits.
  const bmcStage = spec.stages.some((s) => scopeOf(s.kind) === 'BMC');
  const flashes = spec.stages.some((s) => isVersionStage(s.kind));
  return {
    serverRef: { name: server },
    reason: flashes ? 'FirmwareUpdate' : 'SettingsChange',
    description: `MaintenancePipeline ${pipelineName}: ${spec.stages.length} stage(s), ${spec.stages
      .map((s) => s.name)
      .join(', ')}`.slice(0, 1024),
    ...(required !== undefined ? { approval: { required } } : {}),
    ...(bmcStage && gang ? { gang } : {}),
  };
}

/** What the run last recorded of a server's hold, and what it sees of the maintenance. */
export interface HoldView {
  server: string;
  /** A maintenance was taken in this hold (status.servers[].maintenanceRef). */
  taken: boolean;
  /** That maintenance's state; undefined when it is gone. */
  state?: string;
  tainted: boolean;
}

export interface HoldPlan {
  take: string[];
  taint: string[];
  release: string[];
  untaint: string[];
  /** Needed servers whose maintenance ended under the run: their cells cannot start any more. */
  lost: string[];
}

const TERMINAL = new Set(['Completed', 'Failed']);

/** A hold taken whose maintenance is gone or ended: lost, never replaced within the hold. */
export const holdEnded = (v: HoldView) => v.taken && (v.state === undefined || TERMINAL.has(v.state));

/**
 * `needed`: servers the run holds now (all of them while it progresses; none once it stopped). A
 * hold taken is never taken again in the same hold: a maintenance that ended early is lost, not
 * replaced, so one server never has two maintenances (or two approvals) for one run.
 */
export function planHolds(views: readonly HoldView[], needed: ReadonlySet<string>): HoldPlan {
  const plan: HoldPlan = { take: [], taint: [], release: [], untaint: [], lost: [] };
  for (const v of views) {
    if (needed.has(v.server)) {
      if (!v.taken) plan.take.push(v.server);
      else if (holdEnded(v)) plan.lost.push(v.server);
      if (!v.tainted) plan.taint.push(v.server);
    } else {
      if (v.taken) plan.release.push(v.server);
      if (v.tainted) plan.untaint.push(v.server);
    }
  }
  return plan;
}
