// Fields both disruption budget kinds share.
import { Type, type Static } from '@sinclair/typebox';
import { IntOrString, Int32, MapList, Conditions } from '../../schema/index.js';
import { check, intOrStringShown } from '../../schema/checks.js';
import { Ledger } from './servermaintenance.js';

/** intstr.IntOrString holds an int32. */
const MAX_COUNT = 2 ** 31 - 1;
const PERCENT = /^(100|[1-9]?[0-9])%$/;

export const MaxUnavailable = () =>
  IntOrString({
    description:
      'How many selected servers may be unavailable at once: an integer >= 0 or a percentage like "10%".',
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
  });

export const DomainStatus = Type.Object({
  name: Type.String({
    description: 'Topology domain (the topologyKey label value); "" when the budget has no topologyKey.',
  }),
  expected: Int32({ minimum: 0 }),
  unavailable: Int32({
    minimum: 0,
    description: 'Unavailable for any reason, granted disruptions included.',
  }),
  granted: Int32({ minimum: 0 }),
  allowed: Int32({ minimum: 0, description: 'Disruptions that may still be granted.' }),
});
export type DomainStatus = Static<typeof DomainStatus>;

export const BudgetStatus = Type.Object({
  observedGeneration: Type.Optional(Type.Integer({ format: 'int64' })),
  expected: Type.Optional(Int32({ minimum: 0 })),
  unavailable: Type.Optional(Int32({ minimum: 0 })),
  disruptionsAllowed: Type.Optional(Int32({ minimum: 0 })),
  domains: Type.Optional(MapList(DomainStatus, ['name'], { maxItems: 10000 })),
  grants: Type.Optional(Ledger()),
  conditions: Type.Optional(Conditions()),
});
export type BudgetStatus = Static<typeof BudgetStatus>;
