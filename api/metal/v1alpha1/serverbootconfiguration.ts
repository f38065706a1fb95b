// ServerBootConfiguration (metal.ironcore.dev/v1alpha1): what a server should boot (image and
// ignition), written by metal-operator for a claim and served by boot-operator, which reports state.
import { Type, type Static } from '@sinclair/typebox';
import {
  defineKind,
  KnownString,
  Conditions,
  LocalObjectReference,
  type ObjectOf,
} from '../../schema/index.js';
import { METAL_GROUP, METAL_VERSION } from './group.js';

export const ServerBootConfigurationStates = ['Pending', 'Ready', 'Error'] as const;
export type ServerBootConfigurationState = (typeof ServerBootConfigurationStates)[number];

export const ServerBootConfigurationSpec = Type.Object({
  serverRef: LocalObjectReference({
    description: 'Server this configuration boots.',
    // Upstream does not enforce this; metal-operator never re-points one, and a boot configuration
    // re-pointed mid-boot would hand one server's ignition to another.
    rules: [
      { rule: "self.name != ''", message: 'serverRef.name must not be empty' },
      { rule: 'self == oldSelf', message: 'serverRef is immutable' },
    ],
  }),
  image: Type.Optional(Type.String({ description: 'OCI image reference of the OS to boot.' })),
  ignitionSecretRef: Type.Optional(
    LocalObjectReference({ description: 'Secret (same namespace) with the ignition under key ignition.' }),
  ),
});
export type ServerBootConfigurationSpec = Static<typeof ServerBootConfigurationSpec>;

export const ServerBootConfigurationStatus = Type.Object({
  state: Type.Optional(
    KnownString(ServerBootConfigurationStates, { description: 'Whether the boot is served.' }),
  ),
  conditions: Type.Optional(Conditions()),
});

export const ServerBootConfigurationKind = defineKind({
  group: METAL_GROUP,
  version: METAL_VERSION,
  kind: 'ServerBootConfiguration',
  plural: 'serverbootconfigurations',
  shortNames: ['sbc'],
  categories: ['metal'],
  scope: 'Namespaced',
  description: 'ServerBootConfiguration is the image and ignition one server boots.',
  body: { spec: ServerBootConfigurationSpec, status: Type.Optional(ServerBootConfigurationStatus) },
  printerColumns: [
    { name: 'Server', type: 'string', jsonPath: '.spec.serverRef.name' },
    { name: 'State', type: 'string', jsonPath: '.status.state' },
    { name: 'Image', type: 'string', jsonPath: '.spec.image' },
    { name: 'Ignition', type: 'string', jsonPath: '.spec.ignitionSecretRef.name', priority: 100 },
  ],
});
export type ServerBootConfiguration = ObjectOf<typeof ServerBootConfigurationKind>;
