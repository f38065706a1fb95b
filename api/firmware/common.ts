// Types the BIOS (system.metal.ironcore.dev) and BMC (baseboard.metal.ironcore.dev) firmware kinds
// share, as upstream metal-maintenance-operator shares them in api/common_types.go. One definition
// here keeps the eight kinds from drifting apart.
import { Type, type Static } from '@sinclair/typebox';
import {
  StringEnum,
  KnownString,
  Int32,
  Int64,
  Time,
  StringMap,
  Conditions,
  ObjectReference,
  type CelRule,
} from '../schema/index.js';
import { LegacyPolicies } from '../maintenance/v1alpha1/servermaintenance.js';

/** Upstream values only; an unknown policy would be silently treated as OwnerApproval upstream. */
export const ServerMaintenancePolicy = () =>
  StringEnum(LegacyPolicies, {
    description:
      'Policy of the ServerMaintenance the controller requests: OwnerApproval waits for the claim owner, Enforced does not. Translated like ServerMaintenance.spec.policy.',
  });

/** Redfish: Force bypasses the vendor update policy (e.g. a downgrade). The only upstream value. */
export const UpdatePolicies = ['Force'] as const;
export type UpdatePolicy = (typeof UpdatePolicies)[number];

export const RetryPolicy = Type.Object(
  {
    maxAttempts: Type.Optional(
      Int32({
        minimum: 0,
        maximum: 10,
        description: 'Automatic retries after a failure; 0 means none. Unset: the controller default.',
      }),
    ),
  },
  { description: 'Automatic retries on transient failures.' },
);
export type RetryPolicy = Static<typeof RetryPolicy>;

export const SettingsFlowItem = Type.Object({
  name: Type.String({
    minLength: 1,
    maxLength: 1000,
    description: 'Name of the step; unique within the flow.',
  }),
  settings: Type.Optional(
    StringMap({ description: 'Attributes to set in this step, as attribute name to value.' }),
  ),
  priority: Int32({
    minimum: 1,
    maximum: 2147483645,
    description: 'Order of the step: lower numbers are applied first.',
  }),
});
export type SettingsFlowItem = Static<typeof SettingsFlowItem>;

const NamespacedKeySelector = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 253, description: 'Name of the ConfigMap or Secret.' }),
  namespace: Type.String({
    minLength: 1,
    maxLength: 63,
    description: 'Namespace of the ConfigMap or Secret.',
  }),
  key: Type.String({ minLength: 1, maxLength: 253, description: 'Key within it.' }),
});

export const VariableSource = Type.Object(
  {
    fieldRef: Type.Optional(
      Type.Object(
        {
          fieldPath: Type.String({
            minLength: 1,
            maxLength: 256,
            description: 'Path of a string field on this object, e.g. spec.bmcRef.name.',
          }),
        },
        { description: 'A string field of the settings object itself.' },
      ),
    ),
    objectFieldRef: Type.Optional(
      Type.Object(
        {
          // Upstream keeps the selector generic and limits the kind with CEL on the parent; an enum
          // says the same, names the field and lets the runtime validator catch it too.
          kind: StringEnum(['BMC'] as const, { description: 'Kind of the object to read; only BMC.' }),
          name: Type.String({
            minLength: 1,
            maxLength: 253,
            description: 'Name of the object; $(VAR) expands earlier variables.',
          }),
          fieldPath: Type.String({
            minLength: 1,
            maxLength: 256,
            description:
              'Dot path on that object; brackets for keys with dots, e.g. metadata.labels[example.com/rack].',
          }),
        },
        { description: 'A field of a named cluster-scoped object.' },
      ),
    ),
    configMapKeyRef: Type.Optional(NamespacedKeySelector),
    secretKeyRef: Type.Optional(NamespacedKeySelector),
  },
  {
    description: 'Exactly one source of the value.',
    'x-kubernetes-validations': [
      {
        rule: '(has(self.fieldRef) ? 1 : 0) + (has(self.objectFieldRef) ? 1 : 0) + (has(self.configMapKeyRef) ? 1 : 0) + (has(self.secretKeyRef) ? 1 : 0) == 1',
        message: 'exactly one of fieldRef, objectFieldRef, configMapKeyRef, or secretKeyRef must be provided',
      },
    ],
  },
);

export const Variable = Type.Object({
  key: Type.String({
    minLength: 1,
    maxLength: 63,
    description: 'Name of the variable, used as $(key) in settings.',
  }),
  valueFrom: VariableSource,
});
export type Variable = Static<typeof Variable>;

/** CEL on any object carrying the settings-template fields (a Settings spec or a Set's template). */
export const settingsTemplateRules: CelRule[] = [
  {
    rule: '!has(self.variables) || self.variables.all(v, self.variables.filter(w, w.key == v.key).size() == 1)',
    message: 'variable keys must be unique',
    fieldPath: '.variables',
  },
  {
    // Upstream fails the object at runtime on duplicate step names; refusing it at admission is kinder.
    rule: '!has(self.settingsFlow) || self.settingsFlow.all(a, self.settingsFlow.exists_one(b, b.name == a.name))',
    message: 'settingsFlow names must be unique',
    fieldPath: '.settingsFlow',
  },
];

