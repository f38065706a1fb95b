// MaintenancePipeline (maintenance.metal.ironcore.dev/v1alpha1, cluster-scoped, authored by the
// operator): the whole firmware and settings lifecycle of a fleet as an ordered list of stages, after
// IronCore's draft IEP-0016. The pipeline controller splits the selected servers by BMC into
// MaintenancePipelineRuns (maintenancepipelinerun.ts) and executes the stages through the firmware
// kinds, holding each server in one ServerMaintenance for the whole run.
import { Type, type Static } from '@sinclair/typebox';
import {
  defineKind,
  StringEnum,
  Int32,
  Int64,
  Conditions,
  LabelSelector,
  MapList,
  type ObjectOf,
} from '../../schema/index.js';
import { check } from '../../schema/checks.js';
import {
  ImageSpec,
  RetryPolicy,
  ServerMaintenancePolicy,
  SettingsFlowItem,
  UpdatePolicies,
  Variable,
} from '../../firmware/common.js';
import { MAINTENANCE_GROUP, MAINTENANCE_VERSION } from './group.js';

export const StageKinds = ['BMCSettings', 'BMCVersion', 'BIOSSettings', 'BIOSVersion'] as const;
export type StageKind = (typeof StageKinds)[number];
/** Kinds whose child is stamped once per BMC; the others once per server. */
export const BMC_SCOPED_KINDS: readonly StageKind[] = ['BMCSettings', 'BMCVersion'];
export const VERSION_KINDS: readonly StageKind[] = ['BMCVersion', 'BIOSVersion'];

export const DriftPolicies = ['Reconcile', 'Observe'] as const;
export type DriftPolicy = (typeof DriftPolicies)[number];

export const MaintenanceTaintEffects = ['NoClaim', 'Evict'] as const;
export type MaintenanceTaintEffect = (typeof MaintenanceTaintEffects)[number];

/** The most stages one pipeline holds (keeps the per-stage CEL within the cost budget). */
export const STAGES_MAX = 32;

/**
 * The spec of the stage's child without its target (serverRef/bmcRef) and maintenance refs: the
 * union of the settings and version templates, `kind` says which half applies (rules below).
 */
export const StageTemplate = Type.Object(
  {
    version: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'Version stages: the hop target. Settings stages: the version the settings apply to; unset: hydrated from the hardware when the child is stamped (and again on drift recovery).',
      }),
    ),
    // Map lists (keyed like the CEL uniqueness rules of the firmware kinds) keep 32 stages within
    // the CEL cost budget: the API server refuses a duplicate name or key by itself.
    settingsFlow: Type.Optional(
      MapList(SettingsFlowItem, ['name'], {
        maxItems: 64,
        description: 'Settings stages: steps applied in priority order; names unique.',
      }),
    ),
    variables: Type.Optional(
      MapList(Variable, ['key'], { maxItems: 64, description: 'Settings stages: $(key) substitutions.' }),
    ),
    image: Type.Optional(ImageSpec),
    updatePolicy: Type.Optional(
      StringEnum(UpdatePolicies, { description: 'Version stages: Force allows a downgrade.' }),
    ),
    serverMaintenancePolicy: Type.Optional(ServerMaintenancePolicy()),
    retryPolicy: Type.Optional(RetryPolicy),
  },
  { description: "The child's spec without its target and maintenance references." },
);
export type StageTemplate = Static<typeof StageTemplate>;

type StageLike = { kind?: unknown; template?: Record<string, unknown> };
const asStage = (self: unknown): StageLike => (typeof self === 'object' && self !== null ? self : {});
const isVersionKind = (k: unknown) => k === 'BMCVersion' || k === 'BIOSVersion';
const isSettingsKind = (k: unknown) => k === 'BMCSettings' || k === 'BIOSSettings';
const has = (self: unknown, field: string) => asStage(self).template?.[field] !== undefined;
const kindShown = {
  cel: `'"' + self.kind + '"'`,
  js: (self: unknown) => `"${String(asStage(self).kind)}"`,
};

/** Which template fields a stage kind needs and which it must not carry. */
const stageRules = [
  ...(['version', 'image'] as const).map((field) =>
    check({
      rule: `!(self.kind in ['BMCVersion', 'BIOSVersion']) || has(self.template.${field})`,
      holds: (self) => !isVersionKind(asStage(self).kind) || has(self, field),
      message: `a stage of kind {value} needs template.${field}: a version stage is one hop to one image`,
      shown: kindShown,
      fieldPath: `.template.${field}`,
      reason: 'FieldValueRequired',
    }),
  ),
  ...(['settingsFlow', 'variables'] as const).map((field) =>
    check({
      rule: `!(self.kind in ['BMCVersion', 'BIOSVersion']) || !has(self.template.${field})`,
      holds: (self) => !isVersionKind(asStage(self).kind) || !has(self, field),
      message: `a stage of kind {value} takes no template.${field}: settings belong in a BMCSettings or BIOSSettings stage`,
      shown: kindShown,
      fieldPath: `.template.${field}`,
    }),
  ),
  ...(['image', 'updatePolicy'] as const).map((field) =>
    check({
      rule: `!(self.kind in ['BMCSettings', 'BIOSSettings']) || !has(self.template.${field})`,
      holds: (self) => !isSettingsKind(asStage(self).kind) || !has(self, field),
      message: `a stage of kind {value} takes no template.${field}: a firmware image belongs in a BMCVersion or BIOSVersion stage`,
      shown: kindShown,
      fieldPath: `.template.${field}`,
    }),
  ),
];

