// The simulator's pure decisions: the server state machine, upstream claimability, park/unpark,
// claim binding steps and the actor's hold.
import { describe, expect, it } from '@jest/globals';
import type { Server } from '../../../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../../../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import {
  CLAIM_FINALIZER,
  HOLD_ANNOTATION,
  OPERATION_ANNOTATION,
  PARKED_ANNOTATION,
  actorMayStart,
  chooseServer,
  isCandidate,
  notClaimableReason,
  planClaim,
  planHold,
  planServer,
  powerStep,
  type ClaimLookup,
} from './decisions.js';
import { planFleet } from './fleet.js';

const t = { discoveryMs: 100, powerMs: 50 };
const none: ClaimLookup = { claim: undefined };

function server(
  name: string,
  patch: Partial<Server['spec']> = {},
  status: Server['status'] = {},
  annotations?: Record<string, string>,
): Server {
  return {
    metadata: { name, labels: { rack: name.slice(0, 2) }, annotations, resourceVersion: '1' },
    spec: { systemUUID: `uuid-${name}`, ...patch },
    status,
  };
}

function claim(
  name: string,
  spec: Partial<ServerClaim['spec']> = {},
  meta: Partial<ServerClaim['metadata']> = {},
): ServerClaim {
  return {
    metadata: { name, namespace: 'tenant-a', finalizers: [CLAIM_FINALIZER], ...meta },
    spec: { power: 'On', image: 'img', ...spec },
    status: { phase: 'Unbound' },
  };
}

const available = (name: string, spec: Partial<Server['spec']> = {}) =>
  server(name, spec, { state: 'Available', powerState: 'Off' });

describe('planServer: state machine', () => {
  it('gives a new server Initial and power Off', () => {
    expect(planServer(server('s1'), none, 0, t).status).toEqual({ state: 'Initial', powerState: 'Off' });
  });

  it('waits in Initial and Discovery for the discovery time, then moves on', () => {
    const initial = server('s1', {}, { state: 'Initial', powerState: 'Off' });
    expect(planServer(initial, none, 40, t)).toMatchObject({ waitMs: 60 });
    expect(planServer(initial, none, 100, t).status).toEqual({ state: 'Discovery', powerState: 'On' });
    const discovery = server('s1', {}, { state: 'Discovery', powerState: 'On' });
    expect(planServer(discovery, none, 100, t).status).toEqual({ state: 'Available', powerState: 'Off' });
  });

  it('reserves an Available server once a claim is bound, then powers it as the claim says', () => {
    const c = claim('c1');
    const bound = available('s1', { serverClaimRef: { name: 'c1', namespace: 'tenant-a' } });
    expect(planServer(bound, { claim: c }, 0, t).status).toEqual({ state: 'Reserved' });
    const reserved = server('s1', bound.spec, { state: 'Reserved', powerState: 'Off' });
    expect(planServer(reserved, { claim: c }, 0, t).status).toEqual({ powerState: 'PoweringOn' });
    const powering = server('s1', bound.spec, { state: 'Reserved', powerState: 'PoweringOn' });
    expect(planServer(powering, { claim: c }, 10, t)).toMatchObject({ waitMs: 40 });
    expect(planServer(powering, { claim: c }, 60, t).status).toEqual({ powerState: 'On' });
    const on = server('s1', bound.spec, { state: 'Reserved', powerState: 'On' });
    expect(planServer(on, { claim: c }, 0, t)).toEqual({ why: 'steady' });
    expect(planServer(on, { claim: claim('c1', { power: 'Off' }) }, 0, t).status).toEqual({
      powerState: 'PoweringOff',
    });
  });

  it('releases a server whose claim is gone: power off first, then clear the reference', () => {
    const spec = { serverClaimRef: { name: 'c1', namespace: 'tenant-a' } };
    const on = server('s1', spec, { state: 'Reserved', powerState: 'On' });
    expect(planServer(on, none, 0, t).status).toEqual({ powerState: 'PoweringOff' });
    const off = server('s1', spec, { state: 'Reserved', powerState: 'Off' });
    expect(planServer(off, none, 0, t)).toMatchObject({ status: { state: 'Available' }, releaseClaim: true });
    const deleting = claim('c1', {}, { deletionTimestamp: '2026-01-01T00:00:00Z' });
    expect(planServer(off, { claim: deleting }, 0, t)).toMatchObject({ releaseClaim: true });
  });

  it('keeps the reference of a Retain server and marks it Released', () => {
    const off = server(
      's1',
      { reclaimPolicy: 'Retain', serverClaimRef: { name: 'c1', namespace: 'tenant-a' } },
      { state: 'Reserved', powerState: 'Off' },
    );
    const step = planServer(off, none, 0, t);
    expect(step.status).toEqual({ state: 'Released' });
    expect(step.releaseClaim).toBeUndefined();
  });
});

