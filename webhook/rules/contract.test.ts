import type { ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerBoot } from '../../api/maintenance/v1alpha1/serverboot.js';
import { Codes } from '../../contract/codes.js';
import { clone, ruleInput } from '../testdata/helpers.js';
import {
  APPROVAL_CONTROLLER,
  DRAIN_CONTROLLER,
  find,
  loadReview,
  loadWorld,
  MAINTENANCE_CONTROLLER,
  request,
} from '../testdata/load.js';
import { contract, firmwareMaintenanceRefs } from './contract.js';

function claimUpdate(
  change: (c: ServerClaim) => void,
  base = 'claim-a',
  operation: 'UPDATE' | 'CREATE' = 'UPDATE',
) {
  const old = clone(find(loadWorld().claims, base));
  const next = clone(old);
  change(next);
  return contract(
    ruleInput(
      request({
        kind: 'ServerClaim',
        operation,
        object: next,
        oldObject: operation === 'UPDATE' ? old : undefined,
        user: 'bob',
      }),
    ),
  );
}

describe('contract: approvals and deferrals', () => {
  it('accepts an approval of an announced maintenance (fixture)', () => {
    expect(contract(ruleInput(loadReview('claim-approve').request)).allowed).toBe(true);
  });

  it('refuses an approval of a maintenance that is not announced to the claim', () => {
    const d = claimUpdate((c) => (c.spec.maintenance = { approvals: [{ maintenanceUID: 'uid-m2' }] }));
    expect(d).toMatchObject({ allowed: false, code: Codes.APPROVAL_NOT_ANNOUNCED, status: 403 });
    expect(d.message).toContain('uid-m2');
    expect(d.causes?.[0]?.field).toBe('spec.maintenance.approvals');
  });

  it('refuses approvals on a claim being created (nothing is announced to it yet)', () => {
    expect(
      claimUpdate(
        (c) => (c.spec.maintenance = { approvals: [{ maintenanceUID: 'uid-m1' }] }),
        'claim-a',
        'CREATE',
      ).code,
    ).toBe(Codes.APPROVAL_NOT_ANNOUNCED);
  });

  it('leaves an old approval alone once its announcement is gone', () => {
    const old = clone(find(loadWorld().claims, 'claim-a'));
    old.spec.maintenance = { approvals: [{ maintenanceUID: 'uid-gone', approvedBy: 'bob' }] };
    const next = clone(old);
    next.metadata.labels = { app: 'db', tier: 'gold' };
    expect(
      contract(ruleInput(request({ kind: 'ServerClaim', operation: 'UPDATE', object: next, oldObject: old })))
        .allowed,
    ).toBe(true);
  });

  it('accepts a deferral within the announced deadline and refuses one past it', () => {
    expect(
      claimUpdate(
        (c) =>
          (c.spec.maintenance = { deferrals: [{ maintenanceUID: 'uid-m1', until: '2026-03-16T12:00:00Z' }] }),
      ).allowed,
    ).toBe(true);
    const late = claimUpdate(
      (c) =>
        (c.spec.maintenance = { deferrals: [{ maintenanceUID: 'uid-m1', until: '2026-03-16T12:00:01Z' }] }),
    );
    expect(late).toMatchObject({ allowed: false, code: Codes.DEFER_PAST_DEADLINE });
    expect(late.message).toContain('2026-03-16T12:00:00Z');
  });

  it('refuses a deferral of a maintenance that is not announced', () => {
    expect(
      claimUpdate(
        (c) =>
          (c.spec.maintenance = { deferrals: [{ maintenanceUID: 'nope', until: '2026-03-11T00:00:00Z' }] }),
      ).code,
    ).toBe(Codes.DEFER_NOT_ANNOUNCED);
  });
});

