// BMC (metal.ironcore.dev/v1alpha1): a baseboard management controller, owned by metal-operator.
// Upstream v0.7.0 fields are mirrored unchanged; status stays lenient because metal-operator writes it.
import { Type, type Static } from '@sinclair/typebox';
import {
  defineKind,
  StringEnum,
  KnownString,
  Int32,
  Time,
  Conditions,
  LocalObjectReference,
  type ObjectOf,
} from '../../schema/index.js';
import { METAL_GROUP, METAL_VERSION } from './group.js';

export const BMCStates = ['Enabled', 'Error', 'Pending'] as const;
export type BMCState = (typeof BMCStates)[number];

/** Client implementations metal-operator picks by protocol name (upstream keeps the field open). */
export const BMCProtocolNames = [
  'Redfish',
  'RedfishLocal',
  'RedfishWithRegistryPatch',
  'IPMI',
  'SSH',
] as const;

export const BMCProtocol = Type.Object({
  name: KnownString(BMCProtocolNames, { description: 'Protocol metal-operator talks to the BMC with.' }),
  port: Int32({ minimum: 1, maximum: 65535, description: 'TCP port of that protocol on the BMC.' }),
  scheme: Type.Optional(StringEnum(['http', 'https'] as const, { description: 'URL scheme for Redfish.' })),
});
export type BMCProtocol = Static<typeof BMCProtocol>;

export const InlineEndpoint = Type.Object(
  {
    macAddress: Type.Optional(Type.String({ description: 'MAC address of the BMC network interface.' })),
    ip: Type.Optional(Type.String({ description: 'IP address of the BMC.' })),
  },
  {
    description: 'Network access of the BMC, inline. Set once; replaces the deprecated endpointRef.',
    'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'access is immutable' }],
  },
);

export const ConsoleProtocol = Type.Object({
  name: StringEnum(['IPMI', 'SSH', 'SSHLenovo'] as const, { description: 'Serial console protocol.' }),
  port: Int32({ minimum: 1, maximum: 65535, description: 'TCP port of the console.' }),
});

export const BMCSpec = Type.Object(
  {
    bmcUUID: Type.Optional(Type.String({ description: 'Redfish UUID of the BMC (Manager).' })),
    access: Type.Optional(InlineEndpoint),
    endpointRef: Type.Optional(
      LocalObjectReference({
        description: 'Deprecated upstream: the Endpoint holding the network access. Use access.',
        rules: [{ rule: 'self == oldSelf', message: 'endpointRef is immutable' }],
      }),
    ),
    bmcSecretRef: LocalObjectReference({ description: 'BMCSecret with the credentials for the BMC.' }),
    protocol: BMCProtocol,
    consoleProtocol: Type.Optional(ConsoleProtocol),
    hostname: Type.Optional(Type.String({ description: 'Hostname of the BMC.' })),
    bmcSettingsRef: Type.Optional(
      LocalObjectReference({
        description:
          'Deprecated upstream (#1091): BMCSettings now name their BMC (baseboard.metal.ironcore.dev).',
      }),
    ),
  },
  {
    'x-kubernetes-validations': [
      {
        rule: 'has(self.access) != has(self.endpointRef)',
        message: 'exactly one of access or endpointRef needs to be set',
      },
    ],
  },
);
export type BMCSpec = Static<typeof BMCSpec>;

export const BMCStatus = Type.Object({
  macAddress: Type.Optional(
    Type.String({
      pattern: '^([0-9A-Fa-f]{2}[:-]){5}([0-9A-Fa-f]{2})$',
      description: 'MAC address of the BMC.',
    }),
  ),
  ip: Type.Optional(Type.String({ description: 'IP address of the BMC.' })),
  manufacturer: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  sku: Type.Optional(Type.String()),
  serialNumber: Type.Optional(Type.String()),
  firmwareVersion: Type.Optional(Type.String({ description: 'BMC firmware version as Redfish reports it.' })),
  state: Type.Optional(
    KnownString(BMCStates, { default: 'Pending', description: 'Whether metal-operator can use the BMC.' }),
  ),
  powerState: Type.Optional(
    KnownString(['On', 'Off', 'Paused', 'PoweringOn', 'PoweringOff', 'Unknown'] as const),
  ),
  lastResetTime: Type.Optional(Time({ description: 'When metal-operator last reset the BMC.' })),
  eventsSubscriptionLink: Type.Optional(
    Type.String({ description: 'Redfish event subscription for alerts.' }),
  ),
  metricsReportSubscriptionLink: Type.Optional(
    Type.String({ description: 'Redfish event subscription for metrics.' }),
  ),
  conditions: Type.Optional(Conditions()),
});
export type BMCStatus = Static<typeof BMCStatus>;

export const BMCKind = defineKind({
  group: METAL_GROUP,
  version: METAL_VERSION,
  kind: 'BMC',
  plural: 'bmcs',
  categories: ['metal'],
  scope: 'Cluster',
  description: 'BMC is the baseboard management controller of one or more servers, reached over Redfish.',
  body: { spec: BMCSpec, status: Type.Optional(BMCStatus) },
  printerColumns: [
    { name: 'IP', type: 'string', jsonPath: '.status.ip' },
    { name: 'MACAddress', type: 'string', jsonPath: '.status.macAddress' },
    { name: 'Model', type: 'string', jsonPath: '.status.model' },
    { name: 'FirmwareVersion', type: 'string', jsonPath: '.status.firmwareVersion' },
    { name: 'State', type: 'string', jsonPath: '.status.state' },
    { name: 'PowerState', type: 'string', jsonPath: '.status.powerState' },
    { name: 'SKU', type: 'string', jsonPath: '.status.sku', priority: 100 },
    { name: 'SerialNumber', type: 'string', jsonPath: '.status.serialNumber', priority: 100 },
  ],
});
export type BMC = ObjectOf<typeof BMCKind>;
