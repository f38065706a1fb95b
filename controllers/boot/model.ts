// The boot controller's vocabulary: what the decision reads (a ServerBoot, the cached world and,
// when it asks for it, one observation of the BMC) and what it returns (the next status, the
// Redfish and Kubernetes actions to run first, Events, when to look again). No I/O here.
import type {
  ServerBoot,
  ServerBootPhase,
  ServerBootStatus,
} from '../../api/maintenance/v1alpha1/serverboot.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { ServerBootConfiguration } from '../../api/metal/v1alpha1/serverbootconfiguration.js';

export type { ServerBoot, ServerBootPhase, ServerBootStatus };
export { REDFISH_PATH_PREFIX_ANNOTATION, type AccessResult, type BmcAccess } from '../shared/bmc-access.js';
import type { AccessResult } from '../shared/bmc-access.js';

/** Held on every ServerBoot that may have changed a machine, until the change is undone. */
export const BOOT_FINALIZER = 'maintenance.metal.ironcore.dev/serverboot-restore';

/**
 * Set to "true" by an operator to release the finalizer without restoring (the BMC is gone for
 * good, the machine was replaced). The controller says in an Event what it leaves behind.
 */
export const SKIP_RESTORE_ANNOTATION = 'maintenance.metal.ironcore.dev/skip-restore';

/** Label on the ServerBootConfiguration the controller creates for a Pxe boot. */
export const SBC_BOOT_LABEL = 'maintenance.metal.ironcore.dev/serverboot';

export const ConditionTypes = {
  /** The maintenance gate: may this boot touch the server now? */
  Admitted: 'Admitted',
  /** BMC access resolved and the BMC answering. */
  BMCReady: 'BMCReady',
  /** The image is served: virtual CD inserted, or the ServerBootConfiguration Ready. */
  MediaReady: 'MediaReady',
  /** The boot override points at the image. */
  OverrideSet: 'OverrideSet',
  /** The server booted into the image. */
  Booted: 'Booted',
  /** spec.pin: the override is armed for the next reboot, whoever starts it. */
  Pinned: 'Pinned',
  /** Everything the boot changed is undone. */
  Restored: 'Restored',
  /** The boot failed; the reason names the phase and why. */
  Failed: 'Failed',
} as const;
export type ConditionType = (typeof ConditionTypes)[keyof typeof ConditionTypes];

/** Phases with a timeout (spec.phaseTimeout, else policy timeouts.bootPhase, else 10m). */
export const TIMED_PHASES: readonly ServerBootPhase[] = [
  'PreparingMedia',
  'SettingOverride',
  'Resetting',
  'WaitingForPower',
  'Restoring',
];

/** A boot override as Redfish names it (targets in the BMC's own spelling, e.g. UsbCd). */
export interface OverrideView {
  enabled: string;
  target: string;
  mode?: string;
  httpBootUri?: string | null;
}

export interface MediaView {
  /** `@odata.id` of the CD/DVD device. */
  device: string;
  image: string | null;
  inserted: boolean;
}

/** One look at the BMC, taken by the edge when the decision asks for it. */
export interface BmcObservation {
  powerState?: string;
  override: OverrideView;
  /** Vendor spellings of generic targets (Supermicro boots virtual media as UsbCd). */
  targetAliases: Readonly<Record<string, readonly string[]>>;
  /** False where the vendor rejects Continuous: Once is armed and re-armed instead. */
  continuous: boolean;
  /** The virtual CD; only read for VirtualMedia boots. `null`: the BMC has no CD/DVD device. */
  media?: MediaView | null;
}

export interface ErrorView {
  /** METAL_ERR_* code. */
  code: string;
  /** Safe to show: scrubbed of every credential. */
  message: string;
}

export type BmcView = { ok: true; observation: BmcObservation } | { ok: false; error: ErrorView };

export interface BootWorld {
  server?: Server;
  /** The ServerMaintenance named by spec.maintenanceRef, if it exists. */
  maintenance?: ServerMaintenance;
  access: AccessResult;
  /** The ServerBootConfiguration this boot owns (Pxe), if it exists. */
  sbc?: ServerBootConfiguration;
  /** Undefined until the decision asked for an observation. */
  bmc?: BmcView;
}

export interface BootContext {
  now: Date;
  /** Phase timeout when spec.phaseTimeout is unset: policy timeouts.bootPhase, else 10m. */
  defaultPhaseTimeoutMs: number;
  /** How often to look while waiting for power or a boot configuration. */
  pollMs: number;
  /** How often to check a pinned override while Running. */
  pinPollMs: number;
  /** WaitingForPower: On without a visible power cycle counts as booted after this long. */
  settleMs: number;
  /** Delay before retrying after a BMC error, and between undo attempts of a failed boot. */
  retryMs: number;
}

export type OverrideRequest = {
  /** Generic target: Cd, UefiHttp or Pxe (the client applies vendor aliases). */
  target: 'Cd' | 'UefiHttp' | 'Pxe';
  enabled: 'Once' | 'Continuous';
  mode?: 'UEFI' | 'Legacy';
  httpBootUri?: string;
};

export type BootAction =
  | { kind: 'insertMedia'; image: string }
  | { kind: 'ejectMedia'; image: string }
  | { kind: 'setOverride'; request: OverrideRequest }
  | { kind: 'restoreOverride'; previous: OverrideView }
  | { kind: 'reset'; resetType: 'On' | 'ForceRestart' }
  | { kind: 'createSbc'; sbc: ServerBootConfiguration }
  | { kind: 'deleteSbc'; name: string; namespace: string };

export interface BootEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  note: string;
}

export type Decision =
  /** Ask again with `world.bmc` filled in. */
  | { kind: 'observe' }
  | {
      kind: 'act';
      /**
       * Run in order; the status (and Events) are written only when all succeed, so a status
       * never claims a change that did not happen.
       */
      actions: BootAction[];
      /** Complete status as this controller owns it; undefined: leave it as it is. */
      status?: ServerBootStatus;
      events: BootEvent[];
      requeueAfterMs?: number;
      /** Remove the finalizer (deletion with nothing left to undo). */
      releaseFinalizer?: boolean;
    };
