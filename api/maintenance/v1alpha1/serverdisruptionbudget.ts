// ServerDisruptionBudget (cluster-scoped): a fleet limit on servers taken at once, optionally per
// topology domain (e.g. per rack). Room is taken by the admission webhook with a compare-and-swap on
// status.grants, the way the API server grants pod evictions against a PodDisruptionBudget.
import { Type, type Static } from '@sinclair/typebox';
import { defineKind, LabelSelector, type ObjectOf } from '../../schema/index.js';
import { qualifiedName, QUALIFIED_NAME_MAX } from '../../schema/checks.js';
import { MAINTENANCE_GROUP, MAINTENANCE_VERSION } from './group.js';
import { BudgetStatus, MaxUnavailable } from './disruptionbudget-common.js';

export const ServerDisruptionBudgetSpec = Type.Object({
  serverSelector: LabelSelector({
    description: 'Servers this budget covers. An empty selector covers every server.',
  }),
  maxUnavailable: MaxUnavailable(),
  topologyKey: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: QUALIFIED_NAME_MAX,
      description:
        'Server label that splits the fleet into domains (e.g. a rack); the limit then applies per domain.',
      'x-kubernetes-validations': [qualifiedName('topologyKey (a label key)')],
    }),
  ),
  paused: Type.Optional(Type.Boolean({ default: false, description: 'Grant nothing while true.' })),
});
export type ServerDisruptionBudgetSpec = Static<typeof ServerDisruptionBudgetSpec>;

export const ServerDisruptionBudgetKind = defineKind({
  group: MAINTENANCE_GROUP,
  version: MAINTENANCE_VERSION,
  kind: 'ServerDisruptionBudget',
  plural: 'serverdisruptionbudgets',
  shortNames: ['sdb'],
  categories: ['metal', 'maintenance'],
  scope: 'Cluster',
  description: 'ServerDisruptionBudget caps how many selected servers may be in maintenance at once.',
  body: { spec: ServerDisruptionBudgetSpec, status: Type.Optional(BudgetStatus) },
  printerColumns: [
    { name: 'MaxUnavailable', type: 'string', jsonPath: '.spec.maxUnavailable' },
    { name: 'Topology', type: 'string', jsonPath: '.spec.topologyKey' },
    { name: 'Expected', type: 'integer', jsonPath: '.status.expected' },
    { name: 'Unavailable', type: 'integer', jsonPath: '.status.unavailable' },
    { name: 'Allowed', type: 'integer', jsonPath: '.status.disruptionsAllowed' },
    { name: 'Paused', type: 'boolean', jsonPath: '.spec.paused' },
  ],
});
export type ServerDisruptionBudget = ObjectOf<typeof ServerDisruptionBudgetKind>;
