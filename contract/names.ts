// Names of the contract: the taint, finalizers, annotations and condition types the binaries put on
// objects and read off them. Each is owned by exactly one writer, so "remove only what we added" is a
// matter of removing only these.

/** `namespace/name`, or the bare name of a cluster-scoped object (how messages name objects). */
export const qualified = (namespace: string | undefined, name: string | undefined) =>
  namespace ? `${namespace}/${name ?? ''}` : (name ?? '');

/** NoBind taint the maintenance controller puts on a server while a maintenance holds it. */
export const MAINTENANCE_TAINT_KEY = 'maintenance.metal.ironcore.dev/in-maintenance';

/** Finalizer through which the maintenance controller undoes taint, park and grant on delete. */
export const MAINTENANCE_FINALIZER = 'maintenance.metal.ironcore.dev/cleanup';

/**
 * metal-maintenance-operator's finalizer. Objects it created carry it; once its controller is off nobody
 * else removes it, so ours does, after its own undo (docs/compatibility.md).
 */
export const LEGACY_MMO_FINALIZER = 'maintenance.metal.ironcore.dev/servermaintenance';

/** Upstream metal-operator's operation request annotation (values `park`, `unpark`, ...). */
export const OPERATION_ANNOTATION = 'metal.ironcore.dev/operation';
/** Upstream metal-operator's marker on a parked server. */
export const PARKED_ANNOTATION = 'metal.ironcore.dev/parked';
/**
 * Which maintenance (uid) asked for the park. Only a server parked through this annotation is
 * unparked by us; a server somebody else parked stays parked.
 */
export const PARKED_BY_ANNOTATION = 'maintenance.metal.ironcore.dev/parked-by';

/** The namespace of the controllers' ServiceAccounts, Leases and the policy ConfigMap. */
export const SYSTEM_NAMESPACE = 'metal-maintenance-system';

/** Condition types, by the controller that owns them (SSA: one writer per condition type). */
export const MaintenanceConditions = {
  /** maintenance-controller: the last InMaintenance attempt and, when denied, why. */
  Admitted: 'Admitted',
  /** maintenance-controller: park requested / done (only with --park-mode=annotation). */
  ServerParked: 'ServerParked',
  /** maintenance-controller: InMaintenance and the server is ready for the actor (parked, boot requested). */
  Ready: 'Ready',
  /** maintenance-controller: a ServerBoot was created from spec.boot. */
  BootRequested: 'BootRequested',
  /** maintenance-controller: terminal failure (a timeout) and why. */
  Failed: 'Failed',
  /** approval-controller: announced to the claim. */
  Announced: 'Announced',
  /** approval-controller: approved, and by which path. */
  Approved: 'Approved',
  /** drain-controller: the claim's Node in its workload cluster is drained (False: why not, what blocks). */
  Drained: 'Drained',
} as const;

/**
 * On a workload Node the drain controller cordoned: the claim (`namespace/name`) it cordoned it for.
 * Only a Node carrying it is uncordoned by us; a cordon somebody else set stays.
 */
export const CORDONED_FOR_ANNOTATION = 'maintenance.metal.ironcore.dev/cordoned-for';

/**
 * On a Gardener Node: the claim (`namespace/name`) for whose maintenances the drain controller started
 * a GEP-31 in-place update handshake. Only a Node carrying it has its update labels touched by us.
 */
export const IN_PLACE_UPDATE_FOR_ANNOTATION = 'maintenance.metal.ironcore.dev/in-place-update-for';

/**
 * Beside it: the uids (comma-separated) of the maintenances that update is for, so that once they are
 * no longer announced the drain controller can tell MCM whether it succeeded or failed.
 */
export const IN_PLACE_UPDATE_UIDS_ANNOTATION = 'maintenance.metal.ironcore.dev/in-place-update-uids';

/** The providerID cloud-provider-metal (and the MCM provider) give the Node of a claim. */
export const claimProviderID = (namespace: string, name: string) => `metal://${namespace}/${name}`;

export const BudgetConditions = {
  /** budget-controller: whether the budget can grant a disruption now (like a PDB's). */
  DisruptionAllowed: 'DisruptionAllowed',
} as const;

/** Taint a MaintenancePipelineRun holds on each of its servers for the run's whole duration. */
export const PIPELINE_TAINT_KEY = 'maintenance.metal.ironcore.dev/pipeline-run';
/** Labels on runs and their children: which pipeline, which BMC, which run. */
export const PIPELINE_LABEL = 'maintenance.metal.ironcore.dev/pipeline';
export const PIPELINE_BMC_LABEL = 'maintenance.metal.ironcore.dev/bmc';
export const PIPELINE_RUN_LABEL = 'maintenance.metal.ironcore.dev/pipeline-run';
/** Finalizer through which a run stops at a safe point and gives its servers back on delete. */
export const PIPELINE_RUN_FINALIZER = 'maintenance.metal.ironcore.dev/pipeline-run';

/** Condition types on MaintenancePipelineRun (pipeline-controller, the only writer). */
export const PipelineRunConditions = {
  /** True while a cell is in flight or can still start; the reason says what it waits for. */
  Progressing: 'Progressing',
  /** True from a child's drift report until the run repaired it (Reconcile). */
  DriftDetected: 'DriftDetected',
} as const;
