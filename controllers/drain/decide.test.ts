import { describe, expect, it } from '@jest/globals';
import type { Announcement, ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { DEFAULT_POLICY, type DrainPolicy } from '../../policies/schema.js';
import { CORDONED_FOR_ANNOTATION } from '../../contract/names.js';
import { rfc3339 } from '../../contract/time.js';
import {
  DEFERRAL_MS,
  planDrain,
  settle,
  type DrainInput,
  type EvictionResult,
  type Refusal,
} from './decide.js';
import { classifyPod, retryDelayMs } from './pods.js';
import type { Node, Pod } from './workload-types.js';

const NOW = Date.parse('2026-08-21T22:00:00Z');
const policy: DrainPolicy = { ...DEFAULT_POLICY.drain, timeout: '10m' };

const announcement = (over: Partial<Announcement> = {}): Announcement => ({
  maintenanceUID: 'u1',
  maintenanceName: 'm1',
  maintenanceNamespace: 'ops',
  reason: 'FirmwareUpdate',
  class: 'Planned',
  announcedAt: rfc3339(NOW - 60_000),
  deadline: rfc3339(NOW + 3600_000),
  state: 'Announced',
  ...over,
});

const claim = (announcements: Announcement[], spec: Partial<ServerClaim['spec']> = {}): ServerClaim => ({
  metadata: { name: 'c1', namespace: 'tenant', uid: 'cu' },
  spec: { power: 'On', image: 'img', ...spec },
  status: { maintenance: { announcements } },
});

const node = (over: Partial<Node['spec']> = {}, annotations: Record<string, string> = {}): Node => ({
  metadata: { name: 'n1', resourceVersion: '7', annotations },
  spec: { providerID: 'metal://tenant/c1', ...over },
});

const pod = (name: string, over: Partial<Pod> = {}): Pod => ({
  metadata: {
    name,
    namespace: 'shop',
    uid: name,
    labels: { app: 'web' },
    ownerReferences: [
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'rs', controller: true },
    ],
    ...over.metadata,
  },
  spec: { nodeName: 'n1', ...over.spec },
  status: { phase: 'Running', ...over.status },
});

function input(over: Partial<DrainInput> = {}): DrainInput {
  return {
    claim: claim([announcement()]),
    maintenances: new Map(),
    view: { kind: 'node', node: node(), via: 'providerID', pods: [pod('a'), pod('b')], capiManaged: false },
    refusals: new Map(),
    policy,
    now: NOW,
    ...over,
  };
}

describe('classifyPod', () => {
  it('skips DaemonSet, mirror and finished pods, and follows the policy for emptyDir and unmanaged pods', () => {
    const ds = pod('ds', {
      metadata: {
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'x', uid: 'd', controller: true },
        ],
      },
    });
    expect(classifyPod(ds, policy, false).kind).toBe('skip');
    const mirror = pod('m', {
      metadata: { annotations: { 'kubernetes.io/config.mirror': 'x' } },
    });
    expect(classifyPod(mirror, policy, false).kind).toBe('skip');
    expect(classifyPod(pod('done', { status: { phase: 'Succeeded' } }), policy, false).kind).toBe('skip');
    const bare = pod('bare', { metadata: { ownerReferences: [] } });
    expect(classifyPod(bare, policy, false)).toMatchObject({
      kind: 'block',
      why: expect.stringContaining('unmanagedPods'),
    });
    expect(classifyPod(bare, { ...policy, unmanagedPods: 'Evict' }, false).kind).toBe('evict');
    const scratch = pod('tmp', { spec: { volumes: [{ name: 'scratch', emptyDir: {} }] } });
    expect(classifyPod(scratch, policy, false)).toMatchObject({
      kind: 'block',
      why: expect.stringContaining('emptyDir'),
    });
    expect(classifyPod(scratch, { ...policy, emptyDirData: 'Delete' }, false).kind).toBe('evict');
  });

  it("honours Cluster API's drain label only on CAPI-managed Nodes", () => {
    const skip = pod('s', { metadata: { labels: { 'cluster.x-k8s.io/drain': 'skip' } } });
    const wait = pod('w', {
      metadata: { labels: { 'cluster.x-k8s.io/drain': 'wait-completed' } },
    });
    expect(classifyPod(skip, policy, true).kind).toBe('skip');
    expect(classifyPod(wait, policy, true).kind).toBe('block');
    expect(classifyPod(skip, policy, false).kind).toBe('evict');
  });

  it('backs off refused evictions exponentially up to 5 s', () => {
    expect([1, 2, 3, 6, 10].map(retryDelayMs)).toEqual([1000, 2000, 4000, 5000, 5000]);
  });
});

