// The subset of the Redfish schema this client reads and writes. Typed loosely on purpose:
// everything is optional because BMCs omit what they like, and `Oem` blocks differ per vendor.

export interface ODataRef {
  '@odata.id': string;
}

export interface Resource {
  '@odata.id'?: string;
  '@odata.type'?: string;
  '@odata.etag'?: string;
  Id?: string;
  Name?: string;
  [key: string]: unknown;
}

export interface Collection extends Resource {
  Members?: ODataRef[];
  'Members@odata.count'?: number;
  'Members@odata.nextLink'?: string;
}

export interface ActionDescriptor {
  target: string;
  '@Redfish.ActionInfo'?: string;
  [allowable: string]: unknown;
}

export interface SettingsAnnotation {
  SettingsObject?: ODataRef;
  SupportedApplyTimes?: string[];
  ETag?: string;
  Time?: string;
  Messages?: unknown[];
}

export interface ServiceRoot extends Resource {
  RedfishVersion?: string;
  Systems?: ODataRef;
  Managers?: ODataRef;
  UpdateService?: ODataRef;
  /** The task service; the schema names the link `Tasks`. */
  Tasks?: ODataRef;
  Registries?: ODataRef;
  SessionService?: ODataRef;
  Links?: { Sessions?: ODataRef };
  Vendor?: string;
}

export type PowerState = 'On' | 'Off' | 'PoweringOn' | 'PoweringOff' | 'Paused';

export type ResetType =
  | 'On'
  | 'ForceOff'
  | 'GracefulShutdown'
  | 'GracefulRestart'
  | 'ForceRestart'
  | 'Nmi'
  | 'ForceOn'
  | 'PushPowerButton'
  | 'PowerCycle'
  | 'FullPowerCycle';

export type BootSourceOverrideEnabled = 'Disabled' | 'Once' | 'Continuous';
export type BootSourceOverrideMode = 'UEFI' | 'Legacy';

export interface Boot {
  BootSourceOverrideEnabled?: BootSourceOverrideEnabled;
  BootSourceOverrideTarget?: string;
  'BootSourceOverrideTarget@Redfish.AllowableValues'?: string[];
  BootSourceOverrideMode?: BootSourceOverrideMode;
  HttpBootUri?: string | null;
  [key: string]: unknown;
}

export interface ComputerSystem extends Resource {
  Manufacturer?: string;
  Model?: string;
  PowerState?: PowerState;
  Boot?: Boot;
  Bios?: ODataRef;
  BiosVersion?: string;
  VirtualMedia?: ODataRef;
  Actions?: { '#ComputerSystem.Reset'?: ActionDescriptor; [name: string]: unknown };
  '@Redfish.Settings'?: SettingsAnnotation;
  Links?: { ManagedBy?: ODataRef[]; [key: string]: unknown };
}

export interface Manager extends Resource {
  Manufacturer?: string;
  FirmwareVersion?: string;
  VirtualMedia?: ODataRef;
  Attributes?: Record<string, unknown>;
  '@Redfish.Settings'?: SettingsAnnotation;
  Actions?: { '#Manager.Reset'?: ActionDescriptor; [name: string]: unknown };
  Links?: { Oem?: { Dell?: { DellAttributes?: ODataRef[] } }; [key: string]: unknown };
}

export interface Bios extends Resource {
  Attributes?: Record<string, unknown>;
  AttributeRegistry?: string;
  '@Redfish.Settings'?: SettingsAnnotation;
}

export interface VirtualMedia extends Resource {
  MediaTypes?: string[];
  Image?: string | null;
  ImageName?: string | null;
  Inserted?: boolean;
  WriteProtected?: boolean;
  TransferProtocolType?: string | null;
  Actions?: {
    '#VirtualMedia.InsertMedia'?: ActionDescriptor;
    '#VirtualMedia.EjectMedia'?: ActionDescriptor;
  };
}

export type TaskState =
  | 'New'
  | 'Starting'
  | 'Running'
  | 'Suspended'
  | 'Interrupted'
  | 'Pending'
  | 'Stopping'
  | 'Completed'
  | 'Killed'
  | 'Exception'
  | 'Service'
  | 'Cancelling'
  | 'Cancelled';

export interface Task extends Resource {
  TaskState?: TaskState;
  TaskStatus?: string;
  PercentComplete?: number;
  Messages?: { MessageId?: string; Message?: string; MessageArgs?: unknown[] }[];
  TaskMonitor?: string;
  /** Dell / Lenovo jobs use JobState instead of TaskState. */
  JobState?: string;
}

export interface UpdateService extends Resource {
  FirmwareInventory?: ODataRef;
  Actions?: { '#UpdateService.SimpleUpdate'?: ActionDescriptor; [name: string]: unknown };
}

export interface SoftwareInventory extends Resource {
  Version?: string;
  Updateable?: boolean;
  RelatedItem?: ODataRef[];
  Status?: { State?: string; Health?: string };
  Oem?: Record<string, unknown>;
}

export interface AttributeRegistryEntry {
  AttributeName: string;
  Type?: 'Enumeration' | 'String' | 'Integer' | 'Boolean' | 'Password';
  ReadOnly?: boolean;
  /** Dell spells it this way. */
  Readonly?: boolean;
  ResetRequired?: boolean;
  LowerBound?: number;
  UpperBound?: number;
  MaxLength?: number;
  Value?: { ValueName: string; ValueDisplayName?: string }[];
}

export interface AttributeRegistry extends Resource {
  RegistryEntries?: { Attributes?: AttributeRegistryEntry[] };
}
