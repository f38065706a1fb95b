// The budget controller's decision → log line mapping.
import { describe, expect, it } from '@jest/globals';
import type { Condition } from '../../api/schema/common.js';
import type { DomainStatus } from '../../api/maintenance/v1alpha1/disruptionbudget-common.js';
import type { LedgerEntry } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ComputedStatus } from './decide.js';
import { budgetName, budgetStatusLines, grantExpiryLines } from './decision-log.js';

const B = budgetName('ServerDisruptionBudget', '', 'racks');

const dom = (name: string, allowed: number, unavailable = 1): DomainStatus => ({
  name,
  expected: 4,
  unavailable,
  granted: unavailable,
  allowed,
});

const cond = (reason: string): Condition => ({
  type: 'DisruptionAllowed',
  status: reason === 'SufficientRoom' ? 'True' : 'False',
  reason,
  message: reason,
  lastTransitionTime: '2026-09-01T10:00:00Z',
});

const status = (domains: DomainStatus[], reason = 'SufficientRoom'): ComputedStatus => ({
  expected: 0,
  unavailable: 0,
  disruptionsAllowed: 0,
  domains,
  conditions: [cond(reason)],
});

const keys = (lines: ReturnType<typeof budgetStatusLines>) =>
  lines.map((l) => [l.level, l.key, l.fields.budget, l.fields.domain]);

describe('budgetStatusLines', () => {
  it('names the budget kind and namespace', () => {
    expect(B).toBe('ServerDisruptionBudget racks');
    expect(budgetName('ServerClaimDisruptionBudget', 't', 'db')).toBe('ServerClaimDisruptionBudget t/db');
  });

  it('warns when a domain runs out of room and says when it has room again, per domain', () => {
    const before = status([dom('r1', 1), dom('r2', 0, 2), dom('r3', 1)]);
    const lines = budgetStatusLines(B, before, status([dom('r1', 0, 2), dom('r2', 1), dom('r3', 1)]));
    expect(keys(lines)).toEqual([
      ['warn', 'BudgetExhausted', B, 'r1'],
      ['info', 'BudgetRoom', B, 'r2'],
    ]);
    expect(lines[0]!.fields).toMatchObject({ expected: 4, unavailable: 2, granted: 2 });
    expect(lines[1]!.fields).toMatchObject({ allowed: 1 });
  });

  it('writes nothing while each domain stays on its side of zero', () => {
    const before = status([dom('r1', 2, 0), dom('r2', 0, 2)]);
    expect(budgetStatusLines(B, before, status([dom('r1', 1, 1), dom('r2', 0, 3)]))).toEqual([]);
  });

  it('logs a new domain or a first status only when it starts with no room', () => {
    expect(keys(budgetStatusLines(B, undefined, status([dom('r1', 1), dom('r2', 0)])))).toEqual([
      ['warn', 'BudgetExhausted', B, 'r2'],
    ]);
  });

  it('logs a pause and its end once', () => {
    const open = status([dom('r1', 1)]);
    const paused = status([dom('r1', 1)], 'Paused');
    expect(keys(budgetStatusLines(B, open, paused))).toEqual([['warn', 'BudgetPaused', B, undefined]]);
    expect(budgetStatusLines(B, paused, paused)).toEqual([]);
    expect(keys(budgetStatusLines(B, paused, open))).toEqual([['info', 'BudgetResumed', B, undefined]]);
  });
});

describe('grantExpiryLines', () => {
  const entry = (name: string): LedgerEntry => ({
    maintenanceUID: `uid-${name}`,
    maintenance: { namespace: 'ops', name },
    server: `s-${name}`,
    grantedAt: '2026-09-01T10:00:00Z',
  });

  it('warns for a grant expired at its TTL, and notes one dropped after its maintenance ended', () => {
    const lines = grantExpiryLines(B, [
      { entry: entry('a'), reason: 'ttl' },
      { entry: entry('b'), reason: 'ended' },
    ]);
    expect(
      lines.map((l) => [l.level, l.key, l.fields.maintenance, l.fields.server, l.fields.reason]),
    ).toEqual([
      ['warn', 'GrantExpired', 'ops/a', 's-a', 'ttl'],
      ['info', 'GrantReleased', 'ops/b', 's-b', 'ended'],
    ]);
  });
});
