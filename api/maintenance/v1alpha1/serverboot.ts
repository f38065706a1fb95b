// ServerBoot (maintenance.metal.ironcore.dev/v1alpha1): the one controlled path to boot a server into
// a chosen image (maintenance OS, diagnostics, sanitization) over Redfish.
import { Type, type Static } from '@sinclair/typebox';
import {
  defineKind,
  StringEnum,
  KnownString,
  Time,
  Duration,
  Conditions,
  LocalObjectReference,
  type ObjectOf,
} from '../../schema/index.js';
import { MAINTENANCE_GROUP, MAINTENANCE_VERSION } from './group.js';
import { BootMethods } from './servermaintenance.js';
import { bootImageRules, IMAGE_MAX } from './boot-image.js';

export const ServerBootPhases = [
  'Pending',
  'PreparingMedia',
  'SettingOverride',
  'Resetting',
  'WaitingForPower',
  'Running',
  'Restoring',
  'Completed',
  'Failed',
] as const;
export type ServerBootPhase = (typeof ServerBootPhases)[number];

export const ServerBootSpec = Type.Object(
  {
    serverRef: LocalObjectReference({
      rules: [{ rule: 'self == oldSelf', message: 'serverRef is immutable' }],
    }),
    maintenanceRef: Type.Optional(
      LocalObjectReference({
        description:
          'ServerMaintenance (same namespace) this boot runs inside. Required when the server is claimed; the boot ends with it.',
        rules: [{ rule: 'self == oldSelf', message: 'maintenanceRef is immutable' }],
      }),
    ),
    method: StringEnum(BootMethods, {
      description: 'VirtualMedia, UefiHttp, or Pxe (via a ServerBootConfiguration).',
    }),
    // The form by method (bootImageRules, on the spec below) is checked at write time, as on
    // ServerMaintenance.spec.boot: an image no method can boot is refused naming the field, not failed at
    // Pending (controllers/boot still refuses one, InvalidSpec, should an older object carry it).
    image: Type.String({
      minLength: 1,
      maxLength: IMAGE_MAX,
      description: 'Image URL (ISO, EFI binary/UKI) or, for Pxe, an OCI image reference.',
    }),
    bootMode: Type.Optional(StringEnum(['UEFI', 'Legacy'] as const, { default: 'UEFI' })),
    pin: Type.Optional(
      Type.Boolean({
        default: true,
        description:
          'Keep the boot target on the image for every reboot until the boot ends (BMC-initiated reboots included).',
      }),
    ),
    restore: Type.Optional(
      Type.Boolean({ default: true, description: 'Restore the previous boot settings when the boot ends.' }),
    ),
    phaseTimeout: Type.Optional(
      Duration({ description: 'Timeout of each phase before the boot fails; unset: 10m.' }),
    ),
  },
  { 'x-kubernetes-validations': bootImageRules() },
);
export type ServerBootSpec = Static<typeof ServerBootSpec>;

/** A boot override as Redfish reports it (plus the virtual CD image, where one matters). */
const BootSettings = (description: string) =>
  Type.Object(
    {
      overrideEnabled: Type.Optional(Type.String()),
      overrideTarget: Type.Optional(Type.String()),
      overrideMode: Type.Optional(Type.String()),
      httpBootUri: Type.Optional(Type.String()),
      mediaImage: Type.Optional(Type.String({ description: 'Image in the virtual CD, if any.' })),
    },
    { description },
  );

export const ServerBootStatus = Type.Object({
  phase: Type.Optional(KnownString(ServerBootPhases)),
  observedGeneration: Type.Optional(Type.Integer({ format: 'int64' })),
  conditions: Type.Optional(Conditions()),
  phaseSince: Type.Optional(Time()),
  previousBoot: Type.Optional(
    BootSettings('Boot override settings (and virtual CD image) saved before the boot, restored after it.'),
  ),
  appliedBoot: Type.Optional(
    BootSettings(
      'Boot override the controller armed, after vendor aliases and a Continuous-to-Once fallback.',
    ),
  ),
  powerState: Type.Optional(
    Type.String({ description: 'PowerState of the system as the controller last observed it.' }),
  ),
  rearms: Type.Optional(
    Type.Integer({
      minimum: 0,
      description: 'Times the pinned override was re-armed after a reboot consumed or cleared it.',
    }),
  ),
  failedPhase: Type.Optional(KnownString(ServerBootPhases, { description: 'Phase the boot failed in.' })),
  notRestored: Type.Optional(
    Type.Array(Type.String(), {
      maxItems: 8,
      description:
        'What the controller changed and has not (yet) undone; absent once everything is restored.',
    }),
  ),
  bootCount: Type.Optional(
    Type.Integer({ minimum: 0, description: 'Boots into the image observed so far.' }),
  ),
  message: Type.Optional(Type.String()),
});

export type ServerBootStatus = Static<typeof ServerBootStatus>;

export const ServerBootKind = defineKind({
  group: MAINTENANCE_GROUP,
  version: MAINTENANCE_VERSION,
  kind: 'ServerBoot',
  plural: 'serverboots',
  shortNames: ['sboot'],
  categories: ['metal', 'maintenance'],
  scope: 'Namespaced',
  description: 'ServerBoot boots a server into a chosen image over Redfish and restores it afterwards.',
  body: { spec: ServerBootSpec, status: Type.Optional(ServerBootStatus) },
  printerColumns: [
    { name: 'Server', type: 'string', jsonPath: '.spec.serverRef.name' },
    { name: 'Method', type: 'string', jsonPath: '.spec.method' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Maintenance', type: 'string', jsonPath: '.spec.maintenanceRef.name' },
    { name: 'Image', type: 'string', jsonPath: '.spec.image', priority: 100 },
  ],
});
export type ServerBoot = ObjectOf<typeof ServerBootKind>;