describe('contract: who may write status', () => {
  const claimStatus = (user: string, change: (c: ServerClaim) => void) => {
    const old = find(loadWorld().claims, 'claim-a');
    const next = clone(old);
    change(next);
    return contract(
      ruleInput(
        request({
          kind: 'ServerClaim',
          subResource: 'status',
          operation: 'UPDATE',
          object: next,
          oldObject: old,
          user,
        }),
      ),
    );
  };

  it('lets only the approval controller write announcements', () => {
    const announce = (c: ServerClaim) => (c.status!.maintenance!.announcements![0]!.state = 'Approved');
    const d = claimStatus('alice', announce);
    expect(d).toMatchObject({ allowed: false, code: Codes.FORBIDDEN_WRITER, status: 403 });
    expect(d.message).toContain('"alice"');
    expect(claimStatus(APPROVAL_CONTROLLER, announce).allowed).toBe(true);
  });

  it('lets others write the rest of the claim status (metal-operator sets phase)', () => {
    expect(
      claimStatus(
        'system:serviceaccount:metal-operator-system:controller-manager',
        (c) => (c.status!.phase = 'Unbound'),
      ).allowed,
    ).toBe(true);
  });

  it('lets only the maintenance controllers write ServerMaintenance status', () => {
    const old = find(loadWorld().maintenances, 'm1');
    const next = clone(old);
    next.status = { state: 'Approved' };
    const write = (user: string) =>
      contract(
        ruleInput(
          request({
            kind: 'ServerMaintenance',
            subResource: 'status',
            operation: 'UPDATE',
            object: next,
            oldObject: old,
            user,
          }),
        ),
      );
    expect(write('alice')).toMatchObject({ allowed: false, code: Codes.FORBIDDEN_WRITER });
    expect(write(MAINTENANCE_CONTROLLER).allowed).toBe(true);
    expect(write(APPROVAL_CONTROLLER).allowed).toBe(true);
    const noop = request({
      kind: 'ServerMaintenance',
      subResource: 'status',
      operation: 'UPDATE',
      object: old,
      oldObject: old,
      user: 'alice',
    });
    expect(contract(ruleInput(noop)).allowed).toBe(true);
  });

  it('lets the drain controller write status.drain and Drained, nothing else of the status', () => {
    const old = find(loadWorld().maintenances, 'm1');
    const write = (change: (m: ServerMaintenance) => void) => {
      const next = clone(old);
      change(next);
      return contract(
        ruleInput(
          request({
            kind: 'ServerMaintenance',
            subResource: 'status',
            operation: 'UPDATE',
            object: next,
            oldObject: old,
            user: DRAIN_CONTROLLER,
          }),
        ),
      );
    };
    const drained = (m: ServerMaintenance) => {
      m.status = {
        ...m.status,
        drain: { phase: 'Drained', node: 'n1' },
        conditions: [
          ...(m.status?.conditions ?? []),
          {
            type: 'Drained',
            status: 'True',
            reason: 'Drained',
            message: '',
            lastTransitionTime: '2026-01-01T00:00:00Z',
          },
        ],
      };
    };
    expect(write(drained).allowed).toBe(true);
    const d = write((m) => {
      drained(m);
      m.status!.state = 'InMaintenance';
    });
    expect(d).toMatchObject({ allowed: false, code: Codes.FORBIDDEN_WRITER });
    expect(d.message).toContain('only status.drain and the condition Drained');
  });
});

