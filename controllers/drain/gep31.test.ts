import { describe, expect, it } from '@jest/globals';
import type { Announcement, ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import { DEFAULT_POLICY } from '../../policies/schema.js';
import { IN_PLACE_UPDATE_FOR_ANNOTATION as OURS } from '../../contract/names.js';
import { rfc3339 } from '../../contract/time.js';
import { planDrain, settle, type DrainInput } from './decide.js';
import { budgetBlockers, GEP31, planHandshake } from './gep31.js';
import type { Node, Pdb, Pod } from './workload-types.js';

const OWNER = 'tenant/c1';
const NOW = Date.parse('2026-08-21T22:00:00Z');

const node = (labels: Record<string, string> = {}, annotations: Record<string, string> = {}): Node => ({
  metadata: { name: 'n1', resourceVersion: '3', labels, annotations },
  spec: {},
});
const mine = (labels: Record<string, string> = {}) => node(labels, { [OURS]: OWNER });

describe('planHandshake', () => {
  it('marks an announced Node candidate, and selects it once a maintenance is within its lead time', () => {
    expect(planHandshake(node(), OWNER, true, false)).toEqual({
      state: 'candidate',
      marks: { labels: { [GEP31.candidate]: 'true' }, annotations: { [OURS]: OWNER } },
      pending: true,
    });
    expect(planHandshake(node(), OWNER, true, true).marks?.labels).toEqual({
      [GEP31.candidate]: 'true',
      [GEP31.selected]: 'true',
    });
    expect(planHandshake(mine({ [GEP31.candidate]: 'true' }), OWNER, true, true)).toEqual({
      state: 'selected',
      marks: { labels: { [GEP31.selected]: 'true' }, annotations: {} },
      pending: true,
    });
    // Nothing left to write while MCM drains.
    const selected = mine({ [GEP31.candidate]: 'true', [GEP31.selected]: 'true' });
    expect(planHandshake(selected, OWNER, true, true)).toEqual({ state: 'selected', pending: true });
  });

  it('is drained when MCM labels ready-for-update, and only then', () => {
    const ready = mine({ [GEP31.candidate]: 'true', [GEP31.selected]: 'true', [GEP31.ready]: 'true' });
    expect(planHandshake(ready, OWNER, true, true)).toEqual({ state: 'ready', pending: true });
    // Ready before our lead time is not ours to act on yet.
    expect(planHandshake(ready, OWNER, true, false).state).toBe('candidate');
  });

  it('never joins an in-place update it did not start', () => {
    const theirs = node({ [GEP31.candidate]: 'true', [GEP31.selected]: 'true' });
    expect(planHandshake(theirs, OWNER, true, true)).toEqual({ state: 'others', pending: false });
    expect(planHandshake(node({}, { [OURS]: 'other/claim' }), OWNER, false, false)).toEqual({
      state: 'idle',
      pending: false,
    });
    // A candidate label alone (MCM marks a changed pool) is no update in flight: we select it.
    expect(planHandshake(node({ [GEP31.candidate]: 'true' }), OWNER, true, true).state).toBe('selected');
  });

  it('after the maintenance: reports update-successful, waits for MCM to finish, then drops its annotation', () => {
    const ready = mine({ [GEP31.candidate]: 'true', [GEP31.selected]: 'true', [GEP31.ready]: 'true' });
    expect(planHandshake(ready, OWNER, false, false)).toEqual({
      state: 'finishing',
      marks: { labels: { [GEP31.successful]: 'true' }, annotations: {} },
      pending: true,
    });
    const reported = mine({ [GEP31.ready]: 'true', [GEP31.successful]: 'true' });
    expect(planHandshake(reported, OWNER, false, false)).toEqual({ state: 'finishing', pending: true });
    // MCM's step 7 removed every update label: only our annotation is left.
    expect(planHandshake(mine(), OWNER, false, false)).toEqual({
      state: 'idle',
      marks: {
        labels: { [GEP31.candidate]: null, [GEP31.selected]: null },
        annotations: { [OURS]: null },
      },
      pending: false,
    });
  });
});

const pod = (name: string, app: string, deleting = false): Pod => ({
  metadata: {
    name,
    namespace: 'shop',
    labels: { app },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs', controller: true }],
    ...(deleting ? { deletionTimestamp: rfc3339(NOW) } : {}),
  },
  spec: { nodeName: 'n1' },
  status: { phase: 'Running' },
});
const pdb = (name: string, app: string, allowed: number): Pdb => ({
  metadata: { name, namespace: 'shop' },
  spec: { selector: { matchLabels: { app } } },
  status: { disruptionsAllowed: allowed },
});

describe('budgetBlockers', () => {
  it('names the pods left whose budget allows no disruption now', () => {
    const pods = [pod('db-0', 'db'), pod('web-0', 'web'), pod('db-1', 'db', true)];
    const b = budgetBlockers(pods, [pdb('db', 'db', 0), pdb('web', 'web', 1)], rfc3339(NOW));
    expect(b).toEqual([
      {
        pod: 'shop/db-0',
        budget: 'shop/db',
        message: "PodDisruptionBudget shop/db allows 0 disruptions: the shoot's MCM cannot evict it now",
        since: rfc3339(NOW),
      },
    ]);
  });
});

describe('planDrain and settle with in-place updates', () => {
  const announcement: Announcement = {
    maintenanceUID: 'u1',
    maintenanceName: 'm1',
    maintenanceNamespace: 'ops',
    reason: 'FirmwareUpdate',
    class: 'Planned',
    announcedAt: rfc3339(NOW - 60_000),
    deadline: rfc3339(NOW + 3600_000),
    state: 'Announced',
  };
  const claim: ServerClaim = {
    metadata: { name: 'c1', namespace: 'tenant', uid: 'cu' },
    spec: { power: 'On', image: 'img' },
    status: { maintenance: { announcements: [announcement] } },
  };
  const input = (n: Node, pdbs: Pdb[] = []): DrainInput => ({
    claim,
    maintenances: new Map(),
    view: {
      kind: 'node',
      node: n,
      via: 'MCM Machine',
      pods: [pod('db-0', 'db')],
      capiManaged: false,
      gardener: { inPlaceUpdate: true, pdbs },
    },
    refusals: new Map(),
    policy: { ...DEFAULT_POLICY.drain, leadTime: '0s', timeout: '10m' },
    now: NOW,
  });

  it('neither cordons nor evicts: it selects the Node, defers, and names what holds MCM up', () => {
    const i = input(node(), [pdb('db', 'db', 0)]);
    const plan = planDrain(i);
    expect(plan).toMatchObject({ cordon: false, evict: [], left: ['shop/db-0'] });
    expect(plan.handshake?.marks?.labels).toEqual({ [GEP31.candidate]: 'true', [GEP31.selected]: 'true' });
    const s = settle(i, plan, new Map());
    expect(s.phase).toBe('Draining');
    expect(s.condition).toMatchObject({ reason: 'Blocked' });
    expect(s.condition.message).toContain("waiting for the shoot's MCM to drain it");
    expect(s.status.get('u1')?.blockers?.[0]).toMatchObject({ pod: 'shop/db-0', budget: 'shop/db' });
    expect(s.approvals).toEqual([]);
    expect(s.deferrals).toHaveLength(1);
  });

  it('approves once MCM says ready-for-update', () => {
    const i = input(mine({ [GEP31.candidate]: 'true', [GEP31.selected]: 'true', [GEP31.ready]: 'true' }));
    const plan = planDrain(i);
    const s = settle(i, plan, new Map());
    expect(s.phase).toBe('Drained');
    expect(s.condition.message).toContain('ready-for-update');
    expect(s.approvals).toEqual([{ maintenanceUID: 'u1', maintenanceName: 'm1' }]);
    expect(s.deferrals).toEqual([]);
  });
});
