// The idle-slot oracle must catch a planted stall (a maintenance left waiting next to a free slot) and
// must not flag the waits that are right: a full budget, a busy server, no approval, a future notBefore,
// a closed window, a binary down.
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { IdleSlotOracle, type IdleSlotOptions, type OracleBudget } from './idle-slot.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (s: number) => T0 + s * 1000;

/** Fleet budget of 1 over s1..s4; per-rack budget of 1 over racks a (s1, s2) and b (s3, s4). */
const fleet = (max: number | string = 1): OracleBudget => ({
  name: 'fleet',
  domainOf: new Map(['s1', 's2', 's3', 's4'].map((s) => [s, ''])),
  maxUnavailable: max,
});
const racks: OracleBudget = {
  name: 'racks',
  domainOf: new Map([
    ['s1', 'a'],
    ['s2', 'a'],
    ['s3', 'b'],
    ['s4', 'b'],
  ]),
  maxUnavailable: 1,
};

const sm = (
  name: string,
  server: string,
  state = 'Approved',
  extra: { approved?: boolean; notBefore?: string } = {},
): ServerMaintenance => ({
  metadata: { name, namespace: 'ns', uid: `uid-${name}` },
  spec: { serverRef: { name: server } },
  status: {
    state,
    ...(extra.approved === false ? {} : { approval: { source: 'NotRequired' as const } }),
    ...(extra.notBefore ? { notBefore: extra.notBefore } : {}),
  },
});

const oracle = (o: Partial<IdleSlotOptions> = {}) => new IdleSlotOracle({ budgets: [fleet(2), racks], ...o });

