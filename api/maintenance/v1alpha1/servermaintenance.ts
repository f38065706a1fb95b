// ServerMaintenance (maintenance.metal.ironcore.dev/v1alpha1): a request to take one server out of
// service. A superset of upstream metal-maintenance-operator's kind: an upstream-shaped object
// (serverRef, policy, priority) applies unchanged; policy is deprecated and translated into
// spec.approval by the admission webhook.
import { Type, type Static } from '@sinclair/typebox';
import {
  defineKind,
  StringEnum,
  KnownString,
  Int32,
  Time,
  Duration,
  Conditions,
  LocalObjectReference,
  MapList,
  type ObjectOf,
} from '../../schema/index.js';
import { MAINTENANCE_GROUP, MAINTENANCE_VERSION } from './group.js';
import { bootImageRules, IMAGE_MAX } from './boot-image.js';
import { DrainStatus } from './drain-status.js';

/** Highest priority: the top of PriorityClass's user range (HighestUserDefinablePriority). */
export const PRIORITY_MAX = 1_000_000_000;

export const MaintenanceReasons = [
  'FirmwareUpdate',
  'SettingsChange',
  'HardwareRepair',
  'Diagnostics',
  'Sanitization',
  'SecurityPatch',
  'Decommission',
  'Other',
] as const;
export type MaintenanceReason = (typeof MaintenanceReasons)[number];

/** Urgency class; the policy maps each class to notice, deadline and approval defaults. */
export const MaintenanceClasses = ['Planned', 'Urgent', 'Emergency'] as const;
export type MaintenanceClass = (typeof MaintenanceClasses)[number];

export const MaintenancePhases = [
  'Pending',
  'Announced',
  'Approved',
  'InMaintenance',
  'Completed',
  'Failed',
] as const;
export type MaintenancePhase = (typeof MaintenancePhases)[number];

export const LegacyPolicies = ['OwnerApproval', 'Enforced'] as const;
export type LegacyPolicy = (typeof LegacyPolicies)[number];

export const BootMethods = ['VirtualMedia', 'UefiHttp', 'Pxe'] as const;
export type BootMethod = (typeof BootMethods)[number];

export const ApprovalRequirements = Type.Object(
  {
    required: Type.Optional(
      Type.Boolean({
        description:
          'Whether the claim owner must approve. Unset: the policy default for the class. Ignored for unclaimed servers.',
      }),
    ),
    notBefore: Type.Optional(Time({ description: 'Earliest start, even when approved.' })),
    deadline: Type.Optional(
      Time({
        description:
          'When approval is no longer needed; unset: announcedAt + the policy deadline for the class.',
      }),
    ),
  },
  {
    'x-kubernetes-validations': [
      {
        rule: '!has(self.notBefore) || !has(self.deadline) || timestamp(self.deadline) >= timestamp(self.notBefore)',
        message: 'deadline must not be before notBefore',
        fieldPath: '.deadline',
      },
    ],
  },
);
export type ApprovalRequirements = Static<typeof ApprovalRequirements>;

export const MaintenanceBootImage = Type.Object(
  {
    image: Type.String({
      minLength: 1,
      maxLength: IMAGE_MAX,
      description:
        'http(s) URL of the image (ISO for VirtualMedia, EFI/UKI for UefiHttp), or an OCI image reference for Pxe.',
    }),
    method: StringEnum(BootMethods, { default: 'VirtualMedia' }),
  },
  { 'x-kubernetes-validations': bootImageRules() },
);

/** Most members a gang may have: a BMC's servers (a chassis holds a few dozen at most). */
export const GANG_SIZE_MAX = 256;

export const MaintenanceGang = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 63,
      pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
      description: 'Name of the gang, shared by its members in this namespace (a DNS label).',
    }),
    size: Int32({
      minimum: 1,
      maximum: GANG_SIZE_MAX,
      description: 'How many ServerMaintenances the gang has; none is admitted before all exist.',
    }),
  },
  {
    description:
      'Admitted together: no member enters InMaintenance unless every member can (a BMC behind which all servers must be down).',
    'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'gang is immutable' }],
  },
);
export type MaintenanceGang = Static<typeof MaintenanceGang>;

const specRules = [
  // The field's own rule fires only when both versions have it: adding or removing it is a spec rule.
  { rule: 'has(self.gang) == has(oldSelf.gang)', message: 'gang is immutable', fieldPath: '.gang' },
];

