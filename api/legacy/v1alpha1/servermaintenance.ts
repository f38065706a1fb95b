// Legacy ServerMaintenance (metal.ironcore.dev/v1alpha1), as metal-operator <= v0.7.0 served it
// before #1130 moved the kind to maintenance.metal.ironcore.dev. We ship its CRD only so clusters
// that still hold such objects can be read and converted (`kubectl metal migrate`); no controller
// of ours acts on it. Fields and enums are upstream's, unchanged: `policy` is a free string there.
import { Type, type Static } from '@sinclair/typebox';
import { defineKind, KnownString, Int32, LocalObjectReference, type ObjectOf } from '../../schema/index.js';
import { METAL_GROUP, METAL_VERSION } from '../../metal/v1alpha1/group.js';

export const LegacyMaintenanceStates = ['Pending', 'InMaintenance', 'Failed'] as const;
export type LegacyMaintenanceState = (typeof LegacyMaintenanceStates)[number];

/** Upstream read the reason from this annotation (its printer column used metal.ironcore.dev/reason). */
export const LEGACY_REASON_ANNOTATION = 'metal.ironcore.dev/maintenance-reason';
export const LEGACY_REASON_ANNOTATION_OLD = 'metal.ironcore.dev/reason';
/** The legacy controller's finalizer. */
export const LEGACY_MAINTENANCE_FINALIZER = 'metal.ironcore.dev/servermaintenance';

export const LegacyServerMaintenanceSpec = Type.Object({
  policy: Type.Optional(KnownString(['OwnerApproval', 'Enforced'] as const)),
  serverRef: LocalObjectReference({ description: 'The server to maintain.' }),
  serverPower: Type.Optional(
    KnownString(['On', 'Off'] as const, { description: 'Power during the maintenance.' }),
  ),
  serverBootConfigurationTemplate: Type.Optional(
    Type.Object({
      name: Type.String({ description: 'Name of the ServerBootConfiguration created from this template.' }),
      // Upstream's ServerBootConfigurationSpec, without the rules our own kind adds.
      spec: Type.Object({
        serverRef: LocalObjectReference(),
        image: Type.Optional(Type.String()),
        ignitionSecretRef: Type.Optional(LocalObjectReference()),
      }),
    }),
  ),
  priority: Type.Optional(Int32({ default: 0 })),
  locatorLED: Type.Optional(KnownString(['Unknown', 'Lit', 'Blinking', 'Off'] as const)),
});
export type LegacyServerMaintenanceSpec = Static<typeof LegacyServerMaintenanceSpec>;

export const LegacyServerMaintenanceKind = defineKind({
  group: METAL_GROUP,
  version: METAL_VERSION,
  kind: 'ServerMaintenance',
  plural: 'servermaintenances',
  // No short name: `sm` belongs to the maintenance.metal.ironcore.dev kind.
  categories: ['metal-legacy'],
  scope: 'Namespaced',
  description:
    'Legacy ServerMaintenance (metal-operator <= v0.7.0). Deprecated: convert with `kubectl metal migrate` to maintenance.metal.ironcore.dev.',
  body: {
    spec: LegacyServerMaintenanceSpec,
    status: Type.Optional(Type.Object({ state: Type.Optional(KnownString(LegacyMaintenanceStates)) })),
  },
  printerColumns: [
    { name: 'Server', type: 'string', jsonPath: '.spec.serverRef.name' },
    { name: 'Policy', type: 'string', jsonPath: '.spec.policy' },
    { name: 'BootConfiguration', type: 'string', jsonPath: '.spec.serverBootConfigurationTemplate.name' },
    {
      name: 'Reason',
      type: 'string',
      jsonPath: '.metadata.annotations.metal\\.ironcore\\.dev/maintenance-reason',
    },
    { name: 'State', type: 'string', jsonPath: '.status.state' },
    { name: 'Priority', type: 'integer', jsonPath: '.spec.priority' },
  ],
});
export type LegacyServerMaintenance = ObjectOf<typeof LegacyServerMaintenanceKind>;
