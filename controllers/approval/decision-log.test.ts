// The approval controller's decision → log line mapping, and that a sampled DecisionLog writes it once.
import { describe, expect, it } from '@jest/globals';
import type { Condition } from '../../api/schema/common.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { DecisionLog } from '../../lib/log-sampling.js';
import type { ApprovalStatus } from './decide.js';
import { approvalDecisionLines } from './decision-log.js';

const m: ServerMaintenance = {
  metadata: { name: 'm1', namespace: 'ops', uid: 'uid-m1' },
  spec: { serverRef: { name: 's1' } },
};

const approved = (status: 'True' | 'False', reason: string, message = reason): Condition => ({
  type: 'Approved',
  status,
  reason,
  message,
  lastTransitionTime: '2026-09-01T10:00:00Z',
});

const next = (c: Condition, approval?: ApprovalStatus['approval']): ApprovalStatus => ({
  conditions: [c],
  ...(approval ? { approval } : {}),
});

const summary = (lines: ReturnType<typeof approvalDecisionLines>) =>
  lines.map((l) => [l.level, l.key, l.msg, l.fields.source, l.fields.approvedBy, l.fields.was]);

describe('approvalDecisionLines', () => {
  it('says who approved, at info, and at warn when the deadline took the server without an answer', () => {
    const waiting = [approved('False', 'AwaitingApproval')];
    const owner = next(approved('True', 'OwnerApproved'), { source: 'Owner', approvedBy: 'tenant-a' });
    expect(summary(approvalDecisionLines(m, waiting, owner))).toEqual([
      ['info', 'OwnerApproved', 'maintenance approved: Owner', 'Owner', 'tenant-a', 'AwaitingApproval'],
    ]);
    const deadline = next(approved('True', 'DeadlineReached'), {
      source: 'Deadline',
      approvedBy: 'deadline',
    });
    expect(summary(approvalDecisionLines(m, waiting, deadline))).toEqual([
      [
        'warn',
        'DeadlineReached',
        'maintenance approved: Deadline',
        'Deadline',
        'deadline',
        'AwaitingApproval',
      ],
    ]);
    const first = approvalDecisionLines(
      m,
      undefined,
      next(approved('True', 'NotRequired'), { source: 'NotRequired' }),
    );
    expect(first[0]!.fields).toEqual({
      maintenance: 'ops/m1',
      server: 's1',
      reason: 'NotRequired',
      source: 'NotRequired',
    });
  });

  it('logs a deferral honoured, a withdrawn approval and a missing claim, with the condition message', () => {
    const deferred = approved(
      'False',
      'Deferred',
      'claim t/c deferred this maintenance until 2026-09-02T00:00:00Z',
    );
    const lines = approvalDecisionLines(m, [approved('False', 'AwaitingApproval')], next(deferred));
    expect(summary(lines)).toEqual([
      ['info', 'Deferred', 'maintenance deferred by its owner', undefined, undefined, 'AwaitingApproval'],
    ]);
    expect(lines[0]!.fields.message).toBe(deferred.message);
    expect(
      summary(
        approvalDecisionLines(
          m,
          [approved('True', 'OwnerApproved')],
          next(approved('False', 'AwaitingApproval')),
        ),
      ),
    ).toEqual([
      [
        'warn',
        'ApprovalWithdrawn',
        'maintenance approval withdrawn: AwaitingApproval',
        undefined,
        undefined,
        'OwnerApproved',
      ],
    ]);
    expect(summary(approvalDecisionLines(m, [], next(approved('False', 'ClaimNotFound'))))).toEqual([
      ['warn', 'ClaimNotFound', 'maintenance not approved: ClaimNotFound', undefined, undefined, undefined],
    ]);
  });

  it('writes nothing while the reason stays, however often the status is rewritten', () => {
    const deferred = approved('False', 'Deferred', 'until 10:00');
    expect(approvalDecisionLines(m, [deferred], next(approved('False', 'Deferred', 'until 11:00')))).toEqual(
      [],
    );
    expect(
      approvalDecisionLines(
        m,
        [approved('True', 'OwnerApproved')],
        next(approved('True', 'OwnerApproved'), { source: 'Owner' }),
      ),
    ).toEqual([]);
    expect(approvalDecisionLines(m, [deferred], { conditions: [] })).toEqual([]);
  });

  it('reaches the logger through the sampled DecisionLog with its decision field', () => {
    const written: [string, Record<string, unknown>, string][] = [];
    const log = {
      info: (f: Record<string, unknown>, msg: string) => written.push(['info', f, msg]),
      warn: (f: Record<string, unknown>, msg: string) => written.push(['warn', f, msg]),
    };
    const d = new DecisionLog(log, { initial: 1, thereafter: 10 }, () => 0);
    const line = approvalDecisionLines(
      m,
      undefined,
      next(approved('True', 'DeadlineReached'), { source: 'Deadline' }),
    );
    for (let i = 0; i < 3; i++) for (const l of line) d.write(l);
    expect(written).toEqual([
      ['warn', { ...line[0]!.fields, decision: 'DeadlineReached' }, 'maintenance approved: Deadline'],
    ]);
  });
});
