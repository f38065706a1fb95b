// Rollout fields the four firmware *Set kinds share: pausing, an extra cap on children in progress
// (the disruption budgets pace the rollout; this may only tighten them) and the failure short-circuit
// (as Cluster API's MachineHealthCheck maxUnhealthy). Semantics: docs/firmware.md, "The Sets".
import { Type } from '@sinclair/typebox';
import { Conditions, Int32, Int64, IntOrString } from '../schema/index.js';
import { countOrPercent } from '../schema/checks.js';

export const SetRolloutFields = () => ({
  paused: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'Start no child while true; children already past their maintenance gate finish.',
    }),
  ),
  maxConcurrent: Type.Optional(
    Int32({
      minimum: 1,
      maximum: 100000,
      description:
        'Children in progress at once, at most. Unset: as many as the disruption budgets admit; this can only lower that.',
    }),
  ),
  maxFailures: Type.Optional(
    IntOrString({
      description:
        'Short-circuit: once more children than this (a count, or a percentage of the children) are Failed, no child starts. Unset: never.',
      rules: [countOrPercent()],
    }),
  ),
});

export const SetStatusFields = () => ({
  observedGeneration: Type.Optional(Int64({ description: 'Generation the controller last acted on.' })),
  heldChildren: Type.Optional(
    Int32({ description: 'Children held back (queued for maxConcurrent, paused or short-circuited).' }),
  ),
  conditions: Type.Optional(Conditions()),
});