describe('IdleSlotOracle', () => {
  it('catches a planted stall: a maintenance admissible for 11 s that never starts', () => {
    const o = oracle();
    o.onMaintenance(sm('a', 's1'), false, at(0));
    expect(o.admissible(at(0))).toEqual(['ns/a']);
    o.tick(at(5));
    expect(o.violations).toEqual([]);
    o.tick(at(11));
    expect(o.violations).toHaveLength(1);
    expect(o.violations[0]).toMatch(/^ns\/a on s1 admissible for 11\.0 s without starting/);
    // Reported once per wait, not at every tick.
    o.tick(at(20));
    expect(o.violations).toHaveLength(1);
    expect(o.report()).toMatchObject({ longestWaitMs: 20_000, longestWaiter: 'ns/a' });
  });

  it('accepts a maintenance that starts within the limit and counts its wait', () => {
    const o = oracle();
    o.onMaintenance(sm('a', 's1'), false, at(0));
    o.onMaintenance(sm('a', 's1', 'InMaintenance'), false, at(9));
    o.tick(at(60));
    expect(o.report()).toEqual({ violations: [], longestWaitMs: 9_000, longestWaiter: 'ns/a', started: 1 });
  });

  it('does not count waits behind a full budget domain, and starts the clock when the slot frees', () => {
    const o = oracle();
    o.onMaintenance(sm('h', 's1', 'InMaintenance'), false, at(0));
    o.onMaintenance(sm('w', 's2'), false, at(0)); // rack a is full (1 of 1)
    o.onMaintenance(sm('x', 's3'), false, at(0)); // rack b has room, fleet has 1 of 2
    expect(o.admissible(at(0))).toEqual(['ns/x']);
    o.onMaintenance(sm('x', 's3', 'InMaintenance'), false, at(1));
    o.tick(at(30));
    expect(o.violations).toEqual([]);
    // The holder of rack a leaves: the fleet is at 1 of 2 again, so w may start, and must.
    o.onMaintenance(sm('h', 's1', 'InMaintenance'), true, at(30));
    expect(o.admissible(at(30))).toEqual(['ns/w']);
    o.tick(at(41));
    expect(o.violations).toEqual([expect.stringMatching(/^ns\/w on s2 admissible for 11\.0 s/)]);
  });

  it('does not count a wait on a busy server, without approval, before notBefore, or with the window shut', () => {
    let open = false;
    const o = oracle({ windowOpen: (m) => m.metadata.name !== 'win' || open });
    o.onMaintenance(sm('h', 's1', 'InMaintenance'), false, at(0));
    o.onMaintenance(sm('busy', 's1'), false, at(0));
    o.onMaintenance(sm('unapproved', 's3', 'Announced', { approved: false }), false, at(0));
    o.onMaintenance(
      sm('later', 's4', 'Approved', { notBefore: new Date(at(100)).toISOString() }),
      false,
      at(0),
    );
    o.onMaintenance(sm('win', 's3'), false, at(0));
    o.tick(at(99));
    expect(o.violations).toEqual([]);
    // notBefore passes: 'later' is admissible from the next look on.
    o.tick(at(100));
    o.tick(at(111));
    expect(o.violations).toEqual([expect.stringMatching(/^ns\/later /)]);
    open = true;
    o.tick(at(112));
    o.tick(at(123));
    expect(o.violations).toHaveLength(2);
    expect(o.violations[1]).toMatch(/^ns\/win /);
  });

  it('ignores a run without approval when told so', () => {
    const o = oracle({ approvalRequired: false });
    o.onMaintenance(sm('a', 's1', 'Pending', { approved: false }), false, at(0));
    o.tick(at(11));
    expect(o.violations).toHaveLength(1);
  });

  it('does not count the time a binary is down', () => {
    const o = oracle();
    o.onMaintenance(sm('a', 's1'), false, at(0));
    o.down('maintenance-controller', at(4));
    o.tick(at(30));
    o.up('maintenance-controller', at(30));
    o.tick(at(35));
    expect(o.violations).toEqual([]);
    expect(o.report().longestWaitMs).toBe(9_000);
    o.tick(at(37));
    expect(o.violations).toHaveLength(1);
  });

  it('rounds a percentage up as the contract does (25 % of 4 allows 1)', () => {
    const o = new IdleSlotOracle({ budgets: [fleet('25%')] });
    o.onMaintenance(sm('h', 's1', 'InMaintenance'), false, at(0));
    o.onMaintenance(sm('w', 's2'), false, at(0));
    expect(o.admissible(at(0))).toEqual([]);
    o.onMaintenance(sm('h', 's1', 'Completed'), false, at(1));
    expect(o.admissible(at(1))).toEqual(['ns/w']);
  });

  it('restarts the clock when a maintenance stops being admissible', () => {
    const o = oracle();
    o.onMaintenance(sm('a', 's1'), false, at(0));
    o.onMaintenance(sm('b', 's2', 'InMaintenance'), false, at(8)); // rack a full: a waits rightly
    o.onMaintenance(sm('b', 's2', 'InMaintenance'), true, at(20));
    o.tick(at(28));
    expect(o.violations).toEqual([]);
    expect(o.report().longestWaitMs).toBe(8_000);
  });
  it('counts the slot of an ended maintenance held while its grant is on the ledger, not after', () => {
    const o = oracle();
    const grant = (m: string, server: string) => ({ maintenanceUID: `uid-${m}`, server });
    o.onMaintenance(sm('h', 's1', 'InMaintenance'), false, at(0));
    o.onLedger('racks', [grant('h', 's1')], at(0));
    o.onMaintenance(sm('w', 's2'), false, at(0)); // rack a is full
    // h is done; its finalizer has not released its grant yet: the server is still unavailable.
    o.onMaintenance(sm('h', 's1', 'Completed'), false, at(1));
    expect(o.admissible(at(1))).toEqual([]);
    o.tick(at(30));
    expect(o.violations).toEqual([]);
    o.onLedger('racks', [], at(30));
    expect(o.admissible(at(30))).toEqual(['ns/w']);
    o.tick(at(41));
    expect(o.violations).toEqual([expect.stringMatching(/^ns\/w on s2 admissible for 11\.0 s/)]);
  });

  it('flags the slot a grant of a maintenance that never started holds (left to the TTL)', () => {
    const o = oracle();
    o.onMaintenance(sm('stale', 's1'), false, at(0));
    o.onMaintenance(sm('stale', 's1', 'Approved'), false, at(0));
    o.onMaintenance(sm('w', 's2'), false, at(0));
    // The eviction webhook granted `stale`, whose write then failed: the ledger is full, the world is not.
    o.onLedger('racks', [{ maintenanceUID: 'uid-stale', server: 's1' }], at(0));
    expect(o.admissible(at(0))).toEqual(['ns/stale', 'ns/w']);
    o.tick(at(11));
    expect(o.violations).toHaveLength(2);
  });
});