describe('contract: ServerBoot', () => {
  const boot = (server: string, maintenanceRef?: string): ServerBoot => ({
    metadata: { name: 'b', namespace: 'ops' },
    spec: {
      serverRef: { name: server },
      method: 'VirtualMedia',
      image: 'https://img/x.iso',
      ...(maintenanceRef ? { maintenanceRef: { name: maintenanceRef } } : {}),
    },
  });
  const create = (b: ServerBoot, world = loadWorld()) =>
    contract(ruleInput(request({ kind: 'ServerBoot', operation: 'CREATE', object: b }), { world }));

  it('allows booting an unclaimed server without a maintenance', () => {
    expect(create(boot('srv-free')).allowed).toBe(true);
  });

  it('requires a claimed server to be booted inside its InMaintenance maintenance', () => {
    expect(create(boot('srv-claimed'))).toMatchObject({
      allowed: false,
      code: Codes.BOOT_NEEDS_MAINTENANCE,
      causes: [{ field: 'spec.maintenanceRef' }],
    });
    expect(create(boot('srv-claimed', 'm1'))).toMatchObject({
      allowed: false,
      code: Codes.BOOT_NEEDS_MAINTENANCE,
      retryAfterSeconds: 30,
    });
    expect(create(boot('srv-claimed', 'missing')).message).toContain('does not exist');
    expect(create(boot('srv-claimed', 'm2')).message).toContain('is for server srv-claimed-2');
    const world = loadWorld();
    find(world.maintenances, 'm1').status = { state: 'InMaintenance' };
    expect(create(boot('srv-claimed', 'm1'), world).allowed).toBe(true);
  });

  it('checks only spec changes on update, and asks to retry for an unknown server', () => {
    const b = boot('srv-claimed');
    const relabelled = clone(b);
    relabelled.metadata.labels = { x: 'y' };
    expect(
      contract(
        ruleInput(request({ kind: 'ServerBoot', operation: 'UPDATE', object: relabelled, oldObject: b })),
      ).allowed,
    ).toBe(true);
    expect(create(boot('nope'))).toMatchObject({ code: Codes.SERVER_NOT_FOUND, status: 429 });
  });
});

describe('contract: firmware objects', () => {
  const biosVersion = (maintenance: string) => ({
    apiVersion: 'system.metal.ironcore.dev/v1alpha1',
    kind: 'BIOSVersion',
    metadata: { name: 'bv', annotations: {} as Record<string, string> },
    spec: {
      version: '2.1',
      serverRef: { name: 'srv-maint' },
      serverMaintenanceRef: { namespace: 'ops', name: maintenance },
    },
  });

  it('freezes a BIOS object while its maintenance is InMaintenance', () => {
    const old = biosVersion('m-other');
    const next = clone(old);
    next.spec.version = '2.2';
    const d = contract(
      ruleInput(request({ kind: 'BIOSVersion', operation: 'UPDATE', object: next, oldObject: old })),
    );
    expect(d).toMatchObject({ allowed: false, code: Codes.FIRMWARE_LOCKED, status: 403 });
    expect(d.message).toContain('ops/m-other');
    expect(
      contract(ruleInput(request({ kind: 'BIOSVersion', operation: 'DELETE', oldObject: old }))).code,
    ).toBe(Codes.FIRMWARE_LOCKED);
  });

  it('allows metadata-only updates, and changes once the maintenance is not running', () => {
    const old = biosVersion('m-other');
    const relabelled = clone(old);
    relabelled.metadata.annotations = { note: 'x' };
    expect(
      contract(
        ruleInput(request({ kind: 'BIOSVersion', operation: 'UPDATE', object: relabelled, oldObject: old })),
      ).allowed,
    ).toBe(true);
    const idle = biosVersion('m1');
    const changed = clone(idle);
    changed.spec.version = '9';
    expect(
      contract(
        ruleInput(request({ kind: 'BIOSVersion', operation: 'UPDATE', object: changed, oldObject: idle })),
      ).allowed,
    ).toBe(true);
  });

  it('lets a pipeline run change its child between attempts, never while it is in flight', () => {
    const old = biosVersion('m-other') as ReturnType<typeof biosVersion> & { status?: { state: string } };
    (old.metadata as { labels?: Record<string, string> }).labels = {
      'maintenance.metal.ironcore.dev/pipeline-run': 'run-1',
    };
    old.status = { state: 'Completed' };
    const settled = clone(old);
    (settled.spec as { driftPolicy?: string }).driftPolicy = 'Observe';
    const update = (o: typeof old) =>
      contract(
        ruleInput(request({ kind: 'BIOSVersion', operation: 'UPDATE', object: settled, oldObject: o })),
      );
    expect(update(old).allowed).toBe(true);
    expect(update({ ...old, status: { state: 'InProgress' } }).code).toBe(Codes.FIRMWARE_LOCKED);
  });

  it('keeps upstream’s allow-in-progress escape hatch, with a warning', () => {
    const old = biosVersion('m-other');
    old.metadata.annotations = { 'metal.ironcore.dev/operation': 'allow-in-progress-delete' };
    const d = contract(ruleInput(request({ kind: 'BIOSVersion', operation: 'DELETE', oldObject: old })));
    expect(d.allowed).toBe(true);
    expect(d.warnings[0]).toContain('allow-in-progress-delete');
  });

  it('reads the wrapped BMCSettings reference list', () => {
    const old = {
      metadata: { name: 'bs' },
      spec: {
        bmcRef: { name: 'b' },
        serverMaintenanceRefs: [{ serverMaintenanceRef: { namespace: 'ops', name: 'm-other' } }],
      },
    };
    expect(
      contract(ruleInput(request({ kind: 'BMCSettings', operation: 'DELETE', oldObject: old }))).code,
    ).toBe(Codes.FIRMWARE_LOCKED);
    expect(
      firmwareMaintenanceRefs({
        spec: {
          serverMaintenanceRefs: [{ namespace: 'a', name: 'x' }, { serverMaintenanceRef: { name: 'y' } }, 7],
        },
      }),
    ).toEqual([{ namespace: 'a', name: 'x' }, { name: 'y' }]);
    expect(firmwareMaintenanceRefs(undefined)).toEqual([]);
  });
});

