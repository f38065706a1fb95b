// Server (metal.ironcore.dev/v1alpha1): one physical machine, owned by metal-operator.
// Upstream v0.7.0 fields are mirrored unchanged; status.maintenance is our typed addition,
// written only by the maintenance controller.
import { Type, type Static } from '@sinclair/typebox';
import {
  defineKind,
  StringEnum,
  KnownString,
  Int32,
  Quantity,
  Time,
  Conditions,
  LocalObjectReference,
  ObjectReference,
  ImmutableObjectReference,
  UIDReference,
  Taint,
  MapList,
  type ObjectOf,
} from '../../schema/index.js';
import { METAL_GROUP, METAL_VERSION } from './group.js';

export const ServerStates = [
  'Initial',
  'Discovery',
  'Available',
  'Reserved',
  'Released',
  'Error',
  'Parked',
  'Maintenance',
] as const;
export type ServerState = (typeof ServerStates)[number];

/** Where a server stands in the maintenance overlay, as projected by the maintenance controller. */
export const ServerMaintenanceStates = ['None', 'Announced', 'Approved', 'InMaintenance'] as const;
export type ServerMaintenanceState = (typeof ServerMaintenanceStates)[number];

export const ServerMaintenanceStatus = Type.Object(
  {
    state: StringEnum(ServerMaintenanceStates, {
      description: 'None, Announced, Approved or InMaintenance.',
    }),
    activeMaintenanceRef: Type.Optional(
      UIDReference({ description: 'The ServerMaintenance that holds this server, if any.' }),
    ),
    reason: Type.Optional(Type.String({ description: 'Reason of the active (or next) maintenance.' })),
    class: Type.Optional(Type.String({ description: 'Class of the active (or next) maintenance.' })),
    since: Type.Optional(Time({ description: 'When the server entered the current state.' })),
    pending: Type.Optional(
      Int32({ minimum: 0, description: 'Maintenances queued for this server, not counting the active one.' }),
    ),
  },
  { description: 'Typed projection of maintenance onto the server. Replaces the maintenance-* labels.' },
);
export type ServerMaintenanceStatus = Static<typeof ServerMaintenanceStatus>;

const BMCAccess = Type.Object({
  protocol: Type.Object({
    name: Type.String(),
    port: Int32(),
    scheme: Type.Optional(Type.String()),
  }),
  address: Type.String(),
  bmcSecretRef: LocalObjectReference(),
});

const BootOrder = Type.Object({ name: Type.String(), priority: Type.Integer(), device: Type.String() });

const NetworkInterface = Type.Object({
  name: Type.String(),
  macAddress: Type.String(),
  ip: Type.Optional(Type.String()),
  ips: Type.Optional(Type.Array(Type.String())),
  carrierStatus: Type.Optional(Type.String()),
  neighbors: Type.Optional(
    Type.Array(
      Type.Object({
        macAddress: Type.Optional(Type.String()),
        portDescription: Type.Optional(Type.String()),
        portID: Type.Optional(Type.String()),
        systemDescription: Type.Optional(Type.String()),
        systemName: Type.Optional(Type.String()),
      }),
    ),
  ),
});

const Processor = Type.Object({
  id: Type.String(),
  type: Type.Optional(Type.String()),
  architecture: Type.Optional(Type.String()),
  instructionSet: Type.Optional(Type.String()),
  manufacturer: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  maxSpeedMHz: Type.Optional(Int32()),
  totalCores: Type.Optional(Int32()),
  totalThreads: Type.Optional(Int32()),
});

const Storage = Type.Object({
  name: Type.Optional(Type.String()),
  state: Type.Optional(Type.String()),
  drives: Type.Optional(
    Type.Array(
      Type.Object({
        name: Type.Optional(Type.String()),
        mediaType: Type.Optional(Type.String()),
        type: Type.Optional(Type.String()),
        capacity: Type.Optional(Quantity()),
        vendor: Type.Optional(Type.String()),
        model: Type.Optional(Type.String()),
        state: Type.Optional(Type.String()),
      }),
    ),
  ),
  volumes: Type.Optional(
    Type.Array(
      Type.Object({
        name: Type.Optional(Type.String()),
        capacity: Type.Optional(Quantity()),
        state: Type.Optional(Type.String()),
        raidType: Type.Optional(Type.String()),
        volumeUsage: Type.Optional(Type.String()),
      }),
    ),
  ),
});

