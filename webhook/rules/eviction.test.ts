// The eviction rule: which writes are the disruption, approval, timing and exclusivity, and the grant
// plan an admitted InMaintenance transition reserves (room in one ledger: grants/plan.test.ts).
import type { ServerDisruptionBudget } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { DEFAULT_POLICY, type Policy } from '../../policies/schema.js';
import { Codes } from '../../contract/codes.js';
import { clone, ruleInput } from '../testdata/helpers.js';
import {
  find,
  loadReview,
  loadWorld,
  MAINTENANCE_CONTROLLER,
  request,
  type Fixtures,
} from '../testdata/load.js';
import { decideEviction } from './eviction.js';
import { type BudgetReservation } from '../grants/plan.js';

type World = ReturnType<typeof loadWorld>;

/** The status write moving maintenance `name` into InMaintenance, as the maintenance controller sends it. */
function transition(
  world: Fixtures,
  name: string,
  user = MAINTENANCE_CONTROLLER,
  mutate?: (m: ServerMaintenance) => void,
) {
  const old = clone(find(world.maintenances, name));
  mutate?.(old);
  const next = clone(old);
  next.status = { ...next.status, state: 'InMaintenance' };
  return request({
    kind: 'ServerMaintenance',
    subResource: 'status',
    operation: 'UPDATE',
    object: next,
    oldObject: old,
    user,
  });
}

function decide(
  name: string,
  opts: {
    world?: World;
    policy?: Policy;
    now?: Date;
    user?: string;
    mutate?: (m: ServerMaintenance) => void;
  } = {},
) {
  const world = opts.world ?? loadWorld();
  return decideEviction(
    ruleInput(transition(world, name, opts.user, opts.mutate), {
      world,
      ...(opts.policy ? { policy: opts.policy } : {}),
      ...(opts.now ? { now: opts.now } : {}),
    }),
  );
}

const denial = (outcome: ReturnType<typeof decideEviction>) => {
  if (outcome.kind !== 'decision') throw new Error(`expected a decision, got a plan (${outcome.source})`);
  return outcome.decision;
};
const plan = (outcome: ReturnType<typeof decideEviction>) => {
  if (outcome.kind !== 'grant')
    throw new Error(`expected a plan, got ${outcome.decision.code}: ${outcome.decision.message}`);
  return outcome;
};

describe('eviction: which writes are the disruption', () => {
  it('plans a grant for the fixture transition of an unclaimed server (no approval needed)', () => {
    const world = loadWorld();
    const out = plan(
      decideEviction(ruleInput(loadReview('maintenance-to-inmaintenance').request, { world })),
    );
    expect(out.source).toBe('NotRequired');
    expect(out.plan).toMatchObject({
      maintenance: { uid: 'uid-free', namespace: 'ops', name: 'm-free' },
      server: 'srv-free',
      reservations: [],
    });
  });

  it('lets other status writes through untouched', () => {
    const world = loadWorld();
    const old = find(world.maintenances, 'm-free');
    const next = clone(old);
    next.status = { state: 'Announced' };
    const out = decideEviction(
      ruleInput(
        request({
          kind: 'ServerMaintenance',
          subResource: 'status',
          operation: 'UPDATE',
          object: next,
          oldObject: old,
        }),
      ),
    );
    expect(denial(out).allowed).toBe(true);
    const stays = clone(find(world.maintenances, 'm-other'));
    expect(
      denial(
        decideEviction(
          ruleInput(
            request({
              kind: 'ServerMaintenance',
              subResource: 'status',
              operation: 'UPDATE',
              object: stays,
              oldObject: stays,
            }),
          ),
        ),
      ).allowed,
    ).toBe(true);
  });

  it('denies the transition to anybody but the maintenance controllers, before reserving anything', () => {
    expect(denial(decide('m-free', { user: 'alice' }))).toMatchObject({
      allowed: false,
      code: Codes.FORBIDDEN_WRITER,
      status: 403,
    });
  });

  it('asks to retry when the server is not in the cache', () => {
    const world = loadWorld();
    world.servers = world.servers.filter((s) => s.metadata.name !== 'srv-free');
    expect(denial(decide('m-free', { world }))).toMatchObject({
      code: Codes.SERVER_NOT_FOUND,
      status: 429,
      retryAfterSeconds: 10,
    });
  });
});

