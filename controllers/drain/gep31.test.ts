import { describe, expect, it } from '@jest/globals';
import type { Announcement, ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import { DEFAULT_POLICY } from '../../policies/schema.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import {
  IN_PLACE_UPDATE_FOR_ANNOTATION as OURS,
  IN_PLACE_UPDATE_UIDS_ANNOTATION as UIDS,
} from '../../contract/names.js';
import { rfc3339 } from '../../contract/time.js';
import { planDrain, settle, type DrainInput } from './decide.js';
import { budgetBlockers, GEP31, GEP31_FAILED_REASON, planHandshake, updateOutcome } from './gep31.js';
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
        annotations: { [OURS]: null, [UIDS]: null },
      },
      pending: false,
    });
  });

  it('records the uids of the maintenances it selects the Node for, once each', () => {
    expect(planHandshake(node(), OWNER, true, true, { activeUIDs: ['u2', 'u1'] }).marks?.annotations).toEqual(
      {
        [OURS]: OWNER,
        [UIDS]: 'u1,u2',
      },
    );
    const selected = node(
      { [GEP31.candidate]: 'true', [GEP31.selected]: 'true' },
      { [OURS]: OWNER, [UIDS]: 'u1' },
    );
    expect(planHandshake(selected, OWNER, true, true, { activeUIDs: ['u1'] })).toEqual({
      state: 'selected',
      pending: true,
    });
    // A second maintenance within its lead time while MCM drains joins the record.
    expect(planHandshake(selected, OWNER, true, true, { activeUIDs: ['u1', 'u3'] }).marks).toEqual({
      labels: {},
      annotations: { [UIDS]: 'u1,u3' },
    });
  });

  describe('after the maintenance, the outcome', () => {
    const done = node(
      { [GEP31.candidate]: 'true', [GEP31.selected]: 'true', [GEP31.ready]: 'true' },
      { [OURS]: OWNER, [UIDS]: 'u1' },
    );
    const failed = sm('u1', 'Failed', {
      type: 'Failed',
      status: 'True',
      reason: 'MaxDurationExceeded',
      message: 'held longer than 4s',
    });

    it('reports update-failed with the reason when a maintenance it was for Failed', () => {
      expect(planHandshake(done, OWNER, false, false, { byUID: () => failed })).toEqual({
        state: 'failed',
        marks: {
          labels: { [GEP31.failed]: 'true' },
          annotations: {
            [GEP31_FAILED_REASON]:
              'ServerMaintenance ops/m-u1 failed: MaxDurationExceeded: held longer than 4s',
          },
        },
        pending: false,
      });
      // Reported: nothing more of ours to do while nothing is announced; a new announcement waits.
      const labelled = node({ ...done.metadata.labels, [GEP31.failed]: 'true' }, done.metadata.annotations);
      expect(planHandshake(labelled, OWNER, false, false, { byUID: () => failed })).toEqual({
        state: 'failed',
        pending: false,
      });
      expect(planHandshake(labelled, OWNER, true, true, { activeUIDs: ['u9'] })).toEqual({
        state: 'failed',
        pending: true,
      });
    });

    it('waits while the cache still shows the maintenance live, and reports success once it ended', () => {
      expect(planHandshake(done, OWNER, false, false, { byUID: () => sm('u1', 'InMaintenance') })).toEqual({
        state: 'finishing',
        pending: true,
      });
      for (const m of [
        undefined,
        sm('u1', 'Completed'),
        {
          ...sm('u1', 'InMaintenance'),
          metadata: { ...sm('u1', 'InMaintenance').metadata, deletionTimestamp: rfc3339(NOW) },
        },
      ])
        expect(planHandshake(done, OWNER, false, false, { byUID: () => m }).marks?.labels).toEqual({
          [GEP31.successful]: 'true',
        });
    });

    it('names every failed maintenance of the update, and only failed ones', () => {
      const byUID = (uid: string) =>
        uid === 'u1' ? failed : uid === 'u2' ? sm('u2', 'Failed') : sm(uid, 'Completed');
      expect(updateOutcome(['u1', 'u2', 'u3'], byUID)).toEqual({
        kind: 'failed',
        reason:
          'ServerMaintenance ops/m-u1 failed: MaxDurationExceeded: held longer than 4s; ServerMaintenance ops/m-u2 failed',
      });
      expect(updateOutcome(['u3'], byUID)).toEqual({ kind: 'successful' });
      expect(updateOutcome([], byUID)).toEqual({ kind: 'successful' });
    });
  });
});

function sm(uid: string, state: string, ...conditions: Record<string, string>[]): ServerMaintenance {
  return {
    metadata: { name: `m-${uid}`, namespace: 'ops', uid },
    status: { state, conditions },
  } as unknown as ServerMaintenance;
}

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

  it('holds a new drain while an earlier update-failed is on the Node, and says so', () => {
    const failedNode = mine({ [GEP31.ready]: 'true', [GEP31.failed]: 'true' });
    const i = input(failedNode);
    const plan = planDrain(i);
    expect(plan.handshake).toEqual({ state: 'failed', pending: true });
    const s = settle(i, plan, new Map());
    expect(s.phase).toBe('Draining');
    expect(s.condition.message).toContain('labelled update-failed from an earlier maintenance');
    expect(s.approvals).toEqual([]);
  });
});
