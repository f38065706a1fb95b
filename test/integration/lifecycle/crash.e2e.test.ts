// Behaviour 10 (in the suite, shortened): kill -9 random lifecycle controllers at random moments during a
// budget-paced rollout; the rollout finishes, no server is stuck, no grant outlives its TTL, the budget
// and one-holder-per-server hold throughout. `npm run soak:crash` runs the full version (100 servers,
// ten rounds).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { containerProcess, shippedDeployment } from '../../../e2e/harness/deployed.js';
import { SETUP_TIMEOUT_MS, sharedDist } from '../../../e2e/harness/dist.js';
import type { RunningBinary } from '../../../e2e/harness/processes.js';
import { CONTROLLERS, startLifecycle, type Lifecycle } from './harness.js';
import { CHAOS_POLICY, rollout } from './rollout.js';

let lc: Lifecycle;
beforeAll(async () => {
  lc = await startLifecycle({ actorHoldMs: 1000, policy: CHAOS_POLICY });
}, SETUP_TIMEOUT_MS);
afterAll(async () => {
  await lc?.stop();
}, 60_000);

describe('the binaries of every lifecycle suite', () => {
  // A suite that started them from source would not see a flag the image's binary lacks; these
  // start with the manifest's command and args in front, so they do (test/integration/install/
  // dist.int.test.ts shows such a flag stops the binary).
  it('run from the image files with their Deployment’s command and args, the harness’s flags after', () => {
    const cases: [string, RunningBinary][] = [
      ...CONTROLLERS.map((c) => [c, lc.controllers[c]] as [string, RunningBinary]),
      ['webhook', lc.webhook.replicas[0]!.binary!],
    ];
    for (const [binary, running] of cases) {
      const { argv } = containerProcess(shippedDeployment(binary));
      // spawnargs[0] is node itself; then the Deployment's command (after `node`) and args.
      const ran = running.proc.spawnargs.slice(1);
      expect({ binary, argv: ran.slice(0, argv.length) }).toEqual({ binary, argv });
      expect(ran.length).toBeGreaterThan(argv.length);
      // The entry point is the compiled file of the run's image files, not a TypeScript source.
      const entry = argv.find((a) => a.startsWith('dist/'))!;
      expect(existsSync(join(sharedDist(), entry))).toBe(true);
      expect(ran.some((a) => a.endsWith('.ts') || a === 'tsx')).toBe(false);
    }
  });
});

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
