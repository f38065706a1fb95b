// The universe the InformerWorld property test draws from: a few names of each kind, and generators of
// puts and removes over them (any field a WorldView answer depends on varies).
import fc from 'fast-check';
import type { BMC } from '../../api/metal/v1alpha1/bmc.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import type { LabelSelector } from '../../api/schema/common.js';
import type { KubeObject } from '../../api/schema/meta.js';
import type { WorldSources } from '../informer-world.js';

// ------------------------------------------------------------------ the universe of names

export const SERVERS = Array.from({ length: 10 }, (_, i) => `s${i}`);
export const BMCS = ['bmc0', 'bmc1', 'bmc2'];
export const TENANTS = ['t1', 't2'];
export const CLAIMS = TENANTS.flatMap((ns) => ['c0', 'c1', 'c2', 'c3', 'c4'].map((name) => ({ ns, name })));
export const MAINTENANCES = ['m0', 'm1', 'm2', 'm3', 'm4'];
export const BUDGETS = ['b0', 'b1', 'b2'];
export const CLAIM_BUDGETS = TENANTS.flatMap((ns) => ['cb0', 'cb1'].map((name) => ({ ns, name })));
export const DOMAINS = ['', 'r1', 'r2', 'r3'];

// ------------------------------------------------------------------ generators

const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const labels = (key: string, values: string[]) =>
  maybe(fc.constantFrom(...values)).map((v) => (v === undefined ? undefined : { [key]: v }));

const selector = (key: string, values: string[]): fc.Arbitrary<LabelSelector | undefined> =>
  fc.oneof(
    fc.constant(undefined),
    fc.constant({}),
    fc.constantFrom(...values).map((v) => ({ matchLabels: { [key]: v } })),
    fc
      .record({
        operator: fc.constantFrom('In', 'NotIn', 'Exists', 'DoesNotExist'),
        values: fc.subarray(values, { minLength: 1 }),
      })
      .map(({ operator, values: vs }) => ({
        matchExpressions: [
          { key, operator, ...(operator === 'In' || operator === 'NotIn' ? { values: vs } : {}) },
        ],
      })),
  );

const server = fc
  .record({
    name: fc.constantFrom(...SERVERS),
    rack: labels('rack', ['r1', 'r2', 'r3']),
    pool: labels('pool', ['a', 'b']),
    bmc: maybe(fc.constantFrom(...BMCS)),
    state: maybe(fc.constantFrom('Available', 'Reserved', 'Error', 'Parked', 'Maintenance')),
    maintenance: maybe(fc.constantFrom('None', 'Announced', 'InMaintenance')),
    unclaimable: fc.boolean(),
  })
  .map((r): Server => ({
    metadata: { name: r.name, labels: { ...r.rack, ...r.pool } },
    spec: {
      systemUUID: r.name,
      ...(r.bmc ? { bmcRef: { name: r.bmc } } : {}),
      ...(r.unclaimable ? { unclaimable: true } : {}),
    },
    status: {
      ...(r.state ? { state: r.state } : {}),
      ...(r.maintenance ? { maintenance: { state: r.maintenance } } : {}),
    },
  }));

const bmc = fc
  .record({ name: fc.constantFrom(...BMCS), how: fc.constantFrom('ok', 'error', 'not-ready', 'none') })
  .map(
    ({ name, how }): BMC =>
      ({
        metadata: { name },
        spec: {},
        status:
          how === 'error'
            ? { state: 'Error' }
            : how === 'not-ready'
              ? { state: 'Enabled', conditions: [{ type: 'Ready', status: 'False' }] }
              : how === 'ok'
                ? { state: 'Enabled' }
                : undefined,
      }) as unknown as BMC,
  );

const claim = fc
  .record({
    at: fc.constantFrom(...CLAIMS),
    app: labels('app', ['db', 'web']),
    // Two extra names: claims may point at servers that do not exist (yet).
    server: maybe(fc.constantFrom(...SERVERS, 's98', 's99')),
  })
  .map(({ at, app, server: s }): ServerClaim => ({
    metadata: { name: at.name, namespace: at.ns, ...(app ? { labels: app } : {}) },
    spec: { power: 'On', image: 'os:1', ...(s ? { serverRef: { name: s } } : {}) },
  }));