describe('planServer: park and unpark', () => {
  const spec = { serverClaimRef: { name: 'c1', namespace: 'tenant-a' } };

  it('parks a Reserved server: powers off, then state Parked, marker set, request removed', () => {
    const on = server(
      's1',
      spec,
      { state: 'Reserved', powerState: 'On' },
      { [OPERATION_ANNOTATION]: 'park' },
    );
    expect(planServer(on, { claim: claim('c1') }, 0, t).status).toEqual({ powerState: 'PoweringOff' });
    const off = server(
      's1',
      spec,
      { state: 'Reserved', powerState: 'Off' },
      { [OPERATION_ANNOTATION]: 'park' },
    );
    expect(planServer(off, { claim: claim('c1') }, 0, t)).toMatchObject({
      status: { state: 'Parked' },
      annotations: { [PARKED_ANNOTATION]: 'true', [OPERATION_ANNOTATION]: null },
    });
  });

  it('finishes a park whose status landed but whose marker did not', () => {
    const half = server(
      's1',
      spec,
      { state: 'Parked', powerState: 'Off' },
      { [OPERATION_ANNOTATION]: 'park' },
    );
    expect(planServer(half, { claim: claim('c1') }, 0, t).annotations).toEqual({
      [PARKED_ANNOTATION]: 'true',
      [OPERATION_ANNOTATION]: null,
    });
  });

  it('discovers a server still in Initial before parking it, instead of waiting forever', () => {
    const park = { [OPERATION_ANNOTATION]: 'park' };
    const initial = server('s1', {}, { state: 'Initial', powerState: 'Off' }, park);
    expect(planServer(initial, none, t.discoveryMs, t).status).toEqual({
      state: 'Discovery',
      powerState: 'On',
    });
    // Discovery is parkable: the park proceeds (here with its power-off).
    const discovering = server('s1', {}, { state: 'Discovery', powerState: 'On' }, park);
    expect(planServer(discovering, none, 0, t)).toMatchObject({ why: 'power Off: start' });
    const instant = { ...t, powerMs: 0 };
    expect(planServer(discovering, none, 0, instant).status).toEqual({ state: 'Parked', powerState: 'Off' });
  });

  it('does not park a server in Error; waits instead', () => {
    const broken = server(
      's1',
      {},
      { state: 'Error', powerState: 'Off' },
      { [OPERATION_ANNOTATION]: 'park' },
    );
    expect(planServer(broken, none, 0, t)).toMatchObject({ waitMs: 1000 });
  });

  it('leaves a parked server alone: no power healing, no reservation', () => {
    const parked = server(
      's1',
      spec,
      { state: 'Parked', powerState: 'Off' },
      { [PARKED_ANNOTATION]: 'true' },
    );
    expect(planServer(parked, { claim: claim('c1') }, 0, t).status).toBeUndefined();
  });

  it('unparks back to Reserved with a claim, Available without; power comes back afterwards', () => {
    const ann = { [PARKED_ANNOTATION]: 'true', [OPERATION_ANNOTATION]: 'unpark' };
    const claimed = server('s1', spec, { state: 'Parked', powerState: 'Off' }, ann);
    expect(planServer(claimed, { claim: claim('c1') }, 0, t)).toMatchObject({
      status: { state: 'Reserved' },
      annotations: { [PARKED_ANNOTATION]: null, [OPERATION_ANNOTATION]: null },
    });
    const free = server('s1', {}, { state: 'Parked', powerState: 'Off' }, ann);
    expect(planServer(free, none, 0, t).status).toEqual({ state: 'Available' });
  });

  it('with instant power, parks and unparks in one status write each', () => {
    const instant = { ...t, powerMs: 0 };
    const on = server(
      's1',
      spec,
      { state: 'Reserved', powerState: 'On' },
      { [OPERATION_ANNOTATION]: 'park' },
    );
    expect(planServer(on, { claim: claim('c1') }, 0, instant)).toMatchObject({
      status: { powerState: 'Off', state: 'Parked' },
      annotations: { [PARKED_ANNOTATION]: 'true', [OPERATION_ANNOTATION]: null },
    });
    const ann = { [PARKED_ANNOTATION]: 'true', [OPERATION_ANNOTATION]: 'unpark' };
    const parked = server('s1', spec, { state: 'Parked', powerState: 'Off' }, ann);
    const wantsOn = { claim: { ...claim('c1'), spec: { ...claim('c1').spec, power: 'On' as const } } };
    expect(planServer(parked, wantsOn, 0, instant).status).toEqual({ powerState: 'On', state: 'Reserved' });
    const free = server('s1', {}, { state: 'Parked', powerState: 'Off' }, ann);
    expect(planServer(free, none, 0, instant).status).toEqual({ state: 'Available' });
  });

  it('drops an unpark of a server that is not parked', () => {
    const on = server(
      's1',
      spec,
      { state: 'Reserved', powerState: 'On' },
      { [OPERATION_ANNOTATION]: 'unpark' },
    );
    expect(planServer(on, { claim: claim('c1') }, 0, t)).toMatchObject({
      annotations: { [OPERATION_ANNOTATION]: null },
    });
  });
});