describe('planDrain', () => {
  it('cordons a schedulable Node and evicts its pods once the announcement is in its lead window', () => {
    const plan = planDrain(input());
    expect(plan).toMatchObject({
      cordon: true,
      uncordon: false,
      cordoned: 'ByUs',
      left: ['shop/a', 'shop/b'],
    });
    expect(plan.evict.map((p) => p.metadata.name)).toEqual(['a', 'b']);
  });

  it('waits until notBefore minus the lead time', () => {
    const early = claim([announcement({ notBefore: rfc3339(NOW + 120_000) })]);
    const plan = planDrain(input({ claim: early, policy: { ...policy, leadTime: '1m' } }));
    expect(plan).toMatchObject({ active: [], cordon: false, evict: [], waitUntil: NOW + 60_000 });
  });

  it("never takes over an admin's cordon, and never uncordons it", () => {
    const view = {
      kind: 'node' as const,
      node: node({ unschedulable: true }),
      via: 'p',
      pods: [],
      capiManaged: false,
    };
    expect(planDrain(input({ view }))).toMatchObject({ cordon: false, cordoned: 'ByOthers' });
    expect(planDrain(input({ view, claim: claim([]) }))).toMatchObject({ uncordon: false });
  });

  it('uncordons only a Node our annotation names, once nothing is announced', () => {
    const ours = node({ unschedulable: true }, { [CORDONED_FOR_ANNOTATION]: 'tenant/c1' });
    const view = { kind: 'node' as const, node: ours, via: 'p', pods: [], capiManaged: false };
    expect(planDrain(input({ view, claim: claim([]) })).uncordon).toBe(true);
    expect(planDrain(input({ view })).uncordon).toBe(false);
  });

  it('does not evict again a pod that is terminating, nor one refused less than its backoff ago', () => {
    const leaving = pod('a', { metadata: { deletionTimestamp: rfc3339(NOW) } });
    const refusals = new Map<string, Refusal>([
      ['shop/b', { message: '429', attempts: 2, since: NOW - 5000, lastAt: NOW - 1000 }],
    ]);
    const view = {
      kind: 'node' as const,
      node: node(),
      via: 'p',
      pods: [leaving, pod('b')],
      capiManaged: false,
    };
    const plan = planDrain(input({ view, refusals }));
    expect(plan.evict).toEqual([]);
    expect(plan.left).toEqual(['shop/a', 'shop/b']);
    expect(planDrain(input({ view, refusals, now: NOW + 1000 })).evict.map((p) => p.metadata.name)).toEqual([
      'b',
    ]);
  });
});

describe('planDrain retries per budget', () => {
  const refusal = (lastAt: number, budget?: string): Refusal => ({
    message: '429',
    ...(budget ? { budget } : {}),
    attempts: 5,
    since: NOW - 60_000,
    lastAt,
  });
  it('asks a refusing budget again once a second, with one of its pods', () => {
    const refusals = new Map([
      ['shop/a', refusal(NOW - 1000, 'shop/web')],
      ['shop/b', refusal(NOW - 1500, 'shop/web')],
    ]);
    expect(planDrain(input({ refusals })).evict.map((p) => p.metadata.name)).toEqual(['a']);
    const recent = new Map([
      ['shop/a', refusal(NOW - 500, 'shop/web')],
      ['shop/b', refusal(NOW - 1500, 'shop/web')],
    ]);
    expect(planDrain(input({ refusals: recent })).evict).toEqual([]);
    // Without a budget (an error), the pod's own backoff applies: 5 s after five attempts.
    const errors = new Map([['shop/a', refusal(NOW - 1000)]]);
    expect(planDrain(input({ refusals: errors })).evict.map((p) => p.metadata.name)).toEqual(['b']);
  });
});