export const ServerMaintenanceSpec = Type.Object(
  {
    serverRef: LocalObjectReference({
      rules: [
        { rule: "self.name != ''", message: 'serverRef.name must not be empty' },
        { rule: 'self == oldSelf', message: 'serverRef is immutable' },
      ],
    }),
    reason: Type.Optional(StringEnum(MaintenanceReasons, { default: 'Other' })),
    class: Type.Optional(StringEnum(MaintenanceClasses, { default: 'Planned' })),
    description: Type.Optional(
      Type.String({ maxLength: 1024, description: 'Free text shown to the tenant.' }),
    ),
    priority: Type.Optional(
      Int32({
        default: 0,
        minimum: 0,
        maximum: PRIORITY_MAX,
        description: 'Higher runs first among maintenances of one server; 0 (the default) to 1000000000.',
      }),
    ),
    approval: Type.Optional(ApprovalRequirements),
    boot: Type.Optional(MaintenanceBootImage),
    maxDuration: Type.Optional(
      Duration({
        description: 'Fail the maintenance if it is InMaintenance longer than this; unset: policy.',
      }),
    ),
    locatorLED: Type.Optional(KnownString(['Unknown', 'Lit', 'Blinking', 'Off'] as const)),
    policy: Type.Optional(
      StringEnum(LegacyPolicies, {
        description: 'Deprecated: use approval.required. OwnerApproval = true, Enforced = false.',
      }),
    ),
    gang: Type.Optional(MaintenanceGang),
  },
  { 'x-kubernetes-validations': specRules },
);
export type ServerMaintenanceSpec = Static<typeof ServerMaintenanceSpec>;

export const BudgetRef = Type.Object({
  kind: StringEnum(['ServerDisruptionBudget', 'ServerClaimDisruptionBudget'] as const),
  name: Type.String(),
  namespace: Type.Optional(Type.String()),
  domain: Type.Optional(Type.String({ description: 'Topology domain the grant counts against.' })),
});
export type BudgetRef = Static<typeof BudgetRef>;

export const ServerMaintenanceStatus = Type.Object({
  state: Type.Optional(KnownString(MaintenancePhases)),
  observedGeneration: Type.Optional(Type.Integer({ format: 'int64' })),
  conditions: Type.Optional(Conditions()),
  announcedAt: Type.Optional(Time()),
  notBefore: Type.Optional(Time()),
  deadline: Type.Optional(Time({ description: 'Effective deadline: spec or policy.' })),
  approval: Type.Optional(
    Type.Object({
      source: StringEnum(['Owner', 'Standing', 'Deadline', 'Policy', 'NotRequired'] as const),
      approvedBy: Type.Optional(Type.String()),
      approvedAt: Type.Optional(Time()),
    }),
  ),
  grant: Type.Optional(
    Type.Object({
      grantedAt: Time(),
      budgets: Type.Optional(Type.Array(BudgetRef)),
    }),
  ),
  startedAt: Type.Optional(Time({ description: 'When the maintenance entered InMaintenance.' })),
  completedAt: Type.Optional(Time()),
  message: Type.Optional(Type.String()),
  queuePosition: Type.Optional(Int32({ minimum: 0, description: '0 when next (or active) on its server.' })),
  drain: Type.Optional(DrainStatus),
});
export type ServerMaintenanceStatus = Static<typeof ServerMaintenanceStatus>;

export const ServerMaintenanceKind = defineKind({
  group: MAINTENANCE_GROUP,
  version: MAINTENANCE_VERSION,
  kind: 'ServerMaintenance',
  plural: 'servermaintenances',
  shortNames: ['sm'],
  categories: ['metal', 'maintenance'],
  scope: 'Namespaced',
  description: 'ServerMaintenance requests that one server be taken out of service. Deleting it means done.',
  body: { spec: ServerMaintenanceSpec, status: Type.Optional(ServerMaintenanceStatus) },
  printerColumns: [
    { name: 'Server', type: 'string', jsonPath: '.spec.serverRef.name' },
    { name: 'State', type: 'string', jsonPath: '.status.state' },
    { name: 'Reason', type: 'string', jsonPath: '.spec.reason' },
    { name: 'Class', type: 'string', jsonPath: '.spec.class' },
    { name: 'Priority', type: 'integer', jsonPath: '.spec.priority' },
    { name: 'Deadline', type: 'date', jsonPath: '.status.deadline', priority: 100 },
    { name: 'Approval', type: 'string', jsonPath: '.status.approval.source', priority: 100 },
    { name: 'Policy', type: 'string', jsonPath: '.spec.policy', priority: 100 },
  ],
});
export type ServerMaintenance = ObjectOf<typeof ServerMaintenanceKind>;

/** Grant ledger entry shared by both budget kinds (like PodDisruptionBudget.status.disruptedPods). */
export const LedgerEntry = Type.Object({
  maintenanceUID: Type.String(),
  maintenance: Type.Object({ namespace: Type.String(), name: Type.String() }),
  server: Type.String(),
  claim: Type.Optional(Type.Object({ namespace: Type.String(), name: Type.String() })),
  domain: Type.Optional(Type.String()),
  grantedAt: Time(),
});
export type LedgerEntry = Static<typeof LedgerEntry>;

export const Ledger = () =>
  MapList(LedgerEntry, ['maintenanceUID'], {
    maxItems: 2000,
    description:
      'Disruptions granted by the admission webhook, keyed by maintenance uid; expired by the budget controller.',
  });