describe('claimability (upstream isServerClaimable)', () => {
  const c = claim('c1');

  it('accepts an Available, powered-off, uncordoned, unbound server', () => {
    expect(notClaimableReason(available('s1'), c)).toBeUndefined();
  });

  it.each([
    [
      'bound to another claim',
      available('s1', { serverClaimRef: { name: 'other', namespace: 'tenant-a' } }),
      'bound',
    ],
    ['Reserved', server('s1', {}, { state: 'Reserved', powerState: 'Off' }), 'state Reserved'],
    ['Parked', server('s1', {}, { state: 'Parked', powerState: 'Off' }), 'state Parked'],
    ['cordoned', available('s1', { unclaimable: true }), 'unclaimable'],
    ['powered on', server('s1', {}, { state: 'Available', powerState: 'On' }), 'power On'],
    ['tainted NoBind', available('s1', { taints: [{ key: 'k', value: 'v' }] }), 'tainted'],
  ])('refuses a server that is %s', (_what, s, reason) => {
    expect(notClaimableReason(s, c)).toBe(reason);
  });

  it('accepts its own binding and a tolerated or non-NoBind taint', () => {
    expect(
      notClaimableReason(available('s1', { serverClaimRef: { name: 'c1', namespace: 'tenant-a' } }), c),
    ).toBeUndefined();
    const tainted = available('s1', {
      taints: [
        { key: 'k', value: 'v', effect: 'NoBind' },
        { key: 'e', effect: 'Evict' },
      ],
    });
    expect(
      notClaimableReason(tainted, claim('c1', { tolerations: [{ key: 'k', operator: 'Exists' }] })),
    ).toBeUndefined();
    expect(notClaimableReason(tainted, claim('c1', { tolerations: [{ key: 'k', value: 'other' }] }))).toBe(
      'tainted',
    );
  });

  it('picks candidates by serverRef (and selector), by selector, or any server', () => {
    const s = available('r1-01');
    expect(isCandidate(s, claim('c', { serverRef: { name: 'r1-01' } }))).toBe(true);
    expect(isCandidate(s, claim('c', { serverRef: { name: 'r1-02' } }))).toBe(false);
    expect(
      isCandidate(
        s,
        claim('c', { serverRef: { name: 'r1-01' }, serverSelector: { matchLabels: { rack: 'r2' } } }),
      ),
    ).toBe(false);
    expect(isCandidate(s, claim('c', { serverSelector: { matchLabels: { rack: 'r1' } } }))).toBe(true);
    expect(isCandidate(s, claim('c'))).toBe(true);
  });

  it('takes the first claimable candidate in order, skipping ones being bound', () => {
    const list = [
      server('a', {}, { state: 'Initial' }),
      available('b', { unclaimable: true }),
      available('c'),
      available('d'),
    ];
    expect(chooseServer(list, claim('x'))?.metadata.name).toBe('c');
    expect(chooseServer(list, claim('x'), new Set(['c']))?.metadata.name).toBe('d');
    expect(chooseServer(list.slice(0, 2), claim('x'))).toBeUndefined();
  });
});

