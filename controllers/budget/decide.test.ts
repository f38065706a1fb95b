// The budget controller's decisions, without I/O.
import { describe, expect, it } from '@jest/globals';
import type { BMC } from '../../api/metal/v1alpha1/bmc.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { LedgerEntry, ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import { MemoryWorld } from '../../webhook/testing/memory-world.js';
import {
  asDecided,
  claimBudgetStatus,
  confirmExpiry,
  ENDED_GRACE_MS,
  expiryCandidates,
  serverBudgetStatus,
  type CensusWorld,
} from './decide.js';

const T0 = Date.parse('2026-09-01T10:00:00Z');
const at = (s: number) => new Date(T0 + s * 1000);
const iso = (s: number) => at(s).toISOString().replace('.000Z', 'Z');

function srv(
  name: string,
  rack: string,
  patch: {
    state?: string;
    unclaimable?: boolean;
    bmc?: string;
    maintenance?: 'InMaintenance';
    claim?: string;
  } = {},
): Server {
  return {
    metadata: { name, labels: { rack, fleet: 'a' } },
    spec: {
      systemUUID: name,
      ...(patch.unclaimable ? { unclaimable: true } : {}),
      ...(patch.bmc ? { bmcRef: { name: patch.bmc } } : {}),
      ...(patch.claim ? { serverClaimRef: { namespace: 't', name: patch.claim } } : {}),
    },
    status: {
      state: patch.state ?? 'Available',
      ...(patch.maintenance ? { maintenance: { state: patch.maintenance } } : {}),
    },
  };
}

const brokenBMC: BMC = {
  metadata: { name: 'bmc-x' },
  spec: {},
  status: { state: 'Error' },
} as unknown as BMC;
const world: CensusWorld = { bmcOf: (s) => (s.spec.bmcRef?.name === 'bmc-x' ? brokenBMC : undefined) };

function grant(uid: string, server: string, grantedAt: number, domain?: string): LedgerEntry {
  return {
    maintenanceUID: uid,
    maintenance: { namespace: 'ops', name: uid },
    server,
    grantedAt: iso(grantedAt),
    ...(domain ? { domain } : {}),
  };
}

function sdb(
  spec: Partial<ServerDisruptionBudget['spec']>,
  grants: LedgerEntry[] = [],
  generation = 1,
): ServerDisruptionBudget {
  return {
    metadata: { name: 'fleet', generation },
    spec: { serverSelector: { matchLabels: { fleet: 'a' } }, maxUnavailable: 3, ...spec },
    status: { grants },
  };
}

