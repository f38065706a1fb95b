// Issue 29, behaviour 2, the case that does not hold yet: a selector claim that tolerates our
// maintenance taint (`maintenance.metal.ironcore.dev/in-maintenance`, operator Exists) next to servers
// held for maintenance and one free server. Upstream's binder honours the toleration and finds the
// held servers claimable; our webhook refuses them (METAL_ERR_SERVER_IN_MAINTENANCE does not look at
// tolerations); each denial backs the claim off in controller-runtime (5 ms doubling, to 1000 s) while
// the free server waits. The taint is only a signal upstream honours if no claim may tolerate it.
//
// PENDING (not in scripts/test.sh): `METAL_TEST_PENDING=1 npx jest --selectProjects pending`. It joins
// the default run (rename to .e2e.test.ts) with the fix of docs/compatibility.md ("Placement next to
// metal-operator's binder"): claims may not tolerate the maintenance taint key.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freshNamespace } from '../../../e2e/harness/env.js';
import { MAINTENANCE_TAINT_KEY } from '../../../contract/names.js';
import { startUpstream, type Upstream } from './harness.js';
import { Observer } from './observe.js';
import { bindTimes, holdApproved, inMaintenanceDenials, BIND_WITHIN_MS, POOL } from './liveness.js';

let up: Upstream;
let watch: Observer;

beforeAll(async () => {
  // 0-6 approved for maintenance and held by a budget (Available, powered off, our taint); 7-9 free.
  up = await startUpstream({ machines: 10, labels: () => ({ [POOL]: 'tolerating' }) });
  watch = new Observer(up.servers, up.claims);
  await watch.start();
  await up.waitAvailable(240_000);
}, 400_000);

afterAll(async () => {
  await watch?.stop();
  await up?.stop();
}, 120_000);

describe('selector claims that tolerate the maintenance taint', () => {
  it('bind the free servers within 10 s, and upstream never meets our webhook on the way', async () => {
    await holdApproved(up, [0, 1, 2, 3, 4, 5, 6], 'tol');
    const namespace = await freshNamespace(up.admin, 'tolerating');
    const claims = await Promise.all(
      [0, 1, 2].map((i) =>
        up.claims.create({
          metadata: { name: `tolerating-c${i}`, namespace },
          spec: {
            power: 'On',
            image: 'ghcr.io/ironcore-dev/os-images/gardenlinux:1877.0',
            serverSelector: { matchLabels: { [POOL]: 'tolerating' } },
            tolerations: [{ key: MAINTENANCE_TAINT_KEY, operator: 'Exists' }],
          },
        }),
      ),
    );
    const times = await bindTimes(watch, claims, 60_000);
    expect({ times, denials: inMaintenanceDenials(up) }).toEqual({
      times: times.map((t) => (t !== undefined && t <= BIND_WITHIN_MS ? t : 'not within 10 s')),
      denials: 0,
    });
  }, 240_000);
});