describe('planClaim', () => {
  const noServer = () => undefined;

  it('adds the finalizer first, then the Unbound phase', () => {
    expect(planClaim(claim('c', {}, { finalizers: [] }), undefined, noServer)).toEqual({
      kind: 'addFinalizer',
    });
    const fresh = { ...claim('c'), status: undefined };
    expect(planClaim(fresh, undefined, noServer)).toEqual({ kind: 'phase', phase: 'Unbound' });
  });

  it('binds the chosen server, records serverRef, then Bound once the server is Reserved', () => {
    expect(planClaim(claim('c'), undefined, () => available('s9'))).toEqual({ kind: 'bind', server: 's9' });
    const ref = { serverClaimRef: { name: 'c', namespace: 'tenant-a' } };
    const boundAvailable = available('s9', ref);
    expect(planClaim(claim('c'), boundAvailable, noServer)).toEqual({
      kind: 'recordServerRef',
      server: 's9',
    });
    const withRef = claim('c', { serverRef: { name: 's9' } });
    expect(planClaim(withRef, boundAvailable, noServer).kind).toBe('wait');
    const reserved = server('s9', ref, { state: 'Reserved', powerState: 'On' });
    expect(planClaim(withRef, reserved, noServer)).toEqual({ kind: 'phase', phase: 'Bound' });
  });

  it('waits while nothing is claimable and when already Bound', () => {
    expect(planClaim(claim('c'), undefined, noServer)).toEqual({ kind: 'wait', why: 'no claimable server' });
    const bound = { ...claim('c', { serverRef: { name: 's9' } }), status: { phase: 'Bound' } };
    const reserved = server(
      's9',
      { serverClaimRef: { name: 'c', namespace: 'tenant-a' } },
      { state: 'Reserved' },
    );
    expect(planClaim(bound, reserved, noServer)).toEqual({ kind: 'wait', why: 'bound' });
  });

  it('on deletion keeps the finalizer until the server is released', () => {
    const deleting = claim('c', {}, { deletionTimestamp: '2026-01-01T00:00:00Z' });
    const reserved = server(
      's9',
      { serverClaimRef: { name: 'c', namespace: 'tenant-a' } },
      { state: 'Reserved' },
    );
    expect(planClaim(deleting, reserved, noServer).kind).toBe('wait');
    expect(planClaim(deleting, undefined, noServer)).toEqual({ kind: 'removeFinalizer' });
  });
});

describe('powerStep', () => {
  it('goes through the transitional state and is done when there', () => {
    expect(powerStep('Off', 'On', 0, t)?.status).toEqual({ powerState: 'PoweringOn' });
    expect(powerStep(undefined, 'Off', 0, t)?.status).toEqual({ powerState: 'PoweringOff' });
    expect(powerStep('On', 'On', 0, t)).toBeUndefined();
    expect(powerStep('On', 'Off', 0, { ...t, powerMs: 0 })?.status).toEqual({ powerState: 'Off' });
  });
});

