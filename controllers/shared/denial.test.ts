// Reading the webhook's denial off the API server's error, as the controllers get it.
import { describe, expect, it } from '@jest/globals';
import { KubeApiError } from '../../lib/kube/errors.js';
import { admissionDenial } from './denial.js';

const refused = (message: string, details?: KubeApiError['status']['details']) =>
  new KubeApiError('PATCH', '/apis/x/status', 429, {
    kind: 'Status',
    message: `admission webhook "eviction.maintenance.metal.ironcore.dev" denied the request: ${message}`,
    reason: 'TooManyRequests',
    code: 429,
    ...(details ? { details } : {}),
  });

describe('admissionDenial', () => {
  it('reads the code, reason, message, retry hint and the budget the denial names', () => {
    const e = refused(
      'METAL_ERR_BUDGET_EXHAUSTED: ServerDisruptionBudget fleet: 5 unavailable, 5 allowed (retry in 30s)',
      {
        retryAfterSeconds: 30,
        causes: [{ reason: 'DisruptionBudget', field: 'ServerDisruptionBudget//fleet', message: 'no room' }],
      },
    );
    expect(admissionDenial(e)).toEqual({
      code: 'METAL_ERR_BUDGET_EXHAUSTED',
      reason: 'BudgetExhausted',
      message: 'ServerDisruptionBudget fleet: 5 unavailable, 5 allowed',
      retryAfterMs: 30_000,
      httpStatus: 429,
      budget: 'ServerDisruptionBudget//fleet',
    });
  });

  it('names no budget when no DisruptionBudget cause is there, and no retry without a hint', () => {
    const d = admissionDenial(
      refused('METAL_ERR_SERVER_BUSY: another maintenance holds the server', {
        causes: [{ field: 'spec.serverRef', message: 'busy' }],
      }),
    );
    expect(d).toMatchObject({ reason: 'ServerBusy', retryAfterMs: undefined });
    expect(d).not.toHaveProperty('budget');
  });

  it('is undefined for an error that is not a webhook denial', () => {
    expect(admissionDenial(new Error('boom'))).toBeUndefined();
    expect(
      admissionDenial(new KubeApiError('GET', '/x', 409, { message: 'the object has been modified' })),
    ).toBeUndefined();
  });
});
