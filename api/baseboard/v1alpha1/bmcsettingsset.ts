// BMCSettingsSet (baseboard.metal.ironcore.dev/v1alpha1): stamps out one BMCSettings per selected BMC.
import { Type, type Static } from '@sinclair/typebox';
import { defineKind, Int32, LabelSelector, type ObjectOf } from '../../schema/index.js';
import { BASEBOARD_GROUP, BASEBOARD_VERSION } from './group.js';
import { SetRolloutFields, SetStatusFields } from '../../firmware/set.js';
import { BMCSettingsTemplate } from './bmcsettings.js';

export const BMCSettingsSetSpec = Type.Object({
  bmcSettingsTemplate: BMCSettingsTemplate,
  bmcSelector: LabelSelector({ description: 'BMCs to configure. An empty selector selects every BMC.' }),
  ...SetRolloutFields(),
});
export type BMCSettingsSetSpec = Static<typeof BMCSettingsSetSpec>;

export const BMCSettingsSetStatus = Type.Object({
  fullyLabeledBMCs: Type.Optional(Int32({ description: 'BMCs the selector selects.' })),
  availableBMCSettings: Type.Optional(Int32({ description: 'BMCSettings the set has created.' })),
  pendingBMCSettings: Type.Optional(Int32({ description: 'Of those, Pending.' })),
  inProgressBMCSettings: Type.Optional(Int32({ description: 'Of those, InProgress.' })),
  completedBMCSettings: Type.Optional(Int32({ description: 'Of those, Applied.' })),
  failedBMCSettings: Type.Optional(Int32({ description: 'Of those, Failed.' })),
  ...SetStatusFields(),
});

export const BMCSettingsSetKind = defineKind({
  group: BASEBOARD_GROUP,
  version: BASEBOARD_VERSION,
  kind: 'BMCSettingsSet',
  plural: 'bmcsettingssets',
  categories: ['metal', 'firmware'],
  scope: 'Cluster',
  description: 'BMCSettingsSet applies one BMC settings template to every selected BMC.',
  body: { spec: BMCSettingsSetSpec, status: Type.Optional(BMCSettingsSetStatus) },
  printerColumns: [
    { name: 'Paused', type: 'boolean', jsonPath: '.spec.paused', priority: 1 },
    { name: 'Version', type: 'string', jsonPath: '.spec.bmcSettingsTemplate.version' },
    { name: 'BMCs', type: 'integer', jsonPath: '.status.fullyLabeledBMCs' },
    { name: 'Created', type: 'integer', jsonPath: '.status.availableBMCSettings' },
    { name: 'Pending', type: 'integer', jsonPath: '.status.pendingBMCSettings' },
    { name: 'InProgress', type: 'integer', jsonPath: '.status.inProgressBMCSettings' },
    { name: 'Completed', type: 'integer', jsonPath: '.status.completedBMCSettings' },
    { name: 'Failed', type: 'integer', jsonPath: '.status.failedBMCSettings' },
  ],
});
export type BMCSettingsSet = ObjectOf<typeof BMCSettingsSetKind>;