describe('planHold (the simulated actor)', () => {
  const ready = {
    type: 'Ready',
    status: 'True' as 'True' | 'False',
    reason: 'Parked',
    message: '',
    lastTransitionTime: '2026-01-01T00:00:00Z',
  };
  const m = (
    state: string,
    annotations?: Record<string, string>,
    conditions = [ready],
  ): ServerMaintenance => ({
    metadata: { name: 'm', namespace: 'ops', annotations },
    spec: { serverRef: { name: 's1' } },
    status: { state, conditions },
  });

  it('waits until InMaintenance and Ready, holds for the hold time, then deletes', () => {
    expect(planHold(m('Approved'), 1000, undefined, 500)).toEqual({ kind: 'wait' });
    expect(planHold(m('InMaintenance', undefined, []), 1000, undefined, 500)).toEqual({ kind: 'wait' });
    expect(planHold(m('InMaintenance'), 1200, 1000, 500)).toEqual({ kind: 'wait', ms: 300 });
    expect(planHold(m('InMaintenance'), 1500, 1000, 500)).toEqual({ kind: 'delete' });
  });

  it('can start at InMaintenance alone', () => {
    expect(actorMayStart(m('InMaintenance', undefined, []), 'InMaintenance')).toBe(true);
    expect(actorMayStart(m('InMaintenance', undefined, [{ ...ready, status: 'False' }]), 'Ready')).toBe(
      false,
    );
    expect(planHold(m('InMaintenance', undefined, []), 1500, 1000, 500, 'InMaintenance')).toEqual({
      kind: 'delete',
    });
  });

  it('reads the hold annotation: a duration, or forever', () => {
    expect(planHold(m('InMaintenance', { [HOLD_ANNOTATION]: '2s' }), 1500, 1000, 500)).toEqual({
      kind: 'wait',
      ms: 1500,
    });
    expect(planHold(m('InMaintenance', { [HOLD_ANNOTATION]: 'forever' }), 99_000, 1000, 500)).toEqual({
      kind: 'wait',
    });
  });
});

describe('planFleet', () => {
  it('spreads servers over racks and claims over tenants, each claim on its own server', () => {
    const plan = planFleet({
      servers: 50,
      racks: 5,
      tenants: 4,
      claimMode: 'serverRef',
      fleetBudget: 5,
      rackBudget: 1,
      tenantBudget: 2,
    });
    expect(plan.servers).toHaveLength(50);
    expect(
      new Set(plan.servers.map((s) => s.metadata.labels!['metadata.metal.ironcore.dev/rack'])).size,
    ).toBe(5);
    expect(plan.claims).toHaveLength(40);
    expect(new Set(plan.claims.map((c) => c.spec.serverRef!.name)).size).toBe(40);
    expect(new Set(plan.claims.map((c) => c.metadata.namespace))).toEqual(new Set(plan.namespaces));
    expect(plan.serverBudgets.map((b) => b.spec.topologyKey)).toEqual([
      undefined,
      'metadata.metal.ironcore.dev/rack',
    ]);
    expect(plan.claimBudgets).toHaveLength(4);
  });

  it('prebinds servers and claims both ways when asked', () => {
    const plan = planFleet({ servers: 10, racks: 2, tenants: 2, claimsPerTenant: 3, prebound: true });
    const bound = plan.servers.filter((s) => s.spec.serverClaimRef);
    expect(bound).toHaveLength(6);
    for (const c of plan.claims) {
      const s = plan.servers.find((x) => x.metadata.name === c.spec.serverRef!.name)!;
      expect(s.spec.serverClaimRef).toEqual({ name: c.metadata.name, namespace: c.metadata.namespace });
      expect(c.metadata.finalizers).toEqual([CLAIM_FINALIZER]);
    }
  });
});