describe('ServerDisruptionBudget status', () => {
  const servers = [
    srv('a1', 'r1', { state: 'Error' }),
    srv('a2', 'r1', { unclaimable: true }),
    srv('a3', 'r1', { bmc: 'bmc-x' }),
    srv('a4', 'r1', { state: 'Parked' }),
    srv('a5', 'r2'),
    srv('a6', 'r2', { maintenance: 'InMaintenance' }),
    srv('a7', 'r2'),
    { ...srv('other', 'r1'), metadata: { name: 'other', labels: { rack: 'r1' } } },
  ];

  it('counts every kind of unavailability and each server once, granted or not', () => {
    const b = sdb({ maxUnavailable: 6 }, [grant('m6', 'a6', -10), grant('m7', 'a7', -10)]);
    const s = serverBudgetStatus(b, servers, world, at(0));
    expect(s).toMatchObject({ observedGeneration: 1, expected: 7, unavailable: 6, disruptionsAllowed: 0 });
    expect(s.domains).toEqual([{ name: '', expected: 7, unavailable: 6, granted: 2, allowed: 0 }]);
    expect(s.conditions[0]).toMatchObject({
      type: 'DisruptionAllowed',
      status: 'False',
      reason: 'InsufficientRoom',
    });
  });

  it("agrees with the webhook's census of the same world", () => {
    const b = sdb({ maxUnavailable: '50%', topologyKey: 'rack' });
    const memory = new MemoryWorld({ servers, serverBudgets: [b], bmcs: [brokenBMC] });
    const s = serverBudgetStatus(b, servers, world, at(0));
    for (const d of s.domains) {
      const census = memory.serverBudgetCensus('fleet', d.name);
      expect({ expected: d.expected, unavailable: d.unavailable }).toEqual({
        expected: census.expected,
        unavailable: census.unavailable.length,
      });
    }
  });

  it('splits by topology domain and rounds percentages up, like a PodDisruptionBudget', () => {
    const b = sdb({ maxUnavailable: '50%', topologyKey: 'rack' }, [grant('m5', 'a5', -1, 'r2')]);
    const s = serverBudgetStatus(b, servers, world, at(0));
    expect(s.domains).toEqual([
      { name: 'r1', expected: 4, unavailable: 4, granted: 0, allowed: 0 },
      { name: 'r2', expected: 3, unavailable: 2, granted: 1, allowed: 0 },
    ]);
    const roomy = serverBudgetStatus(
      sdb({ maxUnavailable: '70%', topologyKey: 'rack' }),
      servers,
      world,
      at(0),
    );
    expect(roomy.domains.find((d) => d.name === 'r2')?.allowed).toBe(2);
    expect(roomy.disruptionsAllowed).toBe(2);
  });

  it('grants nothing while paused', () => {
    const s = serverBudgetStatus(sdb({ paused: true, maxUnavailable: 100 }), servers, world, at(0));
    expect(s.disruptionsAllowed).toBe(0);
    expect(s.conditions[0]).toMatchObject({ status: 'False', reason: 'Paused' });
  });

  it('has one domain "" even when it selects nothing', () => {
    const s = serverBudgetStatus(
      sdb({ maxUnavailable: 2, serverSelector: { matchLabels: { none: 'x' } } }),
      servers,
      world,
      at(0),
    );
    expect(s.domains).toEqual([{ name: '', expected: 0, unavailable: 0, granted: 0, allowed: 2 }]);
  });
});

describe('ServerClaimDisruptionBudget status', () => {
  it('counts the bound claims it selects by their servers', () => {
    const servers = new Map(
      [
        srv('a1', 'r1', { state: 'Error', claim: 'c1' }),
        srv('a2', 'r1', { claim: 'c2' }),
        srv('a3', 'r1', { claim: 'c3' }),
      ].map((s) => [s.metadata.name!, s]),
    );
    const claim = (name: string, server: string | undefined, app = 'db'): ServerClaim => ({
      metadata: { name, namespace: 't', labels: { app } },
      spec: { power: 'On', image: 'i', ...(server ? { serverRef: { name: server } } : {}) },
    });
    const budget: ServerClaimDisruptionBudget = {
      metadata: { name: 'db', namespace: 't', generation: 2 },
      spec: { claimSelector: { matchLabels: { app: 'db' } }, maxUnavailable: 2 },
      status: { grants: [grant('m2', 'a2', -1)] },
    };
    const claims = [claim('c1', 'a1'), claim('c2', 'a2'), claim('c3', 'a3', 'web'), claim('c4', undefined)];
    const s = claimBudgetStatus(budget, claims, (n) => servers.get(n), world, at(0));
    expect(s).toMatchObject({ observedGeneration: 2, expected: 2, unavailable: 2, disruptionsAllowed: 0 });
  });
});

function maint(uid: string, state?: string, deleting = false): ServerMaintenance {
  return {
    metadata: { name: uid, namespace: 'ops', uid, ...(deleting ? { deletionTimestamp: iso(-1) } : {}) },
    spec: { serverRef: { name: 's' } },
    ...(state ? { status: { state } } : {}),
  };
}

