import { Backoff, sleep } from './backoff.js';

describe('Backoff', () => {
  test('grows by the factor, stays within [d/2, d], and caps at maxMs', () => {
    const b = new Backoff({ initialMs: 100, maxMs: 1000 });
    const bounds = [100, 200, 400, 800, 1000, 1000];
    for (const d of bounds) {
      const v = b.next();
      expect(v).toBeGreaterThanOrEqual(d / 2);
      expect(v).toBeLessThanOrEqual(d);
    }
    b.reset();
    expect(b.next()).toBeLessThanOrEqual(100);
  });

  test('sleep ends early when aborted', async () => {
    const ac = new AbortController();
    const started = Date.now();
    const p = sleep(10_000, ac.signal);
    ac.abort();
    await p;
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
