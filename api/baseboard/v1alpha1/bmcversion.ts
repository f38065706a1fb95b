// BMCVersion (baseboard.metal.ironcore.dev/v1alpha1): upgrade one BMC's firmware, inside
// ServerMaintenances for the servers it manages (a BMC upgrade can reset them).
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
import { BASEBOARD_GROUP, BASEBOARD_VERSION } from './group.js';

export const BMCVersionTemplate = Type.Object(versionTemplateFields('BMC'), {
  description: 'BMC firmware version to install on each selected BMC.',
});
export type BMCVersionTemplate = Static<typeof BMCVersionTemplate>;

export const BMCVersionSpec = Type.Object({
  ...versionTemplateFields('BMC'),
  driftPolicy: ChildDriftPolicy(),
  bmcRef: LocalObjectReference({
    description: 'BMC to upgrade.',
    rules: [
      { rule: "self.name != ''", message: 'bmcRef.name must not be empty' },
      { rule: 'self == oldSelf', message: 'bmcRef is immutable' },
    ],
  }),
  serverMaintenanceRefs: Type.Optional(
    Type.Array(
      ServerMaintenanceRef('ServerMaintenance (maintenance.metal.ironcore.dev) for one managed server.'),
      {
        description: 'ServerMaintenances the controller requested, one per server the BMC manages.',
      },
    ),
  ),
});
export type BMCVersionSpec = Static<typeof BMCVersionSpec>;

export const BMCVersionStatus = Type.Object({
  state: Type.Optional(KnownString(VersionStates, { description: 'State of the upgrade.' })),
  upgradeTask: Type.Optional(Task),
  ...firmwareStatusFields(),
});

export const BMCVersionKind = defineKind({
  group: BASEBOARD_GROUP,
  version: BASEBOARD_VERSION,
  kind: 'BMCVersion',
  plural: 'bmcversions',
  shortNames: ['bmcv'],
  categories: ['metal', 'firmware'],
  scope: 'Cluster',
  description: "BMCVersion upgrades one BMC's firmware inside ServerMaintenances of its servers.",
  body: { spec: BMCVersionSpec, status: Type.Optional(BMCVersionStatus) },
  printerColumns: [
    { name: 'BMC', type: 'string', jsonPath: '.spec.bmcRef.name' },
    { name: 'Version', type: 'string', jsonPath: '.spec.version' },
    { name: 'State', type: 'string', jsonPath: '.status.state' },
    { name: 'TaskState', type: 'string', jsonPath: '.status.upgradeTask.state' },
    { name: 'Progress', type: 'integer', jsonPath: '.status.upgradeTask.percentageComplete' },
    { name: 'TaskStatus', type: 'string', jsonPath: '.status.upgradeTask.status', priority: 100 },
    { name: 'UpdatePolicy', type: 'string', jsonPath: '.spec.updatePolicy', priority: 100 },
    { name: 'Maintenances', type: 'string', jsonPath: '.spec.serverMaintenanceRefs[*].name', priority: 100 },
  ],
});
export type BMCVersion = ObjectOf<typeof BMCVersionKind>;