describe('grant expiry', () => {
  const ttl = 60_000;
  const lookup = (ms: ServerMaintenance[]) => (_ns: string, name: string) =>
    ms.find((m) => m.metadata.name === name);

  it('never touches the grant of a running maintenance, however old', () => {
    const b = sdb({}, [grant('run', 's', -3600)]);
    expect(expiryCandidates(b, lookup([maint('run', 'InMaintenance')]), ttl, at(0)).candidates).toEqual([]);
  });

  it('proposes grants of ended maintenances at once, and the rest after the TTL', () => {
    const b = sdb({}, [
      grant('gone', 's', -1),
      grant('failed', 's', -1),
      grant('young', 's', -10),
      grant('old', 's', -61),
      grant('recreated', 's', -1),
    ]);
    const world = [
      maint('failed', 'Failed'),
      maint('young', 'Approved'),
      maint('old', 'Approved'),
      {
        ...maint('recreated', 'Approved'),
        metadata: { name: 'recreated', namespace: 'ops', uid: 'new-uid' },
      },
    ];
    const { candidates, wakeAt, ttlAt } = expiryCandidates(b, lookup(world), ttl, at(0));
    expect(candidates.map((c) => [c.entry.maintenanceUID, c.reason])).toEqual([
      ['gone', 'ended'],
      ['failed', 'ended'],
      ['old', 'ttl'],
      ['recreated', 'ended'],
    ]);
    expect(wakeAt).toBe(T0 + 50_000);
    // The metric of grants near their TTL: the young grant, the only one still inside it.
    expect(ttlAt).toBe(T0 + 50_000);
  });

  it('expires by TTL the grants a gang write left for members that never transitioned', () => {
    // One member's write granted the gang of three; one started, two stayed Approved.
    const b = sdb({}, [grant('g1', 's1', -61), grant('g2', 's2', -61), grant('g3', 's3', -61)]);
    const gang = { name: 'bmc-a', size: 3 };
    const world = [maint('g1', 'InMaintenance'), maint('g2', 'Approved'), maint('g3', 'Approved')].map(
      (m) => ({ ...m, spec: { ...m.spec, gang } }),
    );
    const { candidates } = expiryCandidates(b, lookup(world), ttl, at(0));
    expect(candidates.map((c) => [c.entry.maintenanceUID, c.reason])).toEqual([
      ['g2', 'ttl'],
      ['g3', 'ttl'],
    ]);
  });

  it('leaves the grant of a maintenance that just ended to its controller for a grace period', () => {
    const done = {
      ...maint('done', 'Completed'),
      status: { state: 'Completed' as const, completedAt: iso(-5) },
    };
    const b = sdb({}, [grant('done', 's', -20)]);
    const early = expiryCandidates(b, lookup([done]), ttl, at(0));
    expect(early.candidates).toEqual([]);
    expect(early.wakeAt).toBe(T0 - 5_000 + ENDED_GRACE_MS);
    // An ended maintenance's grant waits for its grace, not its TTL: not "near TTL".
    expect(early.ttlAt).toBeUndefined();
    const entry = { entry: grant('done', 's', -20), reason: 'ended' as const };
    expect(confirmExpiry(entry, done, ttl, at(0))).toBeUndefined();
    expect(expiryCandidates(b, lookup([done]), ttl, at(26)).candidates).toHaveLength(1);
    expect(confirmExpiry(entry, done, ttl, at(26))).toBe('ended');
  });

  it('keeps a grant when the fresh read shows its maintenance running or still young', () => {
    const ended = { entry: grant('m', 's', -1), reason: 'ended' as const };
    expect(confirmExpiry(ended, maint('m', 'InMaintenance'), ttl, at(0))).toBeUndefined();
    expect(confirmExpiry(ended, maint('m', 'Approved'), ttl, at(0))).toBeUndefined();
    expect(confirmExpiry(ended, undefined, ttl, at(0))).toBe('ended');
    const old = { entry: grant('m', 's', -61), reason: 'ttl' as const };
    expect(confirmExpiry(old, maint('m', 'InMaintenance', true), ttl, at(0))).toBeUndefined();
    expect(confirmExpiry(old, maint('m', 'Approved'), ttl, at(0))).toBe('ttl');
  });

  it('removes an entry only as it was decided on: a re-written grant stays', () => {
    const decided = grant('m', 's', -61);
    const refreshed = grant('m', 's', 0);
    const picked = asDecided([decided]);
    expect(picked(decided)).toBe(true);
    expect(picked(refreshed)).toBe(false);
    expect(picked(grant('x', 's2', -1))).toBe(false);
  });
});