describe('eviction: approval', () => {
  it('denies a claimed server without approval and says when the deadline lets it through', () => {
    // claim-b has a consumer (an ownerReference), so the no-consumer auto-approval does not apply.
    const d = denial(decide('m2'));
    expect(d).toMatchObject({ allowed: false, code: Codes.APPROVAL_MISSING, status: 429 });
    expect(d.message).toContain('2026-03-16T12:00:00.000Z');
    expect(d.retryAfterSeconds).toBe(6 * 86400);
  });

  it('admits with the owner approval scoped to this maintenance uid only', () => {
    const world = loadWorld();
    find(world.claims, 'claim-b').spec.maintenance = {
      approvals: [{ maintenanceUID: 'uid-m2', approvedBy: 'bob' }],
    };
    expect(plan(decide('m2', { world })).source).toBe('Owner');
    find(world.claims, 'claim-b').spec.maintenance = { approvals: [{ maintenanceUID: 'uid-m1' }] };
    expect(denial(decide('m2', { world })).code).toBe(Codes.APPROVAL_MISSING);
  });

  it('admits on a standing Automatic approval once announced', () => {
    const world = loadWorld();
    find(world.claims, 'claim-b').spec.maintenance = { approvalMode: 'Automatic' };
    expect(plan(decide('m2', { world })).source).toBe('Standing');
    find(world.claims, 'claim-b').status = { phase: 'Bound' };
    expect(denial(decide('m2', { world })).message).toContain('not announced');
  });

  it('uses the policy default approval mode for claims that set none', () => {
    const policy = { ...DEFAULT_POLICY, approval: { defaultMode: 'Automatic' as const } };
    expect(plan(decide('m2', { policy })).source).toBe('Standing');
  });

  it('admits once the announced deadline passed, with a warning', () => {
    const out = plan(decide('m2', { now: new Date('2026-03-16T12:00:00Z') }));
    expect(out.source).toBe('Deadline');
    expect(out.warnings[0]).toContain('Deadline');
  });

  it('never lets a deadline run out before the class minimum notice', () => {
    const world = loadWorld();
    find(world.claims, 'claim-b').status!.maintenance!.announcements![0]!.deadline = '2026-03-09T13:00:00Z';
    // Planned minNotice is 24h: the deadline counts from 2026-03-10T12:00Z.
    expect(denial(decide('m2', { world, now: new Date('2026-03-10T11:59:00Z') })).code).toBe(
      Codes.APPROVAL_MISSING,
    );
    expect(plan(decide('m2', { world, now: new Date('2026-03-10T12:00:00Z') })).source).toBe('Deadline');
  });

  it('derives the deadline from the class when nothing states one', () => {
    const world = loadWorld();
    delete find(world.claims, 'claim-b').status!.maintenance!.announcements![0]!.deadline;
    expect(denial(decide('m2', { world, now: new Date('2026-03-16T11:59:59Z') })).code).toBe(
      Codes.APPROVAL_MISSING,
    );
    expect(plan(decide('m2', { world, now: new Date('2026-03-16T12:00:00Z') })).source).toBe('Deadline');
  });

  it('auto-approves a claim with no consumer after the policy delay', () => {
    // claim-a has no ownerReference: the default no-consumer rule (1h after announcement) applies.
    const out = plan(decide('m1'));
    expect(out.source).toBe('Policy');
    expect(out.warnings[0]).toContain('no-consumer');
    expect(denial(decide('m1', { now: new Date('2026-03-09T12:30:00Z') })).retryAfterSeconds).toBe(1800);
  });

  it('treats a configured consumer label as a consumer', () => {
    const world = loadWorld();
    find(world.claims, 'claim-a').metadata.annotations = { 'example.com/node': 'n1' };
    const policy = {
      ...DEFAULT_POLICY,
      autoApproval: { ...DEFAULT_POLICY.autoApproval, consumerLabels: ['example.com/node'] },
    };
    expect(denial(decide('m1', { world, policy })).code).toBe(Codes.APPROVAL_MISSING);
  });

  it("treats a claim written by a consumer's field manager (Gardener MCM by default) as consumed", () => {
    const world = loadWorld();
    const claim = find(world.claims, 'claim-a');
    claim.metadata.managedFields = [{ manager: 'kubectl-client-side-apply', operation: 'Update' }];
    expect(plan(decide('m1', { world })).source).toBe('Policy');
    claim.metadata.managedFields.push({ manager: 'mcm.ironcore.dev/field-owner', operation: 'Apply' });
    expect(denial(decide('m1', { world })).code).toBe(Codes.APPROVAL_MISSING);
    const none = {
      ...DEFAULT_POLICY,
      autoApproval: { ...DEFAULT_POLICY.autoApproval, consumerFieldManagers: [] },
    };
    expect(plan(decide('m1', { world, policy: none })).source).toBe('Policy');
  });

  it('does not mistake an inherited property name for a consumer label', () => {
    const policy = {
      ...DEFAULT_POLICY,
      autoApproval: { ...DEFAULT_POLICY.autoApproval, consumerLabels: ['constructor'] },
    };
    expect(plan(decide('m1', { policy })).source).toBe('Policy');
  });

  it('applies an Unanswered rule only to claims that neither approved nor deferred, in the listed namespaces', () => {
    const policy: Policy = {
      ...DEFAULT_POLICY,
      autoApproval: {
        consumerLabels: [],
        consumerFieldManagers: [],
        rules: [
          {
            name: 'silence',
            when: 'Unanswered',
            after: '12h',
            classes: ['Planned'],
            namespaces: ['tenant-a'],
          },
        ],
      },
    };
    expect(plan(decide('m2', { policy })).source).toBe('Policy');
    const elsewhere = {
      ...policy,
      autoApproval: {
        consumerLabels: [],
        consumerFieldManagers: [],
        rules: [{ ...policy.autoApproval.rules[0]!, namespaces: ['tenant-b'] }],
      },
    };
    expect(denial(decide('m2', { policy: elsewhere })).code).toBe(Codes.APPROVAL_MISSING);
    const wrongClass = {
      ...policy,
      autoApproval: {
        consumerLabels: [],
        consumerFieldManagers: [],
        rules: [{ ...policy.autoApproval.rules[0]!, classes: ['Urgent' as const] }],
      },
    };
    expect(denial(decide('m2', { policy: wrongClass })).code).toBe(Codes.APPROVAL_MISSING);
  });

  it('honours a deferral even over an approval, until it passes', () => {
    const world = loadWorld();
    find(world.claims, 'claim-b').spec.maintenance = {
      approvals: [{ maintenanceUID: 'uid-m2' }],
      deferrals: [{ maintenanceUID: 'uid-m2', until: '2026-03-12T12:00:00Z' }],
    };
    expect(denial(decide('m2', { world }))).toMatchObject({
      code: Codes.DEFERRED,
      retryAfterSeconds: 2 * 86400,
    });
    expect(plan(decide('m2', { world, now: new Date('2026-03-12T12:00:00Z') })).source).toBe('Owner');
  });

  it('needs no approval when the maintenance says so, or its class does', () => {
    expect(plan(decide('m2', { mutate: (m) => (m.spec.approval = { required: false }) })).source).toBe(
      'NotRequired',
    );
    expect(plan(decide('m2', { mutate: (m) => (m.spec.class = 'Emergency') })).source).toBe('NotRequired');
  });

  it('asks to retry when the claim of a claimed server is not in the cache', () => {
    const world = loadWorld();
    world.claims = world.claims.filter((c) => c.metadata.name !== 'claim-b');
    expect(denial(decide('m2', { world }))).toMatchObject({
      code: Codes.CLAIM_NOT_FOUND,
      retryAfterSeconds: 10,
    });
    // Also when no approval is needed: the tenant's budgets still have to be checked.
    expect(denial(decide('m2', { world, mutate: (m) => (m.spec.class = 'Emergency') })).code).toBe(
      Codes.CLAIM_NOT_FOUND,
    );
  });
});