export const ServerSpec = Type.Object({
  systemUUID: Type.String({ description: 'Unique identifier of the system (SMBIOS UUID).' }),
  systemURI: Type.Optional(Type.String()),
  power: Type.Optional(KnownString(['On', 'Off'] as const, { description: 'Deprecated upstream (#1042).' })),
  indicatorLED: Type.Optional(KnownString(['Unknown', 'Lit', 'Blinking', 'Off'] as const)),
  reclaimPolicy: Type.Optional(StringEnum(['Recycle', 'Retain'] as const, { default: 'Recycle' })),
  serverClaimRef: Type.Optional(ImmutableObjectReference({ description: 'The claim bound to this server.' })),
  bmcRef: Type.Optional(LocalObjectReference()),
  bmc: Type.Optional(BMCAccess),
  bootConfigurationRef: Type.Optional(ObjectReference()),
  bootOrder: Type.Optional(Type.Array(BootOrder)),
  biosSettingsRef: Type.Optional(LocalObjectReference()),
  // A list-map keyed by (key, effect): under server-side apply each writer owns only its own taints,
  // so the maintenance controller's taint never replaces (or removes) an admin's.
  taints: Type.Optional(
    MapList(Taint, ['key', 'effect'], {
      description: 'Taints on the server. NoBind keeps claims that do not tolerate it from binding.',
    }),
  ),
  unclaimable: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'Human cordon (IEP-22): no new claim may bind. Automation never writes this field.',
    }),
  ),
  serverMaintenanceRef: Type.Optional(
    ObjectReference({ description: 'Legacy (metal-operator <= v0.7.0); read-only for us.' }),
  ),
  maintenanceBootConfigurationRef: Type.Optional(
    ObjectReference({ description: 'Legacy (metal-operator <= v0.7.0).' }),
  ),
});

export const ServerStatus = Type.Object({
  manufacturer: Type.Optional(Type.String()),
  biosVersion: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  sku: Type.Optional(Type.String()),
  serialNumber: Type.Optional(Type.String()),
  powerState: Type.Optional(KnownString(['On', 'Off', 'Paused', 'PoweringOn', 'PoweringOff'] as const)),
  indicatorLED: Type.Optional(Type.String()),
  state: Type.Optional(KnownString(ServerStates)),
  networkInterfaces: Type.Optional(Type.Array(NetworkInterface)),
  totalSystemMemory: Type.Optional(Quantity()),
  processors: Type.Optional(Type.Array(Processor)),
  storages: Type.Optional(Type.Array(Storage)),
  conditions: Type.Optional(Conditions()),
  maintenance: Type.Optional(ServerMaintenanceStatus),
});

export const ServerKind = defineKind({
  group: METAL_GROUP,
  version: METAL_VERSION,
  kind: 'Server',
  plural: 'servers',
  shortNames: ['srv'],
  categories: ['metal'],
  scope: 'Cluster',
  description: 'Server is a physical machine managed through its BMC.',
  body: { spec: ServerSpec, status: Type.Optional(ServerStatus) },
  printerColumns: [
    { name: 'SystemUUID', type: 'string', jsonPath: '.spec.systemUUID', priority: 100 },
    { name: 'Manufacturer', type: 'string', jsonPath: '.status.manufacturer', priority: 100 },
    { name: 'Model', type: 'string', jsonPath: '.status.model', priority: 100 },
    { name: 'PowerState', type: 'string', jsonPath: '.status.powerState' },
    { name: 'State', type: 'string', jsonPath: '.status.state' },
    { name: 'Unclaimable', type: 'boolean', jsonPath: '.spec.unclaimable' },
    { name: 'Maintenance', type: 'string', jsonPath: '.status.maintenance.state' },
    { name: 'Reason', type: 'string', jsonPath: '.status.maintenance.reason' },
    { name: 'Claim', type: 'string', jsonPath: '.spec.serverClaimRef.name' },
  ],
});

export type Server = ObjectOf<typeof ServerKind>;
export type ServerSpec = Static<typeof ServerSpec>;
export type ServerStatus = Static<typeof ServerStatus>;