describe('settle', () => {
  const refused: EvictionResult = {
    kind: 'refused',
    message: 'Cannot evict pod: The disruption budget web needs 2 healthy pods and has 2 currently',
    budget: 'shop/web',
  };

  it('names the blocker (pod, budget, message) at once and defers the maintenance with it', () => {
    const i = input();
    const s = settle(
      i,
      planDrain(i),
      new Map<string, EvictionResult>([
        ['shop/a', { kind: 'evicted' }],
        ['shop/b', refused],
      ]),
    );
    expect(s.phase).toBe('Draining');
    const status = s.status.get('u1')!;
    expect(status).toMatchObject({ node: 'n1', cordoned: 'ByUs', podsLeft: 2, startedAt: rfc3339(NOW) });
    expect(status.blockers).toEqual([
      { pod: 'shop/b', budget: 'shop/web', message: refused.message, attempts: 1, since: rfc3339(NOW) },
    ]);
    expect(s.condition).toMatchObject({ status: 'False', reason: 'Blocked' });
    expect(s.approvals).toEqual([]);
    expect(s.deferrals).toEqual([
      {
        maintenanceUID: 'u1',
        until: rfc3339(NOW + DEFERRAL_MS),
        reason: expect.stringContaining('shop/web'),
      },
    ]);
    expect(s.requeueAfterMs).toBeLessThanOrEqual(2000);
  });

  it('approves each pending maintenance once the Node is empty, and holds no deferral', () => {
    const view = { kind: 'node' as const, node: node(), via: 'p', pods: [], capiManaged: false };
    const i = input({
      view,
      claim: claim([announcement(), announcement({ maintenanceUID: 'u2', maintenanceName: 'm2' })]),
    });
    const s = settle(i, planDrain(i), new Map());
    expect(s.phase).toBe('Drained');
    expect(s.condition).toMatchObject({ status: 'True', reason: 'Drained' });
    expect(s.approvals.map((a) => a.maintenanceUID)).toEqual(['u1', 'u2']);
    expect(s.deferrals).toEqual([]);
  });

  it('at drainTimeout fails visibly (no approval, no deferral), or proceeds when the policy says so', () => {
    const m = {
      metadata: { uid: 'u1' },
      status: { drain: { phase: 'Draining', startedAt: rfc3339(NOW - 600_000) } },
    };
    const maintenances = new Map([['u1', m as unknown as ServerMaintenance]]);
    const fail = input({ maintenances });
    const s = settle(
      fail,
      planDrain(fail),
      new Map([
        ['shop/a', refused],
        ['shop/b', refused],
      ]),
    );
    expect(s.phase).toBe('TimedOut');
    expect(s.condition).toMatchObject({
      reason: 'DrainTimeout',
      message: expect.stringContaining('not approved'),
    });
    expect([s.approvals, s.deferrals]).toEqual([[], []]);
    const proceed = input({ maintenances, policy: { ...policy, onTimeout: 'Proceed' } });
    const p = settle(proceed, planDrain(proceed), new Map([['shop/a', refused]]));
    expect(p.phase).toBe('Proceeded');
    expect(p.approvals.map((a) => a.maintenanceUID)).toEqual(['u1']);
  });

  it('with the workload cluster unreachable: a visible condition, the deferral kept but not renewed', () => {
    const until = rfc3339(NOW + 60_000);
    const c = claim([announcement()], {
      maintenance: { deferrals: [{ maintenanceUID: 'u1', until, reason: 'x' }] },
    });
    const i = input({ claim: c, view: { kind: 'unreachable', message: 'connect ECONNREFUSED 127.0.0.1:1' } });
    const s = settle(i, planDrain(i), new Map());
    expect(s.phase).toBe('Unreachable');
    expect(s.condition).toMatchObject({ status: 'False', reason: 'WorkloadUnreachable' });
    expect(s.deferrals).toEqual([{ maintenanceUID: 'u1', until, reason: 'x' }]);
    expect(s.approvals).toEqual([]);
    // Without a deferral in force, none is written: the deadline path is not held up.
    const bare = input({ view: { kind: 'unreachable', message: 'down' } });
    expect(settle(bare, planDrain(bare), new Map()).deferrals).toEqual([]);
  });

  it('never defers past the deadline', () => {
    const c = claim([announcement({ deadline: rfc3339(NOW + 60_000) })]);
    const i = input({ claim: c });
    const s = settle(i, planDrain(i), new Map([['shop/a', refused]]));
    expect(s.deferrals[0]?.until).toBe(rfc3339(NOW + 60_000));
  });
});
