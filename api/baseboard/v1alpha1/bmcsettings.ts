// BMCSettings (baseboard.metal.ironcore.dev/v1alpha1): attributes of one BMC (Redfish Manager),
// applied inside ServerMaintenances for every server the BMC manages. Mirrors upstream
// metal-maintenance-operator, including the wrapped serverMaintenanceRefs items.
import { Type, type Static } from '@sinclair/typebox';
import { defineKind, KnownString, LocalObjectReference, type ObjectOf } from '../../schema/index.js';
import {
  settingsTemplateFields,
  settingsTemplateRules,
  ServerMaintenanceRef,
  SettingsStates,
  firmwareStatusFields,
  ChildDriftPolicy,
} from '../../firmware/common.js';
import { BASEBOARD_GROUP, BASEBOARD_VERSION } from './group.js';

export const BMCSettingsTemplate = Type.Object(settingsTemplateFields('BMC'), {
  description: 'BMC settings to apply to each selected BMC.',
  'x-kubernetes-validations': settingsTemplateRules,
});
export type BMCSettingsTemplate = Static<typeof BMCSettingsTemplate>;

/** Upstream wraps each reference in an object (api.ServerMaintenanceRefItem); kept for compatibility. */
export const ServerMaintenanceRefItem = Type.Object({
  serverMaintenanceRef: Type.Optional(
    ServerMaintenanceRef(
      'ServerMaintenance (maintenance.metal.ironcore.dev) requested for one managed server.',
    ),
  ),
});

export const BMCSettingsSpec = Type.Object(
  {
    ...settingsTemplateFields('BMC'),
    driftPolicy: ChildDriftPolicy(),
    bmcRef: LocalObjectReference({
      description: 'BMC to configure.',
      rules: [
        { rule: "self.name != ''", message: 'bmcRef.name must not be empty' },
        { rule: 'self == oldSelf', message: 'bmcRef is immutable' },
      ],
    }),
    serverMaintenanceRefs: Type.Optional(
      Type.Array(ServerMaintenanceRefItem, {
        description: 'ServerMaintenances the controller requested, one per server the BMC manages.',
      }),
    ),
  },
  { 'x-kubernetes-validations': settingsTemplateRules },
);
export type BMCSettingsSpec = Static<typeof BMCSettingsSpec>;

const AppliedETag = Type.Object({
  uri: Type.Optional(Type.String({ description: 'Redfish URI the setting was written to (or created at).' })),
  etag: Type.Optional(
    Type.String({ description: 'ETag (or hash:sha256: of the body) after the last apply.' }),
  ),
  valueHash: Type.Optional(Type.String({ description: 'SHA-256 of the resolved value at apply time.' })),
});

export const BMCSettingsStatus = Type.Object({
  state: Type.Optional(KnownString(SettingsStates, { description: 'State of the settings update.' })),
  appliedETags: Type.Optional(
    Type.Unsafe<Record<string, Static<typeof AppliedETag>>>({
      type: 'object',
      additionalProperties: AppliedETag,
      description: 'Per settings key: what was applied, for drift detection.',
    }),
  ),
  ...firmwareStatusFields(),
});

export const BMCSettingsKind = defineKind({
  group: BASEBOARD_GROUP,
  version: BASEBOARD_VERSION,
  kind: 'BMCSettings',
  plural: 'bmcsettings',
  singular: 'bmcsettings',
  categories: ['metal', 'firmware'],
  scope: 'Cluster',
  description: 'BMCSettings applies attributes to one BMC inside ServerMaintenances of its servers.',
  body: { spec: BMCSettingsSpec, status: Type.Optional(BMCSettingsStatus) },
  printerColumns: [
    { name: 'BMC', type: 'string', jsonPath: '.spec.bmcRef.name' },
    { name: 'Version', type: 'string', jsonPath: '.spec.version' },
    { name: 'State', type: 'string', jsonPath: '.status.state' },
    {
      name: 'Maintenances',
      type: 'string',
      jsonPath: '.spec.serverMaintenanceRefs[*].serverMaintenanceRef.name',
    },
    { name: 'Retries', type: 'integer', jsonPath: '.status.failedAttempts', priority: 100 },
  ],
});
export type BMCSettings = ObjectOf<typeof BMCSettingsKind>;
