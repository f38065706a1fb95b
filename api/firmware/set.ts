// Rollout fields the four firmware *Set kinds share: pausing, an extra cap on children in progress
// (the disruption budgets pace the rollout; this may only tighten them) and the failure short-circuit
// (as Cluster API's MachineHealthCheck maxUnhealthy). Semantics: docs/firmware.md, "The Sets".
import { Type } from '@sinclair/typebox';
import { Conditions, Int32, Int64, IntOrString } from '../schema/index.js';
import { check, intOrStringShown } from '../schema/checks.js';

const MAX_COUNT = 2 ** 31 - 1;
const PERCENT = /^(100|[1-9]?[0-9])%$/;

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
      rules: [
        check({
          rule: `type(self) == int ? self >= 0 && self <= ${MAX_COUNT} : type(self) != string || self.matches('^(100|[1-9]?[0-9])%$')`,
          holds: (v) =>
            typeof v === 'number'
              ? !Number.isInteger(v) || (v >= 0 && v <= MAX_COUNT)
              : typeof v !== 'string' || PERCENT.test(v),
          message: `{value} is neither a count from 0 to ${MAX_COUNT} nor a percentage from "0%" to "100%" (e.g. 2 or "10%")`,
          shown: intOrStringShown,
        }),
      ],
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
