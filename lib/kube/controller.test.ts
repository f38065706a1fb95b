import { jest } from '@jest/globals';
import { Controller } from './controller.js';
import { KubeApiError } from './errors.js';

/** What the API server answers a write while the admission webhook that reviews it is down. */
const webhookDown = () =>
  new KubeApiError('PUT', '/apis/maintenance.metal.ironcore.dev/v1alpha1/servermaintenances/m/status', 500, {
    reason: 'InternalError',
    message:
      'Internal error occurred: failed calling webhook "eviction.maintenance.metal.ironcore.dev": failed to ' +
      'call webhook: Post "https://127.0.0.1:9443/validate": dial tcp 127.0.0.1:9443: connect: connection refused',
  });
const etcdTimeout = () =>
  new KubeApiError('PUT', '/api/v1/namespaces/x', 500, {
    reason: 'InternalError',
    message: 'etcdserver: timeout',
  });

/**
 * One key whose reconcile fails with `error` until `outageMs` have passed, then succeeds: how long after
 * the outage ended the key was reconciled again, and how many tries it took.
 */
async function afterOutage(error: () => Error, outageMs: number): Promise<{ lateMs: number; tries: number }> {
  const start = Date.now();
  const tries: number[] = [];
  const c = new Controller({
    name: 'test',
    workers: 1,
    reconcile: () => {
      tries.push(Date.now() - start);
      return Date.now() - start < outageMs ? Promise.reject(error()) : Promise.resolve();
    },
  });
  c.start();
  c.enqueue('server-1');
  await jest.advanceTimersByTimeAsync(120_000);
  const stopped = c.stop(0);
  await jest.advanceTimersByTimeAsync(2_000);
  await stopped;
  return { lateMs: tries.at(-1)! - outageMs, tries: tries.length };
}

describe('Controller retries', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  // Issue 31: a slot stood idle 12 s after a webhook restart. The InMaintenance write that failed all
  // through the outage backed off 5 ms doubling, so its next try came up to the outage's length after
  // the webhook was back (6.6 s of outage: tries at 5.1 s and 10.2 s).
  test('a write an unreachable webhook refused is tried again within 2 s of the webhook serving again', async () => {
    for (const outageMs of [1_000, 6_600, 30_000]) {
      const r = await afterOutage(webhookDown, outageMs);
      expect(r.lateMs).toBeGreaterThanOrEqual(0);
      expect(r.lateMs).toBeLessThanOrEqual(2_000);
      // Not a hot loop: after the first fast tries, one every 2 s.
      expect(r.tries).toBeLessThanOrEqual(10 + Math.ceil(outageMs / 2_000));
    }
  });

  test('any other failure keeps the exponential backoff', async () => {
    const r = await afterOutage(etcdTimeout, 6_600);
    expect(r.lateMs).toBeGreaterThan(3_000);
    expect(r.tries).toBe(12);
  });
});
