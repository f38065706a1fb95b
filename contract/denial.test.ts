// The denial's wire format, both ways: what the webhook writes (deny + denialStatus, the code
// toAdmissionResponse answers with) must read back, through the API server's prefix, as the
// controller's AdmissionDenial. No hand-typed messages: a change to either half fails here.
import { describe, expect, it } from '@jest/globals';
import { Codes, type Code } from './codes.js';
import { BUDGET_CAUSE, allow, combine, denialStatus, deny, parseDenial, reasonForCode } from './denial.js';

/** What a client gets back: the API server prefixes the webhook's message with the webhook's name. */
const relayed = (status: ReturnType<typeof denialStatus>) => ({
  ...status,
  message: `admission webhook "eviction.maintenance.metal.ironcore.dev" denied the request: ${status.message}`,
});

describe('the denial format', () => {
  it('reads back a budget denial: code, reason, message without the hint, retry hint and budget', () => {
    const text = 'ServerDisruptionBudget fleet: 5 unavailable, 5 allowed';
    const decision = deny(Codes.BUDGET_EXHAUSTED, text, {
      retryAfterSeconds: 30,
      causes: [{ reason: BUDGET_CAUSE, field: 'ServerDisruptionBudget//fleet', message: text }],
    });
    const status = denialStatus(decision);
    expect(status).toMatchObject({ code: 429, reason: 'TooManyRequests' });
    expect(parseDenial(relayed(status), status.code)).toEqual({
      code: 'METAL_ERR_BUDGET_EXHAUSTED',
      reason: 'BudgetExhausted',
      message: text,
      retryAfterMs: 30_000,
      httpStatus: 429,
      budget: 'ServerDisruptionBudget//fleet',
    });
  });

  it('reads back every code the webhook can deny with, with its HTTP status and message intact', () => {
    const denials = Object.values(Codes).filter((c): c is Exclude<Code, 'METAL_OK'> => c !== Codes.OK);
    for (const code of denials) {
      const message = `why ${code} (with: colons, "quotes" and\na newline)`;
      const status = denialStatus(deny(code, message));
      const back = parseDenial(relayed(status), status.code);
      expect(back).toEqual({
        code,
        reason: reasonForCode(code),
        message,
        retryAfterMs: undefined,
        httpStatus: status.code,
      });
    }
  });

  it('names no budget without a DisruptionBudget cause, and keeps a hint-free message as it is', () => {
    const status = denialStatus(
      deny(Codes.SERVER_BUSY, 'server s1 is already in maintenance ops/m0', {
        causes: [{ field: 'spec.serverRef', message: 'busy' }],
      }),
    );
    const back = parseDenial(relayed(status), status.code);
    expect(back).toMatchObject({
      reason: 'ServerBusy',
      message: 'server s1 is already in maintenance ops/m0',
    });
    expect(back).not.toHaveProperty('budget');
  });

  it('a combined decision keeps the first denial on the wire', () => {
    const first = deny(Codes.NOT_BEFORE, 'not yet', { retryAfterSeconds: 5 });
    const status = denialStatus(combine([allow(['w']), first, deny(Codes.DEFERRED, 'later')]));
    expect(parseDenial(relayed(status), status.code)).toMatchObject({
      code: Codes.NOT_BEFORE,
      message: 'not yet',
      retryAfterMs: 5000,
    });
  });

  it('is undefined for a Status that is no webhook denial', () => {
    expect(parseDenial({ message: 'the object has been modified' }, 409)).toBeUndefined();
    expect(parseDenial({}, 500)).toBeUndefined();
  });
});
