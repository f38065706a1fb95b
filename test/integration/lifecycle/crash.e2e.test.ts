// Behaviour 10 (in the suite, shortened): kill -9 random lifecycle controllers at random moments during a
// budget-paced rollout; the rollout finishes, no server is stuck, no grant outlives its TTL, the budget
// and one-holder-per-server hold throughout. `npm run soak:crash` runs the full version (100 servers,
// ten rounds).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startLifecycle, type Lifecycle } from './harness.js';
import { CHAOS_POLICY, rollout } from './rollout.js';

let lc: Lifecycle;
beforeAll(async () => {
  lc = await startLifecycle({ actorHoldMs: 1000, policy: CHAOS_POLICY });
}, 120_000);
afterAll(async () => {
  await lc?.stop();
}, 60_000);

describe('crash consistency', () => {
  it('finishes a rollout while controllers are killed with SIGKILL at random moments', async () => {
    const result = await rollout(lc, 'crash', {
      servers: 16,
      budget: 4,
      doubles: 4,
      killEveryMs: [1000, 2500],
      downMs: [0, 1000],
      ttlMs: 15_000,
      timeoutMs: 150_000,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    process.stderr.write(`crash rollout: ${JSON.stringify(result)}\n`);
    expect(result.problems).toEqual([]);
    // Every controller was killed at least once while the rollout ran.
    for (const n of Object.values(result.kills)) expect(n).toBeGreaterThanOrEqual(1);
    expect(result.peakInMaintenance).toBeGreaterThan(1);
  }, 200_000);
});