/** Gangs the maintenances may belong to (the webhook indexes them by namespace and name). */
export const GANGS = ['g0', 'g1'] as const;

const maintenance = fc
  .record({
    name: fc.constantFrom(...MAINTENANCES),
    server: fc.constantFrom(...SERVERS, 's99'),
    state: maybe(fc.constantFrom('Pending', 'InMaintenance', 'Completed')),
    gang: maybe(fc.constantFrom(...GANGS)),
  })
  .map(({ name, server: s, state, gang }): ServerMaintenance => ({
    metadata: { name, namespace: 'ops', uid: `uid-${name}` },
    spec: { serverRef: { name: s }, ...(gang ? { gang: { name: gang, size: 2 } } : {}) },
    ...(state ? { status: { state } } : {}),
  }));

const serverBudget = fc
  .record({
    name: fc.constantFrom(...BUDGETS),
    selector: fc.oneof(selector('pool', ['a', 'b']), selector('rack', ['r1', 'r2'])),
    topologyKey: maybe(fc.constantFrom('rack', 'pool')),
    grants: fc.nat(3),
  })
  .map((r): ServerDisruptionBudget => ({
    metadata: { name: r.name, generation: 1 },
    spec: {
      ...(r.selector ? { serverSelector: r.selector } : {}),
      maxUnavailable: 1,
      ...(r.topologyKey ? { topologyKey: r.topologyKey } : {}),
    } as ServerDisruptionBudget['spec'],
    // Status churn (grants) must not disturb the indexes.
    status: { observedGeneration: 1, expected: r.grants },
  }));

const claimBudget = fc
  .record({ at: fc.constantFrom(...CLAIM_BUDGETS), selector: selector('app', ['db', 'web']) })
  .map(({ at, selector: sel }): ServerClaimDisruptionBudget => ({
    metadata: { name: at.name, namespace: at.ns },
    spec: {
      ...(sel ? { claimSelector: sel } : {}),
      maxUnavailable: 1,
    } as ServerClaimDisruptionBudget['spec'],
  }));

export type Kind = keyof WorldSources;
export type Op =
  { kind: Kind; put: KubeObject } | { kind: Kind; remove: { name: string; namespace?: string } };

const put = <K extends Kind>(kind: K, arb: fc.Arbitrary<KubeObject>): fc.Arbitrary<Op> =>
  arb.map((obj) => ({ kind, put: obj }));
const remove = (kind: Kind, names: { name: string; namespace?: string }[]): fc.Arbitrary<Op> =>
  fc.constantFrom(...names).map((ref) => ({ kind, remove: ref }));

export const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: put('servers', server) },
  { weight: 2, arbitrary: put('bmcs', bmc) },
  { weight: 4, arbitrary: put('claims', claim) },
  { weight: 2, arbitrary: put('maintenances', maintenance) },
  { weight: 2, arbitrary: put('serverBudgets', serverBudget) },
  { weight: 2, arbitrary: put('claimBudgets', claimBudget) },
  {
    weight: 1,
    arbitrary: remove(
      'servers',
      SERVERS.map((name) => ({ name })),
    ),
  },
  {
    weight: 1,
    arbitrary: remove(
      'bmcs',
      BMCS.map((name) => ({ name })),
    ),
  },
  {
    weight: 1,
    arbitrary: remove(
      'claims',
      CLAIMS.map(({ ns, name }) => ({ name, namespace: ns })),
    ),
  },
  {
    weight: 1,
    arbitrary: remove(
      'maintenances',
      MAINTENANCES.map((name) => ({ name, namespace: 'ops' })),
    ),
  },
  {
    weight: 1,
    arbitrary: remove(
      'serverBudgets',
      BUDGETS.map((name) => ({ name })),
    ),
  },
  {
    weight: 1,
    arbitrary: remove(
      'claimBudgets',
      CLAIM_BUDGETS.map(({ ns, name }) => ({ name, namespace: ns })),
    ),
  },
);