export const PipelineStage = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 63,
      pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
      description: 'Name of the stage, unique in the pipeline (a DNS label: it names the children).',
    }),
    kind: StringEnum(StageKinds, {
      description: 'Firmware kind the stage stamps: BMC kinds once per BMC, BIOS kinds once per server.',
    }),
    template: StageTemplate,
  },
  { 'x-kubernetes-validations': stageRules },
);
export type PipelineStage = Static<typeof PipelineStage>;

export const MaintenancePipelineSpec = Type.Object({
  serverSelector: LabelSelector({
    description: 'Servers the pipeline maintains; one run per BMC among them. Empty selects every server.',
  }),
  stages: MapList(PipelineStage, ['name'], {
    minItems: 1,
    maxItems: STAGES_MAX,
    description:
      'Executed strictly in list order within a run. Edits reach a run at its next stage boundary (docs/pipeline.md).',
  }),
  maxConcurrent: Type.Optional(
    Int32({
      minimum: 1,
      maximum: 10000,
      default: 1,
      description: 'Runs (BMCs) in progress at once; the disruption budgets still bound every server.',
    }),
  ),
  driftPolicy: Type.Optional(
    StringEnum(DriftPolicies, {
      default: 'Reconcile',
      description:
        'After completion, Reconcile re-executes from the earliest drifted stage, only for drifted servers; Observe only reports DriftDetected.',
    }),
  ),
  maintenanceTaintEffect: Type.Optional(
    StringEnum(MaintenanceTaintEffects, {
      default: 'NoClaim',
      description:
        "Taint a run holds on its servers: NoClaim keeps new claims off (upstream NoBind); Evict also asks a bound claim's consumer to leave (upstream Evict).",
    }),
  ),
  paused: Type.Optional(
    Type.Boolean({ default: false, description: 'Start no run and no stage while true.' }),
  ),
});
export type MaintenancePipelineSpec = Static<typeof MaintenancePipelineSpec>;

export const MaintenancePipelineStatus = Type.Object({
  observedGeneration: Type.Optional(Int64({ description: 'Generation the controller last planned.' })),
  selectedServers: Type.Optional(Int32({ description: 'Servers the selector selects.' })),
  runs: Type.Optional(Int32({ description: 'MaintenancePipelineRuns, one per BMC.' })),
  pendingRuns: Type.Optional(Int32({ description: 'Of those, waiting for a maxConcurrent slot.' })),
  activeRuns: Type.Optional(Int32({ description: 'Of those, in progress.' })),
  completedRuns: Type.Optional(Int32({ description: 'Of those, completed.' })),
  failedRuns: Type.Optional(Int32({ description: 'Of those, failed.' })),
  conditions: Type.Optional(Conditions()),
});

export const MaintenancePipelineKind = defineKind({
  group: MAINTENANCE_GROUP,
  version: MAINTENANCE_VERSION,
  kind: 'MaintenancePipeline',
  plural: 'maintenancepipelines',
  shortNames: ['mpl'],
  categories: ['metal', 'maintenance'],
  scope: 'Cluster',
  description:
    'MaintenancePipeline executes ordered firmware and settings stages on a fleet, one run per BMC, each holding its servers in one maintenance.',
  body: { spec: MaintenancePipelineSpec, status: Type.Optional(MaintenancePipelineStatus) },
  printerColumns: [
    { name: 'Servers', type: 'integer', jsonPath: '.status.selectedServers' },
    { name: 'Runs', type: 'integer', jsonPath: '.status.runs' },
    { name: 'Active', type: 'integer', jsonPath: '.status.activeRuns' },
    { name: 'Completed', type: 'integer', jsonPath: '.status.completedRuns' },
    { name: 'Failed', type: 'integer', jsonPath: '.status.failedRuns' },
    { name: 'Taint', type: 'string', jsonPath: '.spec.maintenanceTaintEffect', priority: 100 },
    { name: 'Drift', type: 'string', jsonPath: '.spec.driftPolicy', priority: 100 },
  ],
});
export type MaintenancePipeline = ObjectOf<typeof MaintenancePipelineKind>;
