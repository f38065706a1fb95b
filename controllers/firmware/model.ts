// The firmware controller's vocabulary: what a decision reads (one firmware object, the cached
// world and, when it asks, one look at the BMC through the port) and what it returns (the next
// status, the Kubernetes and Redfish actions to run first, Events, when to look again). No I/O.
import type { BIOSSettings } from '../../api/system/v1alpha1/biossettings.js';
import type { BIOSVersion } from '../../api/system/v1alpha1/biosversion.js';
import type { BMCSettings } from '../../api/baseboard/v1alpha1/bmcsettings.js';
import type { BMCVersion } from '../../api/baseboard/v1alpha1/bmcversion.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { Condition } from '../../api/schema/common.js';
import type { AccessResult } from '../shared/bmc-access.js';
import type { FirmwareObservation, ObserveRequest } from './port.js';

export type { BIOSSettings, BIOSVersion, BMCSettings, BMCVersion };

export type VersionObject = BIOSVersion | BMCVersion;
export type SettingsObject = BIOSSettings | BMCSettings;
export type FirmwareObject = VersionObject | SettingsObject;

export type FirmwareKindName = 'BIOSVersion' | 'BMCVersion' | 'BIOSSettings' | 'BMCSettings';
/** What the object changes: the host's BIOS (one server) or the BMC (every server behind it). */
export type Target = 'BIOS' | 'BMC';

export const TARGET: Record<FirmwareKindName, Target> = {
  BIOSVersion: 'BIOS',
  BIOSSettings: 'BIOS',
  BMCVersion: 'BMC',
  BMCSettings: 'BMC',
};

export { OPERATION_ANNOTATION } from '../../contract/names.js';
/** Upstream's value of the operation annotation that asks for a new attempt of a Failed object. */
export const OPERATION_RETRY = 'retry';

/** On the ServerMaintenances this controller requests: the uid of the firmware object. */
export const OWNER_LABEL = 'firmware.metal.ironcore.dev/owner-uid';
/** On the ServerMaintenances this controller requests: the attempt they belong to. */
export const ATTEMPT_LABEL = 'firmware.metal.ironcore.dev/attempt';
/** On the firmware object: the number of its current attempt (names its maintenances). */
export const ATTEMPT_ANNOTATION = 'firmware.metal.ironcore.dev/attempt';

/**
 * The phase of an InProgress object, kept as the reason of the `Progressing` condition (the kinds
 * are upstream's and have no phase field). Its lastTransitionTime is when the phase began.
 */
export const Phases = [
  'RequestingMaintenance',
  'WaitingForMaintenance',
  'Issuing',
  'Flashing',
  'Rebooting',
  'Verifying',
  'Staging',
] as const;
export type Phase = (typeof Phases)[number];

export const ConditionTypes = {
  /** InProgress: the reason is the phase, the message the last answer. */
  Progressing: 'Progressing',
  /** Upstream: a maintenance was requested (one per server behind a BMC). */
  ServerMaintenanceCreated: 'ServerMaintenanceCreated',
  /** Upstream: waiting for the maintenance(s) to be InMaintenance. */
  ServerMaintenanceWaiting: 'ServerMaintenanceWaiting',
  /** Upstream: the BMC accepted SimpleUpdate. */
  VersionUpgradeIssued: 'VersionUpgradeIssued',
  /** Upstream: the version read back equals the target. */
  VersionUpgradeCompleted: 'VersionUpgradeCompleted',
  /** The settings read back equal the requested ones. */
  SettingsApplied: 'SettingsApplied',
  /** Failed settings: what it staged and no reset applied was discarded before the release. */
  StagedDiscarded: 'StagedDiscarded',
  /** Failed: the reason says why, the message names the phase and the BMC's last answer. */
  Failed: 'Failed',
} as const;

export interface ErrorView {
  code: string;
  /** Safe to show: scrubbed of every credential. */
  message: string;
}

export type BmcView = { ok: true; observation: FirmwareObservation } | { ok: false; error: ErrorView };

export interface FirmwareWorld {
  /** Servers that must be in a maintenance: the one server, or every server behind the BMC. */
  servers: Server[];
  /** Why no server could be found (the Server or BMC does not exist). */
  missing?: string;
  /**
   * The object is a MaintenancePipelineRun's child: the run took the maintenances (named in spec),
   * holds them across its stages and releases them; this controller neither requests nor deletes them.
   */
  runHeld?: { refs: { namespace: string; name: string }[] };
  /** This attempt's maintenances by server name (only those that exist). */
  maintenances: ReadonlyMap<string, ServerMaintenance>;
  access: AccessResult;
  /** Undefined until the decision asked for an observation. */
  bmc?: BmcView;
}

export interface FirmwarePolicy {
  class: 'Planned' | 'Urgent' | 'Emergency';
  defaultMaxAttempts: number;
  retryBackoffMs: number;
  retryBackoffMaxMs: number;
  timeouts: { admission: number; issue: number; task: number; reboot: number; verify: number };
  /** Boot image pinned during the maintenance (ServerMaintenance spec.boot), if configured. */
  boot?: { image: string; method: 'VirtualMedia' | 'UefiHttp' | 'Pxe' };
}

export interface FirmwareContext {
  now: Date;
  /** Namespace the maintenances are created in. */
  namespace: string;
  policy: FirmwarePolicy;
  /** How often to look while a task runs or a BMC reboots. */
  pollMs: number;
}

export interface ImageRequest {
  uri: string;
  transferProtocol?: string;
  /** Secret with the image server's username and password; read at the edge, never logged. */
  secretRef?: { name?: string; namespace?: string };
  force: boolean;
}

export type FirmwareAction =
  | { kind: 'createMaintenance'; maintenance: ServerMaintenance }
  | { kind: 'deleteMaintenance'; namespace: string; name: string; uid?: string }
  /** Records the maintenance references in spec (upstream's fields, read by the freeze rule). */
  | { kind: 'setRefs'; attempt: number; refs: { namespace: string; name: string }[] }
  | { kind: 'simpleUpdate'; target: Target; image: ImageRequest }
  | { kind: 'reset'; target: Target }
  | { kind: 'writeAttributes'; target: Target; attributes: Record<string, string> }
  /** Puts the current values back over these staged ones, so no later reset applies them. */
  | { kind: 'discardStaged'; target: Target; attributes: string[] }
  /** Removes `metal.ironcore.dev/operation: retry` once the retry is under way. */
  | { kind: 'clearOperation' };

export interface FirmwareEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  note: string;
}

/** Status as the firmware controller owns it (the union of the four kinds' status fields). */
export interface FirmwareStatus {
  state?: string;
  upgradeTask?: { URI?: string; state?: string; status?: string; percentageComplete?: number };
  flowState?: {
    name?: string;
    priority?: number;
    flowState?: string;
    lastAppliedTime?: string;
    conditions?: Condition[];
  }[];
  lastAppliedTime?: string;
  appliedETags?: Record<string, { uri?: string; etag?: string; valueHash?: string }>;
  failedAttempts?: number;
  observedGeneration?: number;
  conditions?: Condition[];
}

export type Decision =
  | { kind: 'observe'; request: ObserveRequest }
  | {
      kind: 'act';
      /** Run in order; the status is written only when all succeed. */
      actions: FirmwareAction[];
      status?: FirmwareStatus;
      events: FirmwareEvent[];
      requeueAfterMs?: number;
    };
