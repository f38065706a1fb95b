// BIOSVersion (system.metal.ironcore.dev/v1alpha1): upgrade one server's BIOS to a version over
// Redfish SimpleUpdate, only inside a ServerMaintenance the controller requests.
import { Type, type Static } from '@sinclair/typebox';
import { defineKind, KnownString, LocalObjectReference, type ObjectOf } from '../../schema/index.js';
import {
  versionTemplateFields,
  ServerMaintenanceRef,
  Task,
  VersionStates,
  firmwareStatusFields,
  ChildDriftPolicy,
} from '../../firmware/common.js';
import { SYSTEM_GROUP, SYSTEM_VERSION } from './group.js';

export const BIOSVersionTemplate = Type.Object(versionTemplateFields('BIOS'), {
  description: 'BIOS version to install on each selected server.',
});
export type BIOSVersionTemplate = Static<typeof BIOSVersionTemplate>;

export const BIOSVersionSpec = Type.Object({
  ...versionTemplateFields('BIOS'),
  driftPolicy: ChildDriftPolicy(),
  serverRef: LocalObjectReference({
    description: 'Server whose BIOS is upgraded.',
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
});
export type BIOSVersionSpec = Static<typeof BIOSVersionSpec>;

export const BIOSVersionStatus = Type.Object({
  state: Type.Optional(KnownString(VersionStates, { description: 'State of the upgrade.' })),
  upgradeTask: Type.Optional(Task),
  ...firmwareStatusFields(),
});

export const BIOSVersionKind = defineKind({
  group: SYSTEM_GROUP,
  version: SYSTEM_VERSION,
  kind: 'BIOSVersion',
  plural: 'biosversions',
  shortNames: ['biosv'],
  categories: ['metal', 'firmware'],
  scope: 'Cluster',
  description: "BIOSVersion upgrades one server's BIOS inside a ServerMaintenance.",
  body: { spec: BIOSVersionSpec, status: Type.Optional(BIOSVersionStatus) },
  printerColumns: [
    { name: 'Server', type: 'string', jsonPath: '.spec.serverRef.name' },
    { name: 'Version', type: 'string', jsonPath: '.spec.version' },
    { name: 'State', type: 'string', jsonPath: '.status.state' },
    { name: 'Maintenance', type: 'string', jsonPath: '.spec.serverMaintenanceRef.name' },
    { name: 'TaskState', type: 'string', jsonPath: '.status.upgradeTask.state' },
    { name: 'Progress', type: 'integer', jsonPath: '.status.upgradeTask.percentageComplete' },
    { name: 'TaskStatus', type: 'string', jsonPath: '.status.upgradeTask.status', priority: 100 },
    { name: 'UpdatePolicy', type: 'string', jsonPath: '.spec.updatePolicy', priority: 100 },
  ],
});
export type BIOSVersion = ObjectOf<typeof BIOSVersionKind>;
