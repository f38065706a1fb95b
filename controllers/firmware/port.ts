// The port between the firmware decisions and a BMC: what the reconciler may ask a BMC to read
// (one observation per decision) and to do. edge.ts implements it over lib/redfish; the unit tests
// use testing/fake-bmc.ts. Everything here is plain data.
import type { BmcAccess } from '../shared/bmc-access.js';
import type { FirmwareAction, ImageRequest, Target } from './model.js';

export interface TaskView {
  uri: string;
  /** Redfish TaskState (New, Running, Completed, Exception, ...). */
  state: string;
  status?: string;
  percent?: number;
  /** The image the task installs, when the BMC says (used to adopt a task after a crash). */
  image?: string;
  /** The BMC's last message about it, for the condition. */
  message?: string;
  /** Resources the task updates (its Payload's Targets), when the BMC says. */
  targets?: string[];
}

export interface AttributeView {
  current: Record<string, unknown>;
  pending: Record<string, unknown>;
  /** Names the registry marks read-only. */
  readOnly: string[];
  /** Names the BMC does not expose at all. */
  unknown: string[];
  /** ETag of the attribute resource as read, if the BMC sends one. */
  etag?: string;
  /** Where the attributes live (for status.appliedETags). */
  uri?: string;
}

export interface ObserveRequest {
  target: Target;
  /** Read the running version of the target. */
  version?: boolean;
  /** Read this task. */
  taskUri?: string;
  /** List the BMC's tasks (to find one we may have started before a crash). */
  tasks?: boolean;
  /** Read these attributes (current, pending, registry flags). */
  attributes?: string[];
}

export interface FirmwareObservation {
  /** The BMC answered the observation's first request. */
  reachable: true;
  powerState?: string;
  version?: string;
  task?: TaskView;
  tasks?: TaskView[];
  attributes?: AttributeView;
}

/** What an action reports back (only SimpleUpdate has something to say: its task). */
export interface ActionResult {
  taskUri?: string;
}

export interface FirmwarePort {
  observe(access: BmcAccess, request: ObserveRequest): Promise<FirmwareObservation>;
  simpleUpdate(
    access: BmcAccess,
    target: Target,
    image: ImageRequest,
    credentials?: { username: string; password: string },
  ): Promise<ActionResult>;
  reset(access: BmcAccess, target: Target): Promise<void>;
  writeAttributes(access: BmcAccess, target: Target, attributes: Record<string, string>): Promise<void>;
  /** Discards what is staged for these attributes (their current values written over it). */
  discardStaged(access: BmcAccess, target: Target, attributes: string[]): Promise<void>;
  close(): Promise<void>;
}

/** The actions the port runs (the rest are Kubernetes writes). */
export type PortAction = Extract<
  FirmwareAction,
  { kind: 'simpleUpdate' | 'reset' | 'writeAttributes' | 'discardStaged' }
>;