describe('contract: who may request a maintenance (contract/requesters.ts)', () => {
  const sm = (namespace: string, server: string, spec: object = {}) => ({
    metadata: { namespace, name: 'm-new' },
    spec: { serverRef: { name: server }, ...spec },
  });
  const create = (object: object, user: string, groups = ['system:authenticated']) => {
    const r = request({ kind: 'ServerMaintenance', operation: 'CREATE', object, user });
    return contract(ruleInput({ ...r, userInfo: { username: user, groups } }));
  };

  it("refuses a tenant's maintenance of another namespace's claimed server, naming identity, server and owner", () => {
    const d = create(sm('tenant-b', 'srv-claimed', { approval: { required: false } }), 'mallory');
    expect(d).toMatchObject({ allowed: false, code: Codes.REQUESTER_FORBIDDEN, status: 403 });
    expect(d.message).toMatch(/"mallory".*server srv-claimed.*tenant-a\/claim-a/);
    expect(d.causes?.[0]?.field).toBe('spec.serverRef');
  });

  it('admits the same maintenance from a member of system:masters', () => {
    const d = create(sm('ops', 'srv-claimed', { approval: { required: false } }), 'admin', [
      'system:masters',
    ]);
    expect(d.allowed).toBe(true);
  });

  it("refuses the owner's namespace skipping approval on an update, admits an update that keeps it", () => {
    const old = sm('tenant-a', 'srv-claimed');
    const judge = (next: object) =>
      contract(
        ruleInput(
          request({
            kind: 'ServerMaintenance',
            operation: 'UPDATE',
            object: next,
            oldObject: old,
            user: 'bob',
          }),
        ),
      );
    expect(judge(sm('tenant-a', 'srv-claimed', { class: 'Emergency' })).causes?.[0]?.field).toBe(
      'spec.approval.required',
    );
    expect(judge(sm('tenant-a', 'srv-claimed', { description: 'x' })).allowed).toBe(true);
  });

  it('judges an update whose stored object has no spec like a create, without throwing', () => {
    // Found by the webhook's property test: an oldObject of {} made the rule read old.spec.approval.
    const next = sm('tenant-b', 'srv-claimed', { approval: { required: false } });
    const r = request({
      kind: 'ServerMaintenance',
      operation: 'UPDATE',
      object: next,
      oldObject: {},
      user: 'mallory',
    });
    expect(contract(ruleInput(r))).toMatchObject({ allowed: false, code: Codes.REQUESTER_FORBIDDEN });
  });
});
