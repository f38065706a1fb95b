// MaintenancePipelineRun (maintenance.metal.ironcore.dev/v1alpha1, cluster-scoped, written only by
// the pipeline controller): one BMC of a MaintenancePipeline and the servers behind it. It owns the
// firmware children it stamps and the one ServerMaintenance per server that holds the server for the
// run's whole duration (contract/pipeline/ decides; docs/pipeline.md explains).
import { Type, type Static } from '@sinclair/typebox';
import {
  defineKind,
  StringEnum,
  Int32,
  Int64,
  Time,
  Conditions,
  LocalObjectReference,
  MapList,
  ObjectReference,
  type ObjectOf,
} from '../../schema/index.js';
import { StageKinds } from './maintenancepipeline.js';
import { MAINTENANCE_GROUP, MAINTENANCE_VERSION } from './group.js';

export const StagePhases = ['Pending', 'InProgress', 'Completed', 'Failed'] as const;
export type StagePhase = (typeof StagePhases)[number];

/** Pending: waiting for a maxConcurrent slot. Stopping: the pipeline is gone, undoing at a safe point. */
export const RunPhases = ['Pending', 'InProgress', 'Completed', 'Failed', 'Stopping'] as const;
export type RunPhase = (typeof RunPhases)[number];

export const ChildRef = Type.Object(
  {
    kind: StringEnum(StageKinds, { description: 'Kind of the child.' }),
    name: Type.String({ minLength: 1, description: 'Name of the child (cluster-scoped).' }),
  },
  { 'x-kubernetes-map-type': 'atomic', description: 'The firmware object the run stamped.' },
);
export type ChildRef = Static<typeof ChildRef>;

export const ServerStageStatus = Type.Object({
  server: Type.String({ minLength: 1, description: 'Name of the server.' }),
  phase: StringEnum(StagePhases, { description: "Phase of this server's child in the stage." }),
  childRef: Type.Optional(ChildRef),
  version: Type.Optional(
    Type.String({ description: 'Version hydrated into a version-agnostic settings child.' }),
  ),
  reached: Type.Optional(
    Type.Boolean({ description: 'Completed without a child: the hardware was already at or past the hop.' }),
  ),
  message: Type.Optional(Type.String({ maxLength: 1024, description: 'Why it failed, when it did.' })),
});
export type ServerStageStatus = Static<typeof ServerStageStatus>;

export const RunStageStatus = Type.Object({
  name: Type.String({ minLength: 1, description: 'Name of the pipeline stage.' }),
  kind: StringEnum(StageKinds),
  phase: StringEnum(StagePhases, {
    description:
      'BMC stages: the child. Server stages: Failed if any server failed, else InProgress if any progresses, else Pending if any has not started, else Completed.',
  }),
  templateHash: Type.Optional(
    Type.String({
      description: 'Hash of the stage (kind and template) the run executes; an edit changes it.',
    }),
  ),
  childRef: Type.Optional(ChildRef),
  version: Type.Optional(Type.String({ description: 'Version hydrated into a settings child.' })),
  reached: Type.Optional(
    Type.Boolean({ description: 'Completed without a child: the BMC was already at or past the hop.' }),
  ),
  servers: Type.Optional(
    MapList(ServerStageStatus, ['server'], {
      description: 'Server-scoped stages: one entry per server of the run.',
      maxItems: 256,
    }),
  ),
});
export type RunStageStatus = Static<typeof RunStageStatus>;

export const RunServerStatus = Type.Object({
  server: Type.String({ minLength: 1, description: 'Name of the server.' }),
  maintenanceRef: Type.Optional(
    ObjectReference({
      description: 'The one ServerMaintenance that holds the server for the whole run.',
    }),
  ),
  maintenanceState: Type.Optional(
    Type.String({ description: 'That maintenance status.state, as last seen.' }),
  ),
  tainted: Type.Optional(Type.Boolean({ description: "Whether the run's taint is on the server." })),
});
export type RunServerStatus = Static<typeof RunServerStatus>;

export const MaintenancePipelineRunSpec = Type.Object({
  pipelineRef: LocalObjectReference({
    description: 'The MaintenancePipeline this run belongs to.',
    rules: [{ rule: 'self == oldSelf', message: 'pipelineRef is immutable' }],
  }),
  bmcRef: LocalObjectReference({
    description: 'The BMC of every server of the run.',
    rules: [
      { rule: "self.name != ''", message: 'bmcRef.name must not be empty' },
      { rule: 'self == oldSelf', message: 'bmcRef is immutable' },
    ],
  }),
  serverRefs: MapList(LocalObjectReference(), ['name'], {
    minItems: 1,
    maxItems: 256,
    description: 'The selected servers behind the BMC.',
  }),
});
export type MaintenancePipelineRunSpec = Static<typeof MaintenancePipelineRunSpec>;

export const MaintenancePipelineRunStatus = Type.Object({
  phase: Type.Optional(StringEnum(RunPhases, { description: 'Phase of the run.' })),
  observedPipelineGeneration: Type.Optional(
    Int64({ description: 'Pipeline generation whose stages the run executes.' }),
  ),
  totalStages: Type.Optional(Int32()),
  pendingStages: Type.Optional(Int32()),
  activeStages: Type.Optional(Int32()),
  completedStages: Type.Optional(Int32()),
  failedStages: Type.Optional(Int32()),
  startedAt: Type.Optional(Time({ description: 'When the run took its servers (maintenances, taint).' })),
  completedAt: Type.Optional(Time({ description: 'When the run released its servers.' })),
  stages: Type.Optional(MapList(RunStageStatus, ['name'], { maxItems: 32 })),
  servers: Type.Optional(
    MapList(RunServerStatus, ['server'], {
      maxItems: 256,
      description: 'What the run holds per server: its maintenance and its taint.',
    }),
  ),
  conditions: Type.Optional(Conditions()),
});
export type MaintenancePipelineRunStatus = Static<typeof MaintenancePipelineRunStatus>;

export const MaintenancePipelineRunKind = defineKind({
  group: MAINTENANCE_GROUP,
  version: MAINTENANCE_VERSION,
  kind: 'MaintenancePipelineRun',
  plural: 'maintenancepipelineruns',
  shortNames: ['mplr'],
  categories: ['metal', 'maintenance'],
  scope: 'Cluster',
  description:
    'MaintenancePipelineRun executes a pipeline on one BMC and its servers; written by the pipeline controller.',
  body: { spec: MaintenancePipelineRunSpec, status: Type.Optional(MaintenancePipelineRunStatus) },
  printerColumns: [
    { name: 'Pipeline', type: 'string', jsonPath: '.spec.pipelineRef.name' },
    { name: 'BMC', type: 'string', jsonPath: '.spec.bmcRef.name' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Total', type: 'integer', jsonPath: '.status.totalStages' },
    { name: 'Completed', type: 'integer', jsonPath: '.status.completedStages' },
    { name: 'Failed', type: 'integer', jsonPath: '.status.failedStages' },
    { name: 'Servers', type: 'string', jsonPath: '.spec.serverRefs[*].name', priority: 100 },
  ],
});
export type MaintenancePipelineRun = ObjectOf<typeof MaintenancePipelineRunKind>;
