// BMCVersionSet (baseboard.metal.ironcore.dev/v1alpha1): stamps out one BMCVersion per selected BMC.
import { Type, type Static } from '@sinclair/typebox';
import { defineKind, Int32, LabelSelector, type ObjectOf } from '../../schema/index.js';
import { BASEBOARD_GROUP, BASEBOARD_VERSION } from './group.js';
import { SetRolloutFields, SetStatusFields } from '../../firmware/set.js';
import { BMCVersionTemplate } from './bmcversion.js';

export const BMCVersionSetSpec = Type.Object({
  bmcSelector: LabelSelector({ description: 'BMCs to upgrade. An empty selector selects every BMC.' }),
  bmcVersionTemplate: BMCVersionTemplate,
  ...SetRolloutFields(),
});
export type BMCVersionSetSpec = Static<typeof BMCVersionSetSpec>;

export const BMCVersionSetStatus = Type.Object({
  fullyLabeledBMCs: Type.Optional(Int32({ description: 'BMCs the selector selects.' })),
  availableBMCVersion: Type.Optional(Int32({ description: 'BMCVersions the set has created.' })),
  pendingBMCVersion: Type.Optional(Int32({ description: 'Of those, Pending.' })),
  inProgressBMCVersion: Type.Optional(Int32({ description: 'Of those, InProgress.' })),
  completedBMCVersion: Type.Optional(Int32({ description: 'Of those, Completed.' })),
  failedBMCVersion: Type.Optional(Int32({ description: 'Of those, Failed.' })),
  ...SetStatusFields(),
});

export const BMCVersionSetKind = defineKind({
  group: BASEBOARD_GROUP,
  version: BASEBOARD_VERSION,
  kind: 'BMCVersionSet',
  plural: 'bmcversionsets',
  shortNames: ['bmcvs'],
  categories: ['metal', 'firmware'],
  scope: 'Cluster',
  description: 'BMCVersionSet upgrades the firmware of every selected BMC to one version.',
  body: { spec: BMCVersionSetSpec, status: Type.Optional(BMCVersionSetStatus) },
  printerColumns: [
    { name: 'Paused', type: 'boolean', jsonPath: '.spec.paused', priority: 1 },
    { name: 'Version', type: 'string', jsonPath: '.spec.bmcVersionTemplate.version' },
    { name: 'BMCs', type: 'integer', jsonPath: '.status.fullyLabeledBMCs' },
    { name: 'Created', type: 'integer', jsonPath: '.status.availableBMCVersion' },
    { name: 'Pending', type: 'integer', jsonPath: '.status.pendingBMCVersion' },
    { name: 'InProgress', type: 'integer', jsonPath: '.status.inProgressBMCVersion' },
    { name: 'Completed', type: 'integer', jsonPath: '.status.completedBMCVersion' },
    { name: 'Failed', type: 'integer', jsonPath: '.status.failedBMCVersion' },
  ],
});
export type BMCVersionSet = ObjectOf<typeof BMCVersionSetKind>;
