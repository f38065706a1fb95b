// ServerClaimDisruptionBudget (namespaced): a tenant's limit on how many of its claims' servers may be
// in maintenance at once, like a PodDisruptionBudget over claims.
import { Type, type Static } from '@sinclair/typebox';
import { defineKind, LabelSelector, type ObjectOf } from '../../schema/index.js';
import { MAINTENANCE_GROUP, MAINTENANCE_VERSION } from './group.js';
import { BudgetStatus, MaxUnavailable } from './disruptionbudget-common.js';

export const ServerClaimDisruptionBudgetSpec = Type.Object({
  claimSelector: LabelSelector({
    description: 'ServerClaims in this namespace the budget covers; empty selects all.',
  }),
  maxUnavailable: MaxUnavailable(),
  paused: Type.Optional(Type.Boolean({ default: false })),
});
export type ServerClaimDisruptionBudgetSpec = Static<typeof ServerClaimDisruptionBudgetSpec>;

export const ServerClaimDisruptionBudgetKind = defineKind({
  group: MAINTENANCE_GROUP,
  version: MAINTENANCE_VERSION,
  kind: 'ServerClaimDisruptionBudget',
  plural: 'serverclaimdisruptionbudgets',
  shortNames: ['scdb'],
  categories: ['metal', 'maintenance'],
  scope: 'Namespaced',
  description:
    "ServerClaimDisruptionBudget caps how many of a tenant's claimed servers may be in maintenance at once.",
  body: { spec: ServerClaimDisruptionBudgetSpec, status: Type.Optional(BudgetStatus) },
  printerColumns: [
    { name: 'MaxUnavailable', type: 'string', jsonPath: '.spec.maxUnavailable' },
    { name: 'Expected', type: 'integer', jsonPath: '.status.expected' },
    { name: 'Unavailable', type: 'integer', jsonPath: '.status.unavailable' },
    { name: 'Allowed', type: 'integer', jsonPath: '.status.disruptionsAllowed' },
    { name: 'Paused', type: 'boolean', jsonPath: '.spec.paused' },
  ],
});
export type ServerClaimDisruptionBudget = ObjectOf<typeof ServerClaimDisruptionBudgetKind>;
