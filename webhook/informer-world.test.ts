// The informer-backed WorldView must answer every question exactly as the reference MemoryWorld does for
// the same objects, after any sequence of adds, updates and deletes in any order across kinds.
import fc from 'fast-check';
import type { BMC } from '../api/metal/v1alpha1/bmc.js';
import type { Server } from '../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import type { KubeObject } from '../api/schema/meta.js';
import { MemorySource } from './cache-source.js';
import { InformerWorld, WORLD_INDEXERS } from './informer-world.js';
import { MemoryWorld } from './testing/memory-world.js';
import { census, keys } from './testing/world-checks.js';
import {
  BUDGETS,
  CLAIMS,
  CLAIM_BUDGETS,
  DOMAINS,
  MAINTENANCES,
  GANGS,
  SERVERS,
  op,
  type Op,
} from './testing/world-ops.js';
import { loadWorld } from './testdata/load.js';
import type { WorldView } from './world.js';

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
    gangs: [...GANGS, 'g9'].map((g) => keys(w.maintenancesByGang('ops', g))),
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
