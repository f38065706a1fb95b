// Issue 29, behaviour 2: every selector claim that has an allowed free server binds within 10 s, next
// to servers our contract refuses for maintenance. Upstream's binder does not know our maintenances; it
// skips a server only for its own reasons (state, cordon, power, NoBind taints the claim does not
// tolerate). It skips ours because the maintenance controller taints a server from the moment a
// maintenance of it is Approved (InMaintenance servers are parked: not Available). Where our webhook
// refused a server upstream still found claimable, the bind would be denied and controller-runtime
// would back the claim off (5 ms doubling, up to 1000 s) while a free server waits: with our taint in
// place, upstream never meets the webhook. A claim tolerating our taint, which would, is refused at
// admission: liveness-tolerating.e2e.test.ts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SETUP_TIMEOUT_MS } from '../../../e2e/harness/dist.js';
import type { ServerClaim } from '../../../api/metal/v1alpha1/serverclaim.js';
import { freshNamespace, waitFor } from '../../../e2e/harness/env.js';
import { MAINTENANCE_TAINT_KEY } from '../../../contract/names.js';
import type { Upstream } from './harness.js';
import {
  bindTimes,
  holdApproved,
  inMaintenanceDenials,
  BIND_WITHIN_MS,
  LiveFleet,
  POOL,
} from './liveness.js';
import type { Observer } from './observe.js';
import { maintenanceOf, waitForMaintenanceState } from './scenario.js';
import type { ServerDisruptionBudget } from '../../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import { ServerDisruptionBudgetResource } from '../../../lib/kube/kinds.js';

const RACE = 'upstream.test/race';

let up: Upstream;
let watch: Observer;

const fleet = new LiveFleet();

beforeAll(async () => {
  // steady: 0-1 in maintenance, 2-3 approved and held, 4-5 free. race: 6-7 approved as claims arrive, 8-9 free.
  ({ up, watch } = await fleet.start((i) => ({ [POOL]: i < 6 ? 'steady' : 'race' })));
}, SETUP_TIMEOUT_MS); // may include the image files' build (e2e/harness/dist.ts)

afterAll(() => fleet.stop(), 120_000);

const server = (i: number) => up.machines[i]!.server;

async function selectorClaims(pool: string, count: number): Promise<ServerClaim[]> {
  const namespace = await freshNamespace(up.admin, `live-${pool}`);
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      up.claims.create({
        metadata: { name: `${pool}-c${i}`, namespace },
        spec: {
          power: 'On',
          image: 'ghcr.io/ironcore-dev/os-images/gardenlinux:1877.0',
          serverSelector: { matchLabels: { [POOL]: pool } },
        },
      }),
    ),
  );
}

describe('selector claims with an allowed free server bind within 10 s', () => {
  it('next to servers in maintenance and approved for one (and one whose taint list an atomic writer replaced)', async () => {
    const running = await Promise.all([0, 1].map((i) => maintenanceOf(up, `steady-${i}`, server(i))));
    await Promise.all(running.map((m) => waitForMaintenanceState(up, m, 'InMaintenance', 60_000)));
    await holdApproved(up, [2, 3], 'steady');
    // A writer that treats spec.taints as atomic (upstream's readiness-rule controller merge-patches the
    // whole list) replaces ours; the contract still refuses the server for its approved maintenance.
    await up.servers.patch(server(3), {
      spec: { taints: [{ key: 'upstream.test/readiness', effect: 'NoBind' }] },
    });
    await up.servers.patch(server(3), { spec: { taints: [] } });
    const claims = await selectorClaims('steady', 2);
    const times = await bindTimes(watch, claims, 60_000);
    const held = [0, 1, 2, 3].map(server);
    expect([...watch.boundServers().keys()].filter((s) => held.includes(s))).toEqual([]);
    expect(times.map((t) => t !== undefined && t <= BIND_WITHIN_MS)).toEqual([true, true]);
    expect(inMaintenanceDenials(up)).toBe(0);
  }, 240_000);
  it('while maintenances are approved at the same moment the claims arrive', async () => {
    const sdbs = up.admin.resource<ServerDisruptionBudget>(ServerDisruptionBudgetResource);
    await sdbs.create({
      metadata: { name: 'held-race' },
      spec: { serverSelector: { matchLabels: { [RACE]: 'true' } }, maxUnavailable: 0 },
    });
    for (const i of [6, 7]) await up.servers.patch(server(i), { metadata: { labels: { [RACE]: 'true' } } });
    const [claims] = await Promise.all([
      selectorClaims('race', 2),
      Promise.all([6, 7].map((i) => maintenanceOf(up, `race-${i}`, server(i)))),
    ]);
    const times = await bindTimes(watch, claims, 60_000);
    // Binding to 6 or 7 before their maintenance is approved is allowed; after, the webhook refuses it.
    const held = [6, 7].map(server);
    expect(times.map((t) => t !== undefined && t <= BIND_WITHIN_MS)).toEqual([true, true]);
    // Both end approved and tainted: refusals, if any, were a window, not a standing state.
    await waitFor('our taint on both race servers', async () => {
      const list = await Promise.all(held.map((s) => up.servers.get(s)));
      return list.every((s) => (s.spec.taints ?? []).some((t) => t.key === MAINTENANCE_TAINT_KEY));
    });
  }, 240_000);
});
