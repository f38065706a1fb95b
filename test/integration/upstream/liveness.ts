// What the liveness files share: servers held Approved for maintenance by a budget (Available and
// powered off to upstream, refused by our contract, carrying our taint), the time each claim took to
// show Bound, and how often our webhook refused upstream's binder for maintenance.
import type { ServerClaim } from '../../../api/metal/v1alpha1/serverclaim.js';
import type { ServerDisruptionBudget } from '../../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import { waitFor } from '../../../e2e/harness/env.js';
import { ServerDisruptionBudgetResource } from '../../../lib/kube/kinds.js';
import { MAINTENANCE_TAINT_KEY } from '../../../contract/names.js';
import { startUpstream, type Upstream } from './harness.js';
import { Observer } from './observe.js';
import { maintenanceOf, waitForMaintenanceState } from './scenario.js';

export const BIND_WITHIN_MS = 10_000;
export const POOL = 'upstream.test/pool';
const HELD = 'upstream.test/held';

/** Maintenances on machines `indices`, kept Approved (not started) by a budget with no room. */
export async function holdApproved(up: Upstream, indices: number[], name: string): Promise<void> {
  const servers = indices.map((i) => up.machines[i]!.server);
  for (const s of servers) await up.servers.patch(s, { metadata: { labels: { [HELD]: name } } });
  const sdbs = up.admin.resource<ServerDisruptionBudget>(ServerDisruptionBudgetResource);
  await sdbs.create({
    metadata: { name: `held-${name}` },
    spec: { serverSelector: { matchLabels: { [HELD]: name } }, maxUnavailable: 0 },
  });
  await waitFor('budget observed', async () => {
    const b = await sdbs.get(`held-${name}`);
    return (b.status?.observedGeneration ?? 0) >= (b.metadata.generation ?? 1);
  });
  const ms = await Promise.all(servers.map((s) => maintenanceOf(up, `${name}-${s}`, s)));
  await Promise.all(ms.map((m) => waitForMaintenanceState(up, m, 'Approved', 60_000)));
  await waitFor(
    'our taint on every held server',
    async () => {
      const list = (await up.servers.list()).items.filter((s) => servers.includes(s.metadata.name!));
      return list.every((s) => (s.spec.taints ?? []).some((t) => t.key === MAINTENANCE_TAINT_KEY));
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
}

/** Milliseconds from now until each claim showed Bound, or undefined if it did not within `limitMs`. */
export async function bindTimes(
  watch: Observer,
  claims: ServerClaim[],
  limitMs: number,
): Promise<(number | undefined)[]> {
  const started = Date.now();
  const at = new Map<string, number>();
  const key = (c: ServerClaim) => `${c.metadata.namespace}/${c.metadata.name}`;
  while (Date.now() - started < limitMs && at.size < claims.length) {
    for (const c of claims)
      if (
        !at.has(key(c)) &&
        watch.claims.getByName(c.metadata.name!, c.metadata.namespace)?.status?.phase === 'Bound'
      )
        at.set(key(c), Date.now() - started);
    await new Promise((r) => setTimeout(r, 100));
  }
  return claims.map((c) => at.get(key(c)));
}

/** Binds of upstream's that our webhook refused for maintenance, from the manager's own error log. */
export function inMaintenanceDenials(up: Upstream): number {
  return up.manager.process.lines.filter((l) => l.includes('METAL_ERR_SERVER_IN_MAINTENANCE')).length;
}

/** Ten machines under upstream's manager, watched, every one Available; stop() undoes what start() did. */
export class LiveFleet {
  up: Upstream | undefined;
  watch: Observer | undefined;

  async start(labels: (i: number) => Record<string, string>): Promise<{ up: Upstream; watch: Observer }> {
    const up = (this.up = await startUpstream({ machines: 10, labels }));
    const watch = (this.watch = new Observer(up.servers, up.claims));
    await watch.start();
    await up.waitAvailable(240_000);
    return { up, watch };
  }

  async stop(): Promise<void> {
    await this.watch?.stop();
    await this.up?.stop();
  }
}
