// BIOSVersionSet (system.metal.ironcore.dev/v1alpha1): stamps out one BIOSVersion per selected server.
import { Type, type Static } from '@sinclair/typebox';
import { defineKind, Int32, LabelSelector, type ObjectOf } from '../../schema/index.js';
import { SYSTEM_GROUP, SYSTEM_VERSION } from './group.js';
import { SetRolloutFields, SetStatusFields } from '../../firmware/set.js';
import { BIOSVersionTemplate } from './biosversion.js';

export const BIOSVersionSetSpec = Type.Object({
  serverSelector: LabelSelector({
    description: 'Servers to upgrade. An empty selector selects every server.',
  }),
  biosVersionTemplate: BIOSVersionTemplate,
  ...SetRolloutFields(),
});
export type BIOSVersionSetSpec = Static<typeof BIOSVersionSetSpec>;

export const BIOSVersionSetStatus = Type.Object({
  fullyLabeledServers: Type.Optional(Int32({ description: 'Servers the selector selects.' })),
  availableBIOSVersion: Type.Optional(Int32({ description: 'BIOSVersions the set has created.' })),
  pendingBIOSVersion: Type.Optional(Int32({ description: 'Of those, Pending.' })),
  inProgressBIOSVersion: Type.Optional(Int32({ description: 'Of those, InProgress.' })),
  completedBIOSVersion: Type.Optional(Int32({ description: 'Of those, Completed.' })),
  failedBIOSVersion: Type.Optional(Int32({ description: 'Of those, Failed.' })),
  ...SetStatusFields(),
});

export const BIOSVersionSetKind = defineKind({
  group: SYSTEM_GROUP,
  version: SYSTEM_VERSION,
  kind: 'BIOSVersionSet',
  plural: 'biosversionsets',
  shortNames: ['biosvs'],
  categories: ['metal', 'firmware'],
  scope: 'Cluster',
  description: 'BIOSVersionSet upgrades the BIOS of every selected server to one version.',
  body: { spec: BIOSVersionSetSpec, status: Type.Optional(BIOSVersionSetStatus) },
  printerColumns: [
    { name: 'Paused', type: 'boolean', jsonPath: '.spec.paused', priority: 1 },
    { name: 'Version', type: 'string', jsonPath: '.spec.biosVersionTemplate.version' },
    { name: 'Servers', type: 'integer', jsonPath: '.status.fullyLabeledServers' },
    { name: 'Created', type: 'integer', jsonPath: '.status.availableBIOSVersion' },
    { name: 'Pending', type: 'integer', jsonPath: '.status.pendingBIOSVersion' },
    { name: 'InProgress', type: 'integer', jsonPath: '.status.inProgressBIOSVersion' },
    { name: 'Completed', type: 'integer', jsonPath: '.status.completedBIOSVersion' },
    { name: 'Failed', type: 'integer', jsonPath: '.status.failedBIOSVersion' },
  ],
});
export type BIOSVersionSet = ObjectOf<typeof BIOSVersionSetKind>;
