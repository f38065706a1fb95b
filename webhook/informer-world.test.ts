// The informer-backed WorldView must answer every question exactly as the reference MemoryWorld does for
// the same objects, after any sequence of adds, updates and deletes in any order across kinds.
import fc from 'fast-check';
import type { BMC } from '../api/metal/v1alpha1/bmc.js';
import type { Server } from '../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import type { LabelSelector } from '../api/schema/common.js';
import type { KubeObject } from '../api/schema/meta.js';
import { Informer } from '../lib/kube/informer.js';
import type { ResourceClient } from '../lib/kube/client.js';
import { objectKey } from '../lib/kube/resources.js';
import { MemorySource } from './cache-source.js';
import { InformerWorld, WORLD_INDEXERS, type WorldSources } from './informer-world.js';
import { MemoryWorld } from './testing/memory-world.js';
import { loadWorld } from './testdata/load.js';
import type { BudgetCensus, WorldView } from './world.js';

// ------------------------------------------------------------------ the universe of names

const SERVERS = Array.from({ length: 10 }, (_, i) => `s${i}`);
const BMCS = ['bmc0', 'bmc1', 'bmc2'];
const TENANTS = ['t1', 't2'];
const CLAIMS = TENANTS.flatMap((ns) => ['c0', 'c1', 'c2', 'c3', 'c4'].map((name) => ({ ns, name })));
const MAINTENANCES = ['m0', 'm1', 'm2', 'm3', 'm4'];
const BUDGETS = ['b0', 'b1', 'b2'];
const CLAIM_BUDGETS = TENANTS.flatMap((ns) => ['cb0', 'cb1'].map((name) => ({ ns, name })));
const DOMAINS = ['', 'r1', 'r2', 'r3'];

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

