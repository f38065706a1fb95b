// The approval controller's decisions, without I/O.
import { describe, expect, it } from '@jest/globals';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { Announcement, ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { DEFAULT_POLICY, type Policy } from '../../policies/schema.js';
import { canonicalJSON } from '../shared/canonical.js';
import { decideApproval, decideClaim, type ClaimInput } from './decide.js';
import { LEGACY_NEEDED_LABEL } from '../../contract/legacy-labels.js';

const T0 = Date.parse('2026-09-01T10:00:00Z');
const at = (s: number) => new Date(T0 + s * 1000);
const iso = (s: number) => at(s).toISOString().replace('.000Z', 'Z');

const policy: Policy = {
  ...DEFAULT_POLICY,
  classes: {
    Planned: { approvalRequired: true, deadline: '60s', minNotice: '10s', requireWindow: false },
    Urgent: { approvalRequired: true, deadline: '30s', minNotice: '0s', requireWindow: false },
    Emergency: { approvalRequired: false, deadline: '10s', minNotice: '0s', requireWindow: false },
  },
  autoApproval: {
    consumerLabels: ['example.com/consumer'],
    consumerFieldManagers: [],
    rules: [
      { name: 'no-consumer', when: 'NoConsumer', after: '20s', classes: ['Planned', 'Urgent', 'Emergency'] },
    ],
  },
};

const server: Server = {
  metadata: { name: 's1', uid: 'uid-s1' },
  spec: { systemUUID: 's1', serverClaimRef: { namespace: 't', name: 'c' } },
};
const unclaimed: Server = { metadata: { name: 's2' }, spec: { systemUUID: 's2' } };

function claim(
  spec: Partial<ServerClaim['spec']> = {},
  announcements?: Announcement[],
  labels?: Record<string, string>,
): ServerClaim {
  return {
    metadata: {
      name: 'c',
      namespace: 't',
      uid: 'uid-c',
      labels: { 'example.com/consumer': 'k8s', ...labels },
    },
    spec: { power: 'On', image: 'img', serverRef: { name: 's1' }, ...spec },
    ...(announcements ? { status: { maintenance: { announcements } } } : {}),
  };
}

function maint(
  name: string,
  spec: Partial<ServerMaintenance['spec']> = {},
  status?: ServerMaintenance['status'],
): ServerMaintenance {
  return {
    metadata: { name, namespace: 'ops', uid: `uid-${name}`, generation: 1, creationTimestamp: iso(-100) },
    spec: { serverRef: { name: 's1' }, ...spec },
    ...(status ? { status } : {}),
  };
}

function claimInput(over: Partial<ClaimInput>): ClaimInput {
  return { claim: claim(), server, maintenances: [], policy, now: at(0), ownsLegacyLabel: false, ...over };
}

const announced = (m: ServerMaintenance, s = -5): Announcement => ({
  maintenanceUID: m.metadata.uid!,
  maintenanceName: m.metadata.name!,
  maintenanceNamespace: 'ops',
  reason: 'Other',
  class: m.spec.class ?? 'Planned',
  announcedAt: iso(s),
  deadline: iso(s + 60),
  state: 'Announced',
});

describe('announcements on the claim', () => {
  it('announces every unfinished maintenance of its server with reason, class, notBefore and deadline', () => {
    const a = maint('a', { reason: 'FirmwareUpdate', class: 'Planned', approval: { notBefore: iso(30) } });
    const b = maint('b', { class: 'Urgent', priority: 5 });
    const done = maint('done', {}, { state: 'Failed' });
    const plan = decideClaim(claimInput({ maintenances: [a, b, done] }));
    expect(plan.announcements?.map((x) => x.maintenanceName)).toEqual(['b', 'a']);
    expect(plan.announcements?.find((x) => x.maintenanceName === 'a')).toMatchObject({
      reason: 'FirmwareUpdate',
      class: 'Planned',
      notBefore: iso(30),
      announcedAt: iso(0),
      deadline: iso(60),
      state: 'Announced',
    });
    expect(plan.announced.map((m) => m.metadata.name)).toEqual(['b', 'a']);
    expect(plan.legacyLabel).toBe(true);
  });

  it('keeps what the tenant was told: announcedAt and deadline do not move', () => {
    const a = maint('a');
    const plan = decideClaim(
      claimInput({
        claim: claim({}, [announced(a, -30)], { [LEGACY_NEEDED_LABEL]: 'true' }),
        maintenances: [a],
        now: at(5),
      }),
    );
    expect(plan.announcements).toBeUndefined();
    expect(plan.legacyLabel).toBeUndefined();
  });

  it('never sets a deadline earlier than the class minNotice', () => {
    const a = maint('a', { approval: { deadline: iso(2) } });
    const plan = decideClaim(claimInput({ maintenances: [a] }));
    expect(plan.announcements?.[0]?.deadline).toBe(iso(10));
  });

  it('shows a live deferral, and looks again when it ends', () => {
    const a = maint('a');
    const c = claim({ maintenance: { deferrals: [{ maintenanceUID: 'uid-a', until: iso(40) }] } }, [
      announced(a, -5),
    ]);
    const plan = decideClaim(claimInput({ claim: c, maintenances: [a] }));
    expect(plan.announcements?.[0]).toMatchObject({ state: 'Deferred', deferredUntil: iso(40) });
    expect(plan.requeueAfterMs).toBe(40_100);
  });

  it('clears announcements of a claim no longer bound to the server', () => {
    const a = maint('a');
    const plan = decideClaim(
      claimInput({
        claim: claim({}, [announced(a)]),
        server: unclaimed,
        maintenances: [a],
        ownsLegacyLabel: true,
      }),
    );
    expect(plan.announcements).toEqual([]);
    expect(plan.legacyLabel).toBe(false);
  });

  it('stops mirroring the legacy label in deny mode, removing only a label it set', () => {
    const deny = { ...policy, legacyLabels: { mode: 'deny' as const } };
    const a = maint('a');
    const mine = decideClaim(
      claimInput({
        claim: claim({}, [announced(a)], { [LEGACY_NEEDED_LABEL]: 'true' }),
        maintenances: [a],
        policy: deny,
        ownsLegacyLabel: true,
      }),
    );
    expect(mine.legacyLabel).toBe(false);
    const theirs = decideClaim(
      claimInput({
        claim: claim({}, [announced(a)], { [LEGACY_NEEDED_LABEL]: 'true' }),
        maintenances: [a],
        policy: deny,
      }),
    );
    expect(theirs.legacyLabel).toBeUndefined();
  });
});

const approvedCond = (s: ReturnType<typeof decideApproval>['status']) =>
  s?.conditions.find((c) => c.type === 'Approved');

describe('approval of one maintenance', () => {
  it("is the owner's approval of exactly this uid; approving M1 never approves M2", () => {
    const m1 = maint('m1');
    const m2 = maint('m2');
    const c = claim(
      {
        maintenance: { approvals: [{ maintenanceUID: 'uid-m1', approvedBy: 'alice', approvedAt: iso(-2) }] },
      },
      [announced(m1), announced(m2)],
    );
    const p1 = decideApproval({ m: m1, server, claim: c, policy, now: at(0) });
    expect(p1.status?.approval).toEqual({ source: 'Owner', approvedBy: 'alice', approvedAt: iso(-2) });
    expect(approvedCond(p1.status)?.reason).toBe('OwnerApproved');
    const p2 = decideApproval({ m: m2, server, claim: c, policy, now: at(0) });
    expect(p2.status?.approval).toBeUndefined();
    expect(approvedCond(p2.status)).toMatchObject({ status: 'False', reason: 'AwaitingApproval' });
    expect(p2.requeueAfterMs).toBe(55_100);
  });

  it("takes the claim's standing Automatic approval", () => {
    const m = maint('m');
    const c = claim({ maintenance: { approvalMode: 'Automatic' } }, [announced(m)]);
    expect(decideApproval({ m, server, claim: c, policy, now: at(0) }).status?.approval?.source).toBe(
      'Standing',
    );
  });

  it('escalates at the deadline with the condition and Event DeadlineReached', () => {
    const m = maint('m');
    const c = claim({}, [announced(m, -61)]);
    const plan = decideApproval({ m, server, claim: c, policy, now: at(0) });
    expect(plan.status?.approval?.source).toBe('Deadline');
    expect(approvedCond(plan.status)?.reason).toBe('DeadlineReached');
    expect(plan.events.filter((e) => e.reason === 'DeadlineReached').map((e) => e.onClaim)).toEqual([
      false,
      true,
    ]);
    // Said once: the next decision with the approval recorded raises no second Event.
    const again = decideApproval({
      m: { ...m, status: { ...plan.status!, state: 'Approved' } },
      server,
      claim: c,
      policy,
      now: at(1),
    });
    expect(again.events).toEqual([]);
  });

  it('writes nothing when the status read back from the API server (keys sorted) is what it would write', () => {
    const m = maint('m');
    const c = claim({ maintenance: { approvalMode: 'Automatic' } }, [announced(m)]);
    const first = decideApproval({ m, server, claim: c, policy, now: at(0) }).status!;
    const stored = JSON.parse(canonicalJSON({ ...first, state: 'Approved' })) as typeof first;
    expect(
      decideApproval({ m: { ...m, status: stored }, server, claim: c, policy, now: at(5) }).status,
    ).toBeUndefined();
  });

  it('follows the policy path for a claim nobody consumes', () => {
    const m = maint('m');
    const orphan: ServerClaim = {
      ...claim({}, [announced(m, -21)]),
      metadata: { name: 'c', namespace: 't', uid: 'uid-c' },
    };
    const plan = decideApproval({ m, server, claim: orphan, policy, now: at(0) });
    expect(plan.status?.approval).toMatchObject({ source: 'Policy', approvedBy: 'policy rule no-consumer' });
    // A claim with a consumer label waits for its owner (or the deadline).
    expect(
      decideApproval({ m, server, claim: claim({}, [announced(m, -21)]), policy, now: at(0) }).status
        ?.approval,
    ).toBeUndefined();
  });

  it('honours a deferral within the deadline even over an approval', () => {
    const m = maint('m');
    const c = claim(
      {
        maintenance: {
          approvals: [{ maintenanceUID: 'uid-m' }],
          deferrals: [{ maintenanceUID: 'uid-m', until: iso(30) }],
        },
      },
      [announced(m)],
    );
    const plan = decideApproval({ m, server, claim: c, policy, now: at(0) });
    expect(approvedCond(plan.status)).toMatchObject({ status: 'False', reason: 'Deferred' });
    expect(plan.requeueAfterMs).toBe(30_100);
  });

  it('needs no approval on an unclaimed server', () => {
    const m = maint('m', { serverRef: { name: 's2' } });
    const plan = decideApproval({ m, server: unclaimed, claim: undefined, policy, now: at(0) });
    expect(plan.status?.approval?.source).toBe('NotRequired');
    expect(plan.status?.conditions.find((c) => c.type === 'Announced')?.reason).toBe('Unclaimed');
  });

  it('waits for the announcement before any deadline runs', () => {
    const m = maint('m');
    const plan = decideApproval({ m, server, claim: claim(), policy, now: at(0) });
    expect(plan.status?.approval).toBeUndefined();
    expect(plan.status?.conditions.find((c) => c.type === 'Announced')?.reason).toBe('NotYetAnnounced');
  });

  it('records announcedAt and the deadline told to the tenant', () => {
    const m = maint('m');
    const plan = decideApproval({ m, server, claim: claim({}, [announced(m, -5)]), policy, now: at(0) });
    expect(plan.status).toMatchObject({ announcedAt: iso(-5), deadline: iso(55) });
    expect(plan.events.map((e) => e.reason)).toEqual(['Announced']);
  });

  it('decides nothing once the maintenance runs', () => {
    const m = maint('m', {}, { state: 'InMaintenance', approval: { source: 'Owner' } });
    expect(decideApproval({ m, server, claim: claim(), policy, now: at(0) })).toEqual({ events: [] });
  });
});

describe('the first approval status', () => {
  const fresh = (name: string, spec: Partial<ServerMaintenance['spec']> = {}) => {
    const m = maint(name, spec);
    return { ...m, metadata: { ...m.metadata, creationTimestamp: iso(-2) } };
  };

  it('waits for the announcement, then writes Announced and Approved at once', () => {
    const m = fresh('m1', { class: 'Emergency' });
    const early = decideApproval({ m, server, claim: claim(), policy, now: at(0) });
    expect(early.status).toBeUndefined();
    expect(early.events).toEqual([]);
    expect(early.requeueAfterMs).toBe(8000);
    const later = decideApproval({ m, server, claim: claim({}, [announced(m, -1)]), policy, now: at(0) });
    const reasons = later.status?.conditions.map((c) => `${c.type}=${c.reason}`);
    expect(reasons).toEqual(['Announced=Announced', 'Approved=NotRequired']);
    // One Event says both.
    expect(later.events).toEqual([
      expect.objectContaining({
        reason: 'NotRequired',
        note: expect.stringMatching(/^announced to claim .*; approved/),
      }),
    ]);
  });

  it('is written without the announcement once the grace has passed, or when nobody holds the server', () => {
    const m = fresh('m1', { class: 'Emergency' });
    expect(decideApproval({ m, server, claim: claim(), policy, now: at(9) }).status).toBeDefined();
    expect(
      decideApproval({ m, server: unclaimed, claim: undefined, policy, now: at(0) }).status,
    ).toBeDefined();
  });
});
