// Gang admission, the decision part: a member's InMaintenance write plans grants for every member
// that still needs one, or is refused with METAL_ERR_GANG_INCOMPLETE while a member is missing or may
// not start.
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import { Codes } from '../../contract/codes.js';
import { clone, ruleInput } from '../testdata/helpers.js';
import { find, loadWorld, MAINTENANCE_CONTROLLER, request } from '../testdata/load.js';
import { decideEviction } from './eviction.js';

type World = ReturnType<typeof loadWorld>;

/** The fixture world plus three free servers and a gang of `size` on them (members as given). */
function gangWorld(size: number, members = size): World {
  const world = loadWorld();
  const free = find(world.servers, 'srv-free');
  for (const i of [1, 2, 3]) {
    const s = clone(free);
    s.metadata = { ...s.metadata, name: `srv-g${i}`, uid: `u-srv-g${i}` };
    world.servers.push(s);
  }
  for (let i = 1; i <= members; i++) world.maintenances.push(member(i, size));
  const fleet: ServerDisruptionBudget = {
    metadata: { name: 'fleet', generation: 1 },
    spec: { serverSelector: {}, maxUnavailable: '50%' },
    status: { observedGeneration: 1 },
  };
  return { ...world, serverBudgets: [fleet] };
}

function member(i: number, size: number): ServerMaintenance {
  return {
    apiVersion: 'maintenance.metal.ironcore.dev/v1alpha1',
    kind: 'ServerMaintenance',
    metadata: { name: `g-${i}`, namespace: 'ops', uid: `uid-g${i}` },
    spec: { serverRef: { name: `srv-g${i}` }, gang: { name: 'bmc-a', size } },
    status: { state: 'Approved' },
  };
}

function decideMember(world: World, name: string) {
  const old = clone(find(world.maintenances, name));
  const next = clone(old);
  next.status = { ...next.status, state: 'InMaintenance' };
  const req = request({
    kind: 'ServerMaintenance',
    subResource: 'status',
    operation: 'UPDATE',
    object: next,
    oldObject: old,
    user: MAINTENANCE_CONTROLLER,
  });
  return decideEviction(ruleInput(req, { world }));
}

describe('eviction of a gang member', () => {
  it('plans the grants of every member that has none yet, each with its own server and budgets', () => {
    const out = decideMember(gangWorld(3), 'g-2');
    if (out.kind !== 'grant') throw new Error(`expected a plan, got ${out.decision.message}`);
    expect(out.plan.maintenance.uid).toBe('uid-g2');
    const members = out.plan.members ?? [];
    expect(members.map((p) => [p.maintenance.uid, p.server])).toEqual([
      ['uid-g1', 'srv-g1'],
      ['uid-g3', 'srv-g3'],
    ]);
    for (const p of members) expect(p.reservations.map((r) => r.ref.name)).toEqual(['fleet']);
  });

  it('refuses with GangIncomplete (retryable) while fewer than size members are in the cache', () => {
    const out = decideMember(gangWorld(3, 2), 'g-1');
    if (out.kind !== 'decision') throw new Error('expected a refusal');
    expect(out.decision).toMatchObject({ allowed: false, code: Codes.GANG_INCOMPLETE, status: 429 });
    expect(out.decision.message).toContain('2 of its 3 members');
  });

  it('refuses with GangIncomplete while another member may not start, naming it and its reason', () => {
    const world = gangWorld(2);
    // g-2's server is held by another maintenance.
    world.maintenances.push({
      ...clone(find(world.maintenances, 'm-other')),
      metadata: { name: 'm-holds-g2', namespace: 'ops', uid: 'uid-holds-g2' },
      spec: { serverRef: { name: 'srv-g2' } },
    });
    const out = decideMember(world, 'g-1');
    if (out.kind !== 'decision') throw new Error('expected a refusal');
    expect(out.decision.code).toBe(Codes.GANG_INCOMPLETE);
    expect(out.decision.message).toContain('ops/g-2');
    expect(out.decision.message).toContain(Codes.SERVER_BUSY);
  });

  it('leaves out members that are running or finished: they need no grant from this write', () => {
    const world = gangWorld(3);
    find(world.maintenances, 'g-1').status = { state: 'InMaintenance' };
    find(world.maintenances, 'g-3').status = { state: 'Completed' };
    const out = decideMember(world, 'g-2');
    if (out.kind !== 'grant') throw new Error(`expected a plan, got ${out.decision.message}`);
    expect(out.plan.members).toEqual([]);
  });

  it('plans a maintenance without a gang alone, as before', () => {
    const out = decideMember(gangWorld(2), 'm-free');
    if (out.kind !== 'grant') throw new Error('expected a plan');
    expect(out.plan.members).toBeUndefined();
  });
});
