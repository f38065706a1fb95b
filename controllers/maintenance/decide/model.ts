// The maintenance controller's decision, its vocabulary: what it reads for one server (ServerInput) and
// the plan of writes it returns (ServerPlan), which the reconciler executes.
import type { Condition } from '../../../api/schema/common.js';
import type {
  Server,
  ServerMaintenanceStatus as ServerProjection,
} from '../../../api/metal/v1alpha1/server.js';
import type {
  BudgetRef,
  MaintenancePhase,
  ServerMaintenance,
} from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerBoot } from '../../../api/maintenance/v1alpha1/serverboot.js';
import type { Policy } from '../../../policies/schema.js';
import type { OPERATION_ANNOTATION, PARKED_BY_ANNOTATION } from '../../../contract/names.js';
import {
  LEGACY_MMO_FINALIZER,
  MAINTENANCE_FINALIZER,
  MaintenanceConditions as C,
} from '../../../contract/names.js';

export type ParkMode = 'annotation' | 'off';

export interface DecideOptions {
  parkMode: ParkMode;
  taintKey: string;
}

/** A grant of this maintenance in one budget's ledger, as the cache shows it. */
export interface GrantHolding {
  ref: BudgetRef;
  grantedAt: string;
}

export interface ServerInput {
  serverName: string;
  server: Server | undefined;
  /** A fresh read confirmed the server is gone (not just missing from the cache). */
  serverGone: boolean;
  maintenances: readonly ServerMaintenance[];
  /** maintenance uid -> its budget grants. */
  grants: ReadonlyMap<string, readonly GrantHolding[]>;
  /** maintenance uid -> the ServerBoot made from its spec.boot. */
  boots: ReadonlyMap<string, ServerBoot>;
  policy: Policy;
  now: Date;
  options: DecideOptions;
  /** uid -> epoch ms before which the InMaintenance transition is not tried again (the webhook's hint). */
  backoff: ReadonlyMap<string, number>;
}

/** The ServerMaintenance status fields the maintenance controller owns (server-side apply). */
export interface OwnedStatus {
  state: MaintenancePhase;
  observedGeneration?: number;
  queuePosition?: number;
  startedAt?: string;
  completedAt?: string;
  message?: string;
  grant?: { grantedAt: string; budgets?: BudgetRef[] };
  conditions: Condition[];
}

export const OWNED_CONDITIONS = [C.Admitted, C.ServerParked, C.Ready, C.BootRequested, C.Failed] as const;

export interface PlannedEvent {
  m: ServerMaintenance;
  type: 'Normal' | 'Warning';
  reason: string;
  action: string;
  note: string;
}

/** Annotation changes for the park request; null removes. Sent as one merge patch. */
export interface ParkPatch {
  [OPERATION_ANNOTATION]?: 'park' | 'unpark';
  [PARKED_BY_ANNOTATION]?: string | null;
}

export interface StatusWrite {
  m: ServerMaintenance;
  status: OwnedStatus;
}

export interface Attempt extends StatusWrite {
  /** What to write instead when the webhook denies it (the waiting status; Admitted gets the reason). */
  waiting: OwnedStatus;
  /** The state it leaves and when it entered it, for time-in-state metrics. */
  from: MaintenancePhase;
  enteredAt?: number;
}

export interface Transition {
  m: ServerMaintenance;
  from: MaintenancePhase;
  to: MaintenancePhase;
  /** When `from` was entered (epoch ms), for time-in-state metrics. */
  enteredAt?: number;
  reason?: string;
}

export interface ServerPlan {
  addFinalizer: ServerMaintenance[];
  /** The taint to hold: the holder's uid as value, or undefined to remove it. Written as a CAS. */
  taint?: { value: string | undefined };
  park?: ParkPatch;
  projection?: ServerProjection;
  statuses: StatusWrite[];
  releaseGrants: { m: ServerMaintenance; refs: BudgetRef[] }[];
  /** `Completed` of finished holders, written after their undo and before their grants are released. */
  completions: StatusWrite[];
  createBoots: ServerBoot[];
  deleteBoots: ServerBoot[];
  /** Deleting maintenances whose undo is complete once the writes above have succeeded. */
  removeFinalizer: ServerMaintenance[];
  /** The InMaintenance attempt (the status write the webhook admits or denies). */
  attempt?: Attempt;
  events: PlannedEvent[];
  transitions: Transition[];
  requeueAfterMs?: number;
}

export function emptyPlan(): ServerPlan {
  return {
    addFinalizer: [],
    statuses: [],
    releaseGrants: [],
    completions: [],
    createBoots: [],
    deleteBoots: [],
    removeFinalizer: [],
    events: [],
    transitions: [],
  };
}

export const ours = (m: ServerMaintenance) => {
  const f = m.metadata.finalizers ?? [];
  return f.includes(MAINTENANCE_FINALIZER) || f.includes(LEGACY_MMO_FINALIZER);
};

/** Whether finalizers other than ours keep the object once we remove ours. */
export const outlivesUs = (m: ServerMaintenance) =>
  (m.metadata.finalizers ?? []).some((f) => f !== MAINTENANCE_FINALIZER && f !== LEGACY_MMO_FINALIZER);

/**
 * How long a new maintenance goes without a status of ours while the approval controller has not
 * answered: Pending/AwaitingApproval would be a write that the approval, moments later, makes stale.
 */
export const FIRST_STATUS_GRACE_MS = 10_000;

/** Failure reasons after which the server stays parked and tainted for a person. */
export const HOLDING_FAILURES = new Set(['BootNotRestored']);