describe('eviction: timing and exclusivity', () => {
  it('waits for notBefore', () => {
    const d = denial(
      decide('m-free', { mutate: (m) => (m.spec.approval = { notBefore: '2026-03-10T13:00:00Z' }) }),
    );
    expect(d).toMatchObject({ code: Codes.NOT_BEFORE, retryAfterSeconds: 3600 });
  });

  const berlin: Policy = {
    ...DEFAULT_POLICY,
    windows: [
      {
        name: 'nights',
        days: ['Mon', 'Tue', 'Wed', 'Thu'],
        start: '22:00',
        end: '04:00',
        timeZone: 'Europe/Berlin',
      },
    ],
  };

  it('starts window-bound classes only inside a window and says when the next opens', () => {
    const d = denial(decide('m-free', { policy: berlin }));
    expect(d.code).toBe(Codes.OUTSIDE_WINDOW);
    expect(d.message).toContain('2026-03-10T21:00:00.000Z');
    expect(d.retryAfterSeconds).toBe(9 * 3600);
    expect(
      plan(decide('m-free', { policy: berlin, now: new Date('2026-03-10T21:30:00Z') })).plan.server,
    ).toBe('srv-free');
  });

  it('lets classes that need no window through outside one', () => {
    expect(
      plan(decide('m-free', { policy: berlin, mutate: (m) => (m.spec.class = 'Urgent') })).plan.server,
    ).toBe('srv-free');
  });

  it('denies a second active maintenance on a server (typed status, index, legacy ref)', () => {
    const world = loadWorld();
    world.maintenances.push({
      metadata: { name: 'm-x', namespace: 'ops', uid: 'uid-x' },
      spec: { serverRef: { name: 'srv-maint' } },
      status: { state: 'Pending' },
    });
    expect(denial(decide('m-x', { world }))).toMatchObject({ code: Codes.SERVER_BUSY, status: 429 });

    const viaIndex = loadWorld();
    find(viaIndex.maintenances, 'm-other').spec.serverRef.name = 'srv-free';
    expect(denial(decide('m-free', { world: viaIndex })).message).toContain('ops/m-other');

    const legacy = loadWorld();
    find(legacy.servers, 'srv-free').spec.serverMaintenanceRef = { namespace: 'ops', name: 'old' };
    expect(denial(decide('m-free', { world: legacy })).code).toBe(Codes.SERVER_BUSY);
  });

  it('does not count finished maintenances as active', () => {
    const world = loadWorld();
    const other = find(world.maintenances, 'm-other');
    other.spec.serverRef.name = 'srv-free';
    other.status = { state: 'Completed' };
    expect(plan(decide('m-free', { world })).plan.finishedOnServer).toEqual(['uid-other']);
  });
});