/** A firmware or software version; upstream requires it non-empty (CEL), here the schema does. */
const FirmwareVersion = (description: string) => Type.String({ minLength: 1, description });

/** The fields of upstream SettingsTemplate, inlined into BIOS/BMC settings and their Sets' templates. */
export const settingsTemplateFields = (target: 'BIOS' | 'BMC') => ({
  version: FirmwareVersion(`${target} version these settings apply to.`),
  settingsFlow: Type.Optional(
    Type.Array(SettingsFlowItem, {
      maxItems: 64,
      description: 'Steps applied in priority order; each may need its own reboot.',
    }),
  ),
  retryPolicy: Type.Optional(RetryPolicy),
  variables: Type.Optional(
    Type.Array(Variable, {
      maxItems: 64,
      description: 'Variables for $(key) substitution in settings values.',
    }),
  ),
  serverMaintenancePolicy: Type.Optional(ServerMaintenancePolicy()),
});

const SecretReference = Type.Object(
  {
    name: Type.Optional(Type.String({ description: 'Name of the Secret.' })),
    namespace: Type.Optional(Type.String({ description: 'Namespace of the Secret.' })),
  },
  { 'x-kubernetes-map-type': 'atomic', description: 'Secret with credentials for the image URI.' },
);

export const ImageSpec = Type.Object(
  {
    URI: Type.String({ minLength: 1, description: 'URI of the firmware image to install.' }),
    transferProtocol: Type.Optional(
      KnownString(['HTTP', 'HTTPS', 'FTP', 'SFTP', 'SCP', 'TFTP', 'CIFS', 'NFS', 'OEM'] as const, {
        description: 'Redfish TransferProtocol the BMC uses to fetch the image; unset: derived from the URI.',
      }),
    ),
    secretRef: Type.Optional(SecretReference),
  },
  { description: 'Where the BMC fetches the firmware image.' },
);
export type ImageSpec = Static<typeof ImageSpec>;

/** The fields of upstream BIOSVersionTemplate / BMCVersionTemplate. */
export const versionTemplateFields = (target: 'BIOS' | 'BMC') => ({
  version: FirmwareVersion(`${target} version to upgrade to.`),
  updatePolicy: Type.Optional(
    StringEnum(UpdatePolicies, {
      description: 'Force bypasses the vendor update policy (e.g. to downgrade).',
    }),
  ),
  image: ImageSpec,
  serverMaintenancePolicy: Type.Optional(ServerMaintenancePolicy()),
  retryPolicy: Type.Optional(RetryPolicy),
});

/** IEP-0016's spec.driftPolicy of a firmware child; unset is active. */
export const ChildDriftPolicies = ['Observe', 'Suspend'] as const;

/**
 * Written by the MaintenancePipelineRun that owns the child, never by hand: unset reconciles the
 * hardware; Observe only watches it (a completed child that finds it changed goes back to Pending,
 * requesting no maintenance); Suspend freezes the child (a superseded version hop).
 */
export const ChildDriftPolicy = () =>
  Type.Optional(
    StringEnum(ChildDriftPolicies, {
      description:
        'Set by the owning MaintenancePipelineRun: Observe detects drift only, Suspend freezes; unset: active.',
    }),
  );

/** Reference to the maintenance.metal.ironcore.dev ServerMaintenance the controller requested. */
export const ServerMaintenanceRef = (description: string) => ObjectReference({ description });

/** Redfish TaskState and Health, kept lenient: the BMC reports them and vendors differ. */
export const TaskStates = [
  'New',
  'Starting',
  'Running',
  'Suspended',
  'Interrupted',
  'Pending',
  'Stopping',
  'Completed',
  'Killed',
  'Exception',
  'Service',
  'Cancelling',
  'Cancelled',
] as const;

export const Task = Type.Object(
  {
    URI: Type.Optional(
      Type.String({ description: 'URI of the Redfish task the BMC created for the upgrade.' }),
    ),
    state: Type.Optional(KnownString(TaskStates, { description: 'Redfish TaskState.' })),
    status: Type.Optional(
      KnownString(['OK', 'Warning', 'Critical'] as const, { description: 'Redfish Health.' }),
    ),
    percentageComplete: Type.Optional(Int32({ description: 'Progress reported by the BMC.' })),
  },
  { description: 'The upgrade task on the BMC.' },
);
export type Task = Static<typeof Task>;

export const SettingsStates = ['Pending', 'InProgress', 'Applied', 'Failed'] as const;
export type SettingsState = (typeof SettingsStates)[number];

export const VersionStates = ['Pending', 'InProgress', 'Completed', 'Failed'] as const;
export type VersionState = (typeof VersionStates)[number];

/** Status fields every per-server firmware kind carries. */
export const firmwareStatusFields = () => ({
  failedAttempts: Type.Optional(Int32({ description: 'Automatic retries made after failures.' })),
  observedGeneration: Type.Optional(Int64({ description: 'Generation the controller last acted on.' })),
  conditions: Type.Optional(Conditions()),
});

export const LastAppliedTime = () => Time({ description: 'When settings were last applied successfully.' });
