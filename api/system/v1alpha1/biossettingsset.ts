// BIOSSettingsSet (system.metal.ironcore.dev/v1alpha1): stamps out one BIOSSettings per selected
// server from a template; the fleet rollout is then paced by the disruption budgets.
import { Type, type Static } from '@sinclair/typebox';
import { defineKind, Int32, LabelSelector, type ObjectOf } from '../../schema/index.js';
import { SYSTEM_GROUP, SYSTEM_VERSION } from './group.js';
import { SetRolloutFields, SetStatusFields } from '../../firmware/set.js';
import { BIOSSettingsTemplate } from './biossettings.js';

export const BIOSSettingsSetSpec = Type.Object({
  biosSettingsTemplate: BIOSSettingsTemplate,
  serverSelector: LabelSelector({
    description: 'Servers to configure. An empty selector selects every server.',
  }),
  ...SetRolloutFields(),
});
export type BIOSSettingsSetSpec = Static<typeof BIOSSettingsSetSpec>;

export const BIOSSettingsSetStatus = Type.Object({
  fullyLabeledServers: Type.Optional(Int32({ description: 'Servers the selector selects.' })),
  availableBIOSSettings: Type.Optional(Int32({ description: 'BIOSSettings the set has created.' })),
  pendingBIOSSettings: Type.Optional(Int32({ description: 'Of those, Pending.' })),
  inProgressBIOSSettings: Type.Optional(Int32({ description: 'Of those, InProgress.' })),
  completedBIOSSettings: Type.Optional(Int32({ description: 'Of those, Applied.' })),
  failedBIOSSettings: Type.Optional(Int32({ description: 'Of those, Failed.' })),
  ...SetStatusFields(),
});

export const BIOSSettingsSetKind = defineKind({
  group: SYSTEM_GROUP,
  version: SYSTEM_VERSION,
  kind: 'BIOSSettingsSet',
  plural: 'biossettingssets',
  shortNames: ['biosss'],
  categories: ['metal', 'firmware'],
  scope: 'Cluster',
  description: 'BIOSSettingsSet applies one BIOS settings template to every selected server.',
  body: { spec: BIOSSettingsSetSpec, status: Type.Optional(BIOSSettingsSetStatus) },
  printerColumns: [
    { name: 'Paused', type: 'boolean', jsonPath: '.spec.paused', priority: 1 },
    { name: 'Version', type: 'string', jsonPath: '.spec.biosSettingsTemplate.version' },
    { name: 'Servers', type: 'integer', jsonPath: '.status.fullyLabeledServers' },
    { name: 'Created', type: 'integer', jsonPath: '.status.availableBIOSSettings' },
    { name: 'Pending', type: 'integer', jsonPath: '.status.pendingBIOSSettings' },
    { name: 'InProgress', type: 'integer', jsonPath: '.status.inProgressBIOSSettings' },
    { name: 'Completed', type: 'integer', jsonPath: '.status.completedBIOSSettings' },
    { name: 'Failed', type: 'integer', jsonPath: '.status.failedBIOSSettings' },
  ],
});
export type BIOSSettingsSet = ObjectOf<typeof BIOSSettingsSetKind>;