const maintenance = fc
  .record({
    name: fc.constantFrom(...MAINTENANCES),
    server: fc.constantFrom(...SERVERS, 's99'),
    state: maybe(fc.constantFrom('Pending', 'InMaintenance', 'Completed')),
  })
  .map(({ name, server: s, state }): ServerMaintenance => ({
    metadata: { name, namespace: 'ops', uid: `uid-${name}` },
    spec: { serverRef: { name: s } },
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

type Kind = keyof WorldSources;
type Op = { kind: Kind; put: KubeObject } | { kind: Kind; remove: { name: string; namespace?: string } };

const put = <K extends Kind>(kind: K, arb: fc.Arbitrary<KubeObject>): fc.Arbitrary<Op> =>
  arb.map((obj) => ({ kind, put: obj }));
const remove = (kind: Kind, names: { name: string; namespace?: string }[]): fc.Arbitrary<Op> =>
  fc.constantFrom(...names).map((ref) => ({ kind, remove: ref }));

const op: fc.Arbitrary<Op> = fc.oneof(
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

// ------------------------------------------------------------------ harness

interface Sources {
  servers: MemorySource<Server>;
  claims: MemorySource<ServerClaim>;
  maintenances: MemorySource<ServerMaintenance>;
  serverBudgets: MemorySource<ServerDisruptionBudget>;
  claimBudgets: MemorySource<ServerClaimDisruptionBudget>;
  bmcs: MemorySource<BMC>;
}

function memorySources(): Sources {
  return {
    servers: new MemorySource(WORLD_INDEXERS.servers),
    claims: new MemorySource(WORLD_INDEXERS.claims),
    maintenances: new MemorySource(WORLD_INDEXERS.maintenances),
    serverBudgets: new MemorySource(),
    claimBudgets: new MemorySource(WORLD_INDEXERS.claimBudgets),
    bmcs: new MemorySource(),
  };
}

function apply(sources: Sources, o: Op): void {
  const source = sources[o.kind] as unknown as MemorySource<KubeObject>;
  // A fresh copy each time, as the API server sends a new object on every event.
  if ('put' in o) source.upsert(structuredClone(o.put));
  else source.remove(o.remove);
}

function reference(sources: Sources): MemoryWorld {
  return new MemoryWorld({
    servers: sources.servers.list(),
    claims: sources.claims.list(),
    maintenances: sources.maintenances.list(),
    serverBudgets: sources.serverBudgets.list(),
    claimBudgets: sources.claimBudgets.list(),
    bmcs: sources.bmcs.list(),
  });
}

const keys = (objs: readonly KubeObject[]) => objs.map((o) => objectKey(o.metadata)).sort();
const census = (c: BudgetCensus) => {
  // A set, when given, must hold exactly the listed names.
  if (c.unavailableSet) expect([...c.unavailableSet].sort()).toEqual([...new Set(c.unavailable)].sort());
  return { expected: c.expected, unavailable: [...c.unavailable].sort() };
};

/** Every question a rule can ask, over the whole universe of names (and some unknown ones). */
function answers(w: WorldView): unknown {
  const servers = [...SERVERS, 's98', 'unknown', ''];
  const claims = [...CLAIMS, { ns: 't3', name: 'c0' }];
  return {
    servers: servers.map((s) => [
      w.getServer(s)?.metadata.name,
      keys(w.claimsByServer(s)),
      keys(w.maintenancesByServer(s)),
      keys(w.serverBudgetsFor(s)),
    ]),
    claims: claims.map(({ ns, name }) => [
      w.getClaim(ns, name)?.metadata.name,
      keys(w.claimBudgetsFor(ns, name)),
    ]),
    maintenances: MAINTENANCES.map((m) => w.getMaintenance('ops', m)?.spec.serverRef.name),
    serverCensus: [...BUDGETS, 'nope'].flatMap((b) => DOMAINS.map((d) => census(w.serverBudgetCensus(b, d)))),
    claimCensus: [...CLAIM_BUDGETS, { ns: 't3', name: 'cb0' }].map(({ ns, name }) =>
      census(w.claimBudgetCensus(ns, name)),
    ),
  };
}

// ------------------------------------------------------------------ tests

describe('InformerWorld', () => {
  it('answers like MemoryWorld after any sequence of changes', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 60 }), fc.nat(60), (ops, split) => {
        // Part of the world exists before the InformerWorld subscribes (the informers' initial
        // list), the rest arrives as events afterwards.
        const sources = memorySources();
        const before = ops.slice(0, split);
        for (const o of before) apply(sources, o);
        const world = new InformerWorld(sources);
        expect(answers(world)).toEqual(answers(reference(sources)));
        for (const o of ops.slice(split)) {
          apply(sources, o);
          expect(answers(world)).toEqual(answers(reference(sources)));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('answers like MemoryWorld for the rule fixtures plus budgets of both kinds', () => {
    const fixtures = loadWorld();
    const serverBudgets: ServerDisruptionBudget[] = [
      { metadata: { name: 'fleet' }, spec: { serverSelector: {}, maxUnavailable: '10%' } },
      {
        metadata: { name: 'racks' },
        spec: { serverSelector: { matchLabels: { pool: 'a' } }, maxUnavailable: 1, topologyKey: 'rack' },
      },
    ];
    const claimBudgets: ServerClaimDisruptionBudget[] = [
      {
        metadata: { name: 'db', namespace: 'tenant-a' },
        spec: { claimSelector: { matchLabels: { app: 'db' } }, maxUnavailable: 1 },
      },
    ];
    const contents = { ...fixtures, serverBudgets, claimBudgets };
    const sources = memorySources();
    for (const s of contents.servers) sources.servers.upsert(s);
    for (const c of contents.claims) sources.claims.upsert(c);
    for (const m of contents.maintenances) sources.maintenances.upsert(m);
    for (const b of serverBudgets) sources.serverBudgets.upsert(b);
    for (const b of claimBudgets) sources.claimBudgets.upsert(b);
    const world = new InformerWorld(sources);
    const ref = new MemoryWorld(contents);
    for (const s of contents.servers.map((x) => x.metadata.name!)) {
      expect(keys(world.serverBudgetsFor(s))).toEqual(keys(ref.serverBudgetsFor(s)));
      expect(keys(world.claimsByServer(s))).toEqual(keys(ref.claimsByServer(s)));
      expect(keys(world.maintenancesByServer(s))).toEqual(keys(ref.maintenancesByServer(s)));
    }
    for (const [b, d] of [
      ['fleet', ''],
      ['racks', 'r1'],
      ['racks', 'r2'],
    ] as const)
      expect(census(world.serverBudgetCensus(b, d))).toEqual(census(ref.serverBudgetCensus(b, d)));
    // The fixture fleet: 7 servers; srv-cordoned, srv-maint and srv-error are unavailable.
    expect(census(world.serverBudgetCensus('fleet', ''))).toEqual({
      expected: 7,
      unavailable: ['srv-cordoned', 'srv-error', 'srv-maint'],
    });
    expect(census(world.claimBudgetCensus('tenant-a', 'db'))).toEqual({ expected: 2, unavailable: [] });
    expect(keys(world.claimBudgetsFor('tenant-a', 'claim-a'))).toEqual(['tenant-a/db']);
  });

  it('keeps its census when only a budget status changes (grants do not rebuild indexes)', () => {
    const sources = memorySources();
    for (let i = 0; i < 5; i++)
      sources.servers.upsert({ metadata: { name: `s${i}` }, spec: { systemUUID: `${i}` } });
    const budget: ServerDisruptionBudget = {
      metadata: { name: 'fleet', generation: 1 },
      spec: { serverSelector: {}, maxUnavailable: 1 },
    };
    sources.serverBudgets.upsert(budget);
    const world = new InformerWorld(sources);
    const first = world.serverBudgetCensus('fleet', '');
    expect(first.expected).toBe(5);
    sources.serverBudgets.upsert({ ...budget, status: { grants: [] } });
    expect(world.serverBudgetCensus('fleet', '')).toBe(first);
    // A spec change does rebuild.
    sources.serverBudgets.upsert({
      ...budget,
      spec: { ...budget.spec, serverSelector: { matchLabels: { x: 'y' } } },
    });
    expect(world.serverBudgetCensus('fleet', '').expected).toBe(0);
  });

  it('counts a server as unavailable when its BMC becomes unreachable, and back', () => {
    const sources = memorySources();
    sources.servers.upsert({
      metadata: { name: 's0' },
      spec: { systemUUID: '0', bmcRef: { name: 'bmc0' } },
    });
    sources.serverBudgets.upsert({
      metadata: { name: 'fleet' },
      spec: { serverSelector: {}, maxUnavailable: 1 },
    });
    const world = new InformerWorld(sources);
    expect(world.serverBudgetCensus('fleet', '').unavailable).toEqual([]);
    sources.bmcs.upsert({ metadata: { name: 'bmc0' }, status: { state: 'Error' } } as unknown as BMC);
    expect(world.serverBudgetCensus('fleet', '').unavailable).toEqual(['s0']);
    sources.bmcs.remove({ name: 'bmc0' });
    expect(world.serverBudgetCensus('fleet', '').unavailable).toEqual([]);
  });

  describe('re-binds, deletes and moved maintenances', () => {
    const srv = (name: string, claim?: string): Server => ({
      metadata: { name, labels: { pool: 'a' } },
      spec: { systemUUID: name, ...(claim ? { serverClaimRef: { namespace: 't1', name: claim } } : {}) },
    });
    const clm = (name: string, serverName?: string): ServerClaim => ({
      metadata: { name, namespace: 't1', labels: { app: 'db' } },
      spec: { power: 'On', image: 'os:1', ...(serverName ? { serverRef: { name: serverName } } : {}) },
    });
    const mnt = (name: string, serverName: string): ServerMaintenance => ({
      metadata: { name, namespace: 'ops', uid: `uid-${name}` },
      spec: { serverRef: { name: serverName } },
    });
    const budgets = (sources: Sources) => {
      sources.serverBudgets.upsert({
        metadata: { name: 'fleet' },
        spec: { serverSelector: {}, maxUnavailable: 1 },
      });
      sources.claimBudgets.upsert({
        metadata: { name: 'db', namespace: 't1' },
        spec: { claimSelector: { matchLabels: { app: 'db' } }, maxUnavailable: 1 },
      });
    };
    const same = (sources: Sources, world: InformerWorld) =>
      expect(answers(world)).toEqual(answers(reference(sources)));

    it('follows a claim re-bound to another server, and a server deleted while claimed', () => {
      const sources = memorySources();
      budgets(sources);
      const world = new InformerWorld(sources);
      sources.servers.upsert(srv('s1', 'c0'));
      sources.servers.upsert(srv('s2'));
      sources.claims.upsert(clm('c0', 's1'));
      same(sources, world);
      expect(world.claimBudgetCensus('t1', 'db').expected).toBe(1);
      // Re-bound: the claim now names s2, s2 points back at it, s1 is released.
      sources.claims.upsert(clm('c0', 's2'));
      sources.servers.upsert(srv('s2', 'c0'));
      sources.servers.upsert(srv('s1'));
      same(sources, world);
      expect(world.getServer('s2')?.spec.serverClaimRef?.name).toBe('c0');
      expect(world.getClaim('t1', 'c0')?.spec.serverRef?.name).toBe('s2');
      // Deleted while claimed: the record goes, the claim stays but no longer counts.
      sources.servers.remove({ name: 's2' });
      same(sources, world);
      expect(world.getServer('s2')).toBeUndefined();
      expect(world.serverBudgetsFor('s2')).toEqual([]);
      expect(world.claimBudgetCensus('t1', 'db').expected).toBe(0);
      // And back: a server that reappears under the same name is counted again.
      sources.servers.upsert(srv('s2', 'c0'));
      same(sources, world);
      expect(world.claimBudgetCensus('t1', 'db').expected).toBe(1);
    });

    it('keeps the newest object of a server or claim even when its budgets do not change', () => {
      const sources = memorySources();
      budgets(sources);
      sources.servers.upsert(srv('s1'));
      sources.claims.upsert(clm('c0', 's1'));
      const world = new InformerWorld(sources);
      sources.servers.upsert({ ...srv('s1', 'c0'), status: { state: 'Reserved' } });
      sources.claims.upsert({ ...clm('c0', 's1'), spec: { ...clm('c0', 's1').spec, image: 'os:2' } });
      expect(world.getServer('s1')?.status?.state).toBe('Reserved');
      expect(world.getClaim('t1', 'c0')?.spec.image).toBe('os:2');
      same(sources, world);
    });

    it('lists maintenances of servers that exist or not, moved between servers, in any order', () => {
      const sources = memorySources();
      const world = new InformerWorld(sources);
      // Before its server exists.
      sources.maintenances.upsert(mnt('m0', 's1'));
      sources.maintenances.upsert(mnt('m1', 's1'));
      expect(keys(world.maintenancesByServer('s1'))).toEqual(['ops/m0', 'ops/m1']);
      sources.servers.upsert(srv('s1'));
      same(sources, world);
      // Moved to another server, then its old server deleted.
      sources.maintenances.upsert(mnt('m1', 's2'));
      sources.servers.remove({ name: 's1' });
      same(sources, world);
      expect(keys(world.maintenancesByServer('s1'))).toEqual(['ops/m0']);
      expect(keys(world.maintenancesByServer('s2'))).toEqual(['ops/m1']);
      // A status change is seen (the rules read state from these objects).
      sources.maintenances.upsert({ ...mnt('m1', 's2'), status: { state: 'InMaintenance' } });
      expect(world.maintenancesByServer('s2')[0]?.status?.state).toBe('InMaintenance');
      sources.maintenances.remove({ name: 'm0', namespace: 'ops' });
      sources.maintenances.remove({ name: 'm1', namespace: 'ops' });
      same(sources, world);
      expect(world.maintenancesByServer('s1')).toEqual([]);
      expect(world.maintenancesByServer('s2')).toEqual([]);
    });
  });

  it('reports synced only when every source is', () => {
    const sources = memorySources();
    const world = new InformerWorld(sources);
    expect(world.hasSynced()).toBe(true);
    sources.claims.setSynced(false);
    expect(world.hasSynced()).toBe(false);
  });
});

// ------------------------------------------------------------------ over real Informers

interface Pushable {
  push(event: { type: string; object: KubeObject }): void;
}

/** A ResourceClient stand-in: a fixed list, then the watch events a test pushes. */
function fakeResource(
  plural: string,
  items: KubeObject[],
): { resource: ResourceClient<KubeObject> } & Pushable {
  const waiting: ((e: unknown) => void)[] = [];
  const queued: unknown[] = [];
  let rv = 100;
  const stamp = (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, resourceVersion: String(++rv) } });
  const resource = {
    type: { group: 'test', version: 'v1', plural, kind: plural, namespaced: true },
    path: () => `/test/${plural}`,
    list: () => Promise.resolve({ metadata: { resourceVersion: String(rv) }, items: items.map(stamp) }),
    client: {
      async *stream(_path: string, options: { signal?: AbortSignal }) {
        while (!options.signal?.aborted) {
          const next =
            queued.shift() ??
            (await new Promise((resolve) => {
              waiting.push(resolve);
              options.signal?.addEventListener('abort', () => resolve(undefined), { once: true });
            }));
          if (next) yield next;
        }
      },
    },
  } as unknown as ResourceClient<KubeObject>;
  return {
    resource,
    push(event) {
      const e = { type: event.type, object: stamp(event.object) };
      const w = waiting.shift();
      if (w) w(e);
      else queued.push(e);
    },
  };
}

describe('InformerWorld over lib/kube Informers', () => {
  it('builds its indexes from the informers and follows their watch events', async () => {
    const fixtures = loadWorld();
    const budget: ServerDisruptionBudget = {
      metadata: { name: 'racks' },
      spec: { serverSelector: {}, maxUnavailable: 1, topologyKey: 'rack' },
    };
    const fakes = {
      servers: fakeResource('servers', fixtures.servers),
      claims: fakeResource('serverclaims', fixtures.claims),
      maintenances: fakeResource('servermaintenances', fixtures.maintenances),
      serverBudgets: fakeResource('serverdisruptionbudgets', [budget]),
      claimBudgets: fakeResource('serverclaimdisruptionbudgets', []),
      bmcs: fakeResource('bmcs', []),
    };
    const informers = Object.fromEntries(
      (Object.keys(fakes) as Kind[]).map((k) => [
        k,
        new Informer(fakes[k].resource, { indexers: WORLD_INDEXERS[k] as never }),
      ]),
    ) as unknown as { [K in Kind]: Informer<KubeObject> };
    const world = new InformerWorld(informers as unknown as WorldSources);
    expect(world.hasSynced()).toBe(false);
    for (const inf of Object.values(informers)) inf.start();
    try {
      await Promise.all(Object.values(informers).map((i) => i.waitForSync(5000)));
      expect(world.hasSynced()).toBe(true);
      const ref = () =>
        new MemoryWorld({
          servers: informers.servers.list() as Server[],
          claims: informers.claims.list() as ServerClaim[],
          maintenances: informers.maintenances.list() as ServerMaintenance[],
          serverBudgets: informers.serverBudgets.list() as ServerDisruptionBudget[],
        });
      const rackCensus = (w: WorldView) => ['r1', 'r2'].map((d) => census(w.serverBudgetCensus('racks', d)));
      expect(rackCensus(world)).toEqual(rackCensus(ref()));
      expect(keys(world.maintenancesByServer('srv-claimed'))).toEqual(['ops/m1']);

      // A server breaks and a maintenance moves: both arrive as watch events.
      fakes.servers.push({
        type: 'MODIFIED',
        object: { ...fixtures.servers[0]!, status: { state: 'Error' } } as Server,
      });
      fakes.maintenances.push({
        type: 'MODIFIED',
        object: {
          ...fixtures.maintenances[0]!,
          spec: { serverRef: { name: 'srv-free' } },
        } as ServerMaintenance,
      });
      await waitUntil(() => world.maintenancesByServer('srv-free').length === 2);
      await waitUntil(() => world.serverBudgetCensus('racks', 'r1').unavailable.includes('srv-free'));
      expect(rackCensus(world)).toEqual(rackCensus(ref()));
      expect(keys(world.maintenancesByServer('srv-claimed'))).toEqual([]);
    } finally {
      await Promise.all(Object.values(informers).map((i) => i.stop()));
    }
  });
});

async function waitUntil(check: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
}
