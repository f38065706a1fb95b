import jsonpatch from 'fast-json-patch';
import type { ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { DEFAULT_POLICY } from '../../policies/schema.js';
import { clone, ruleInput } from '../testdata/helpers.js';
import { find, loadReview, loadWorld, request } from '../testdata/load.js';
import { mutate } from './mutate.js';
import { LEGACY_APPROVED_LABEL } from '../../contract/legacy-labels.js';

const applied = <T>(doc: T, patch: jsonpatch.Operation[] | undefined): T =>
  patch ? jsonpatch.applyPatch(clone(doc), patch, true, false).newDocument : doc;

describe('mutate: stamping', () => {
  it('overwrites client-sent approval stamps with the request user and time (fixture)', () => {
    const review = loadReview('claim-approve').request;
    const d = mutate(ruleInput(review));
    expect(d.allowed).toBe(true);
    const result = applied(review.object as ServerClaim, d.patch);
    expect(result.spec.maintenance?.approvals).toEqual([
      {
        maintenanceUID: 'uid-m1',
        maintenanceName: 'm1',
        approvedBy: 'bob@tenant-a',
        approvedAt: '2026-03-10T12:00:00Z',
      },
    ]);
    expect(d.patch?.every((op) => op.path.startsWith('/spec/maintenance/approvals/0/'))).toBe(true);
  });

  it('restores the stored stamps on entries the owner did not change', () => {
    const old = clone(find(loadWorld().claims, 'claim-a'));
    old.spec.maintenance = {
      approvals: [{ maintenanceUID: 'uid-m1', approvedBy: 'bob', approvedAt: '2026-03-09T13:00:00Z' }],
    };
    const next = clone(old);
    next.spec.maintenance!.approvals![0]!.approvedBy = 'mallory';
    delete next.spec.maintenance!.approvals![0]!.approvedAt;
    const d = mutate(
      ruleInput(
        request({ kind: 'ServerClaim', operation: 'UPDATE', object: next, oldObject: old, user: 'mallory' }),
      ),
    );
    expect(applied(next, d.patch).spec.maintenance?.approvals?.[0]).toEqual({
      maintenanceUID: 'uid-m1',
      approvedBy: 'bob',
      approvedAt: '2026-03-09T13:00:00Z',
    });
  });

  it('stamps deferrals with requestedBy/requestedAt, and re-stamps an entry the owner changed', () => {
    const old = clone(find(loadWorld().claims, 'claim-a'));
    old.spec.maintenance = {
      deferrals: [
        {
          maintenanceUID: 'uid-m1',
          until: '2026-03-11T00:00:00Z',
          requestedBy: 'bob',
          requestedAt: '2026-03-09T13:00:00Z',
        },
      ],
    };
    const next = clone(old);
    next.spec.maintenance!.deferrals![0]!.until = '2026-03-12T00:00:00Z';
    const d = mutate(
      ruleInput(
        request({ kind: 'ServerClaim', operation: 'UPDATE', object: next, oldObject: old, user: 'carol' }),
      ),
    );
    expect(applied(next, d.patch).spec.maintenance?.deferrals?.[0]).toMatchObject({
      requestedBy: 'carol',
      requestedAt: '2026-03-10T12:00:00Z',
      until: '2026-03-12T00:00:00Z',
    });
  });

  it('produces no patch when nothing needs stamping', () => {
    const claim = find(loadWorld().claims, 'claim-a');
    expect(
      mutate(
        ruleInput(request({ kind: 'ServerClaim', operation: 'UPDATE', object: claim, oldObject: claim })),
      ).patch,
    ).toBeUndefined();
    expect(
      mutate(ruleInput(request({ kind: 'ServerClaim', operation: 'DELETE', oldObject: claim }))).patch,
    ).toBeUndefined();
  });
});

describe('mutate: legacy approval label', () => {
  const labelled = (mode: 'translate' | 'warn' | 'deny') => {
    const old = find(loadWorld().claims, 'claim-a');
    const next = clone(old);
    next.metadata.labels = { ...next.metadata.labels, [LEGACY_APPROVED_LABEL]: 'true' };
    const policy = { ...DEFAULT_POLICY, legacyLabels: { mode } };
    return {
      next,
      d: mutate(
        ruleInput(
          request({ kind: 'ServerClaim', operation: 'UPDATE', object: next, oldObject: old, user: 'ccm' }),
          { policy },
        ),
      ),
    };
  };

  it('translates a newly set label into stamped approvals of what is announced', () => {
    const { next, d } = labelled('translate');
    expect(applied(next, d.patch).spec.maintenance?.approvals).toEqual([
      {
        maintenanceUID: 'uid-m1',
        maintenanceName: 'm1',
        approvedBy: 'ccm',
        approvedAt: '2026-03-10T12:00:00Z',
      },
    ]);
    expect(d.warnings[0]).toContain('translated into approvals of m1');
  });

  it('does not translate in warn or deny mode', () => {
    expect(labelled('warn').d.patch).toBeUndefined();
    expect(labelled('deny').d.patch).toBeUndefined();
  });
});

describe('mutate: deprecated ServerMaintenance spec.policy', () => {
  it('translates OwnerApproval into approval.required: true and warns (fixture)', () => {
    const review = loadReview('maintenance-legacy-policy').request;
    const d = mutate(ruleInput(review));
    expect(d.patch).toEqual([{ op: 'add', path: '/spec/approval', value: { required: true } }]);
    expect(d.warnings[0]).toContain('spec.policy is deprecated');
  });

  it('translates Enforced into approval.required: false, keeping other approval fields', () => {
    const m: ServerMaintenance = {
      metadata: { name: 'x', namespace: 'ops' },
      spec: { serverRef: { name: 's' }, policy: 'Enforced', approval: { notBefore: '2026-03-11T00:00:00Z' } },
    };
    const d = mutate(ruleInput(request({ kind: 'ServerMaintenance', operation: 'CREATE', object: m })));
    expect(applied(m, d.patch).spec.approval).toEqual({ notBefore: '2026-03-11T00:00:00Z', required: false });
  });

  it('keeps an explicit approval.required and says it wins', () => {
    const m: ServerMaintenance = {
      metadata: { name: 'x' },
      spec: { serverRef: { name: 's' }, policy: 'Enforced', approval: { required: true } },
    };
    const d = mutate(
      ruleInput(request({ kind: 'ServerMaintenance', operation: 'UPDATE', object: m, oldObject: m })),
    );
    expect(d.patch).toBeUndefined();
    expect(d.warnings).toHaveLength(2);
    expect(d.warnings[1]).toContain('wins');
  });
});