describe('eviction: the grant plan', () => {
  const sdb = (
    name: string,
    extra: Partial<ServerDisruptionBudget['spec']> = {},
  ): ServerDisruptionBudget => ({
    metadata: { name, generation: 1 },
    spec: { serverSelector: {}, maxUnavailable: 1, ...extra },
    status: { observedGeneration: 1 },
  });

  it('lists every selecting budget in a fixed order with its domain and census', () => {
    const world = loadWorld();
    world.serverBudgets = [
      sdb('zeta'),
      sdb('alpha', { topologyKey: 'rack' }),
      sdb('pool-a', { serverSelector: { matchLabels: { pool: 'a' } } }),
    ];
    const claimBudget: ServerClaimDisruptionBudget = {
      metadata: { name: 'db', namespace: 'tenant-a' },
      spec: { claimSelector: { matchLabels: { app: 'db' } }, maxUnavailable: 1 },
    };
    world.claimBudgets = [
      claimBudget,
      { ...claimBudget, metadata: { name: 'other-ns', namespace: 'tenant-b' } },
    ];
    find(world.claims, 'claim-b').spec.maintenance = { approvals: [{ maintenanceUID: 'uid-m2' }] };
    const p = plan(decide('m2', { world })).plan;
    expect(p.claim).toEqual({ namespace: 'tenant-a', name: 'claim-b' });
    expect(p.reservations.map((r: BudgetReservation) => [r.ref.kind, r.ref.name, r.domain])).toEqual([
      ['ServerDisruptionBudget', 'alpha', 'r2'],
      ['ServerDisruptionBudget', 'zeta', ''],
      ['ServerClaimDisruptionBudget', 'db', ''],
    ]);
    // rack r2 holds srv-tainted, srv-maint (InMaintenance) and srv-claimed-2.
    expect(p.reservations[0]!.census).toEqual({ expected: 3, unavailable: ['srv-maint'] });
    expect(p.reservations[1]!.census.expected).toBe(7);
    expect([...p.reservations[1]!.census.unavailable].sort()).toEqual([
      'srv-cordoned',
      'srv-error',
      'srv-maint',
    ]);
    expect(p.reservations[2]!.census).toEqual({ expected: 2, unavailable: [] });
  });
});
