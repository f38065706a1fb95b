// Fields both disruption budget kinds share.
import { Type, type Static } from '@sinclair/typebox';
import { IntOrString, Int32, MapList, Conditions } from '../../schema/index.js';
import { countOrPercent } from '../../schema/checks.js';
import { Ledger } from './servermaintenance.js';

export const MaxUnavailable = () =>
  IntOrString({
    description:
      'How many selected servers may be unavailable at once: an integer >= 0 or a percentage like "10%".',
    rules: [countOrPercent()],
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
