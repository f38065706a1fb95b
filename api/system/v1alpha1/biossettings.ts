// BIOSSettings (system.metal.ironcore.dev/v1alpha1): BIOS attributes for one server, applied over
// Redfish only inside a ServerMaintenance the controller requests. Mirrors upstream
// metal-maintenance-operator field for field.
import { Type, type Static } from '@sinclair/typebox';
import {
  defineKind,
  KnownString,
  Int32,
  Conditions,
  LocalObjectReference,
  type ObjectOf,
} from '../../schema/index.js';
import {
  settingsTemplateFields,
  settingsTemplateRules,
  ServerMaintenanceRef,
  SettingsStates,
  firmwareStatusFields,
  LastAppliedTime,
  ChildDriftPolicy,
} from '../../firmware/common.js';
import { SYSTEM_GROUP, SYSTEM_VERSION } from './group.js';

/** The template a BIOSSettingsSet stamps out per server: everything but the server and maintenance. */
export const BIOSSettingsTemplate = Type.Object(settingsTemplateFields('BIOS'), {
  description: 'BIOS settings to apply to each selected server.',
  'x-kubernetes-validations': settingsTemplateRules,
});
export type BIOSSettingsTemplate = Static<typeof BIOSSettingsTemplate>;

export const BIOSSettingsSpec = Type.Object(
  {
    ...settingsTemplateFields('BIOS'),
    driftPolicy: ChildDriftPolicy(),
    serverRef: LocalObjectReference({
      description: 'Server whose BIOS is configured.',
      rules: [
        { rule: "self.name != ''", message: 'serverRef.name must not be empty' },
        { rule: 'self == oldSelf', message: 'serverRef is immutable' },
      ],
    }),
    serverMaintenanceRef: Type.Optional(
      ServerMaintenanceRef(
        'ServerMaintenance (maintenance.metal.ironcore.dev) the controller requested for the server.',
      ),
    ),
  },
  { 'x-kubernetes-validations': settingsTemplateRules },
);
export type BIOSSettingsSpec = Static<typeof BIOSSettingsSpec>;

export const BIOSSettingsFlowStatus = Type.Object({
  flowState: Type.Optional(KnownString(SettingsStates, { description: 'State of this step.' })),
  name: Type.Optional(Type.String({ description: 'Name of the settingsFlow step.' })),
  priority: Type.Optional(Int32({ description: 'Priority of the settingsFlow step.' })),
  conditions: Type.Optional(Conditions()),
  lastAppliedTime: Type.Optional(LastAppliedTime()),
});

export const BIOSSettingsStatus = Type.Object({
  state: Type.Optional(KnownString(SettingsStates, { description: 'State of the settings update.' })),
  flowState: Type.Optional(
    Type.Array(BIOSSettingsFlowStatus, { description: 'Progress per settingsFlow step.' }),
  ),
  lastAppliedTime: Type.Optional(LastAppliedTime()),
  ...firmwareStatusFields(),
});

export const BIOSSettingsKind = defineKind({
  group: SYSTEM_GROUP,
  version: SYSTEM_VERSION,
  kind: 'BIOSSettings',
  plural: 'biossettings',
  singular: 'biossettings',
  shortNames: ['bioss'],
  categories: ['metal', 'firmware'],
  scope: 'Cluster',
  description: 'BIOSSettings applies BIOS attributes to one server inside a ServerMaintenance.',
  body: { spec: BIOSSettingsSpec, status: Type.Optional(BIOSSettingsStatus) },
  printerColumns: [
    { name: 'Server', type: 'string', jsonPath: '.spec.serverRef.name' },
    { name: 'Version', type: 'string', jsonPath: '.spec.version' },
    { name: 'State', type: 'string', jsonPath: '.status.state' },
    { name: 'Maintenance', type: 'string', jsonPath: '.spec.serverMaintenanceRef.name' },
    { name: 'AppliedOn', type: 'date', jsonPath: '.status.lastAppliedTime' },
    { name: 'Retries', type: 'integer', jsonPath: '.status.failedAttempts', priority: 100 },
  ],
});
export type BIOSSettings = ObjectOf<typeof BIOSSettingsKind>;
