// Reading and waiting on a running lifecycle world (./harness.ts): a maintenance's state and
// conditions, waits for a state or for it gone, the Events about an object, a controller's metrics.
// Re-exported by harness.ts, so a suite imports everything from there.
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import type { KubeObject } from '../../../api/schema/meta.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import { isNotFound } from '../../../lib/kube/errors.js';
import { Core } from '../../../lib/kube/resources.js';
import { waitFor, type WaitOptions } from '../../../e2e/harness/env.js';
import { leaderMetrics } from '../../../e2e/harness/installed.js';
import { inCluster } from '../../../e2e/harness/target.js';
import type { ControllerName, Lifecycle } from './harness.js';

export const stateOf = (m: ServerMaintenance | undefined) => m?.status?.state ?? 'Pending';
export const conditionOf = (m: ServerMaintenance | undefined, type: string) =>
  m?.status?.conditions?.find((c) => c.type === type);

export async function getMaintenance(lc: Lifecycle, name: string): Promise<ServerMaintenance | undefined> {
  return lc.maintenances.find(name, lc.ns);
}

/** Waits until the maintenance satisfies `pred`; returns it. */
export function waitForMaintenance(
  lc: Lifecycle,
  name: string,
  what: string,
  pred: (m: ServerMaintenance) => boolean,
  options: WaitOptions = {},
): Promise<ServerMaintenance> {
  let last: ServerMaintenance | undefined;
  return waitFor(
    `${name}: ${what}`,
    async () => {
      const m = await getMaintenance(lc, name);
      last = m;
      return m && pred(m) ? m : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 200, ...options },
  ).catch((e: unknown) => {
    // Say where it stood: state and conditions are what a person would look at first.
    const conditions = (last?.status?.conditions ?? []).map(
      (c) => `${c.type}=${c.status}/${c.reason}: ${c.message}`,
    );
    throw new Error(
      `${(e as Error).message}; last seen: state ${last?.status?.state ?? '(none)'}; ${conditions.join('; ')}`,
    );
  });
}

export function waitForState(lc: Lifecycle, name: string, state: string, options: WaitOptions = {}) {
  return waitForMaintenance(lc, name, `state ${state}`, (m) => stateOf(m) === state, options);
}

export async function waitForGone(lc: Lifecycle, name: string, options: WaitOptions = {}): Promise<void> {
  await waitFor(`${name} deleted`, async () => !(await getMaintenance(lc, name)), {
    timeoutMs: 60_000,
    intervalMs: 200,
    ...options,
  });
}

/** Deletes a maintenance ("done") if it still exists. */
export async function finish(lc: Lifecycle, name: string): Promise<void> {
  try {
    await lc.maintenances.delete(name, { namespace: lc.ns });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

/** Events about one object in a namespace (events.k8s.io), by reason. */
export async function eventsFor(
  admin: KubeClient,
  namespace: string,
  name: string,
): Promise<{ reason: string; type: string; note?: string }[]> {
  type Ev = KubeObject & { reason: string; type: string; note?: string; regarding: { name?: string } };
  const list = await admin.resource<Ev>(Core.Event).list({ namespace });
  return list.items.filter((e) => e.regarding.name === name);
}

/**
 * The Prometheus text a running controller serves at /metrics: locally its ops port is in its log; in
 * cluster mode the leader pod's, through the API server's pod proxy.
 */
export async function metricsOf(lc: Lifecycle, name: ControllerName): Promise<string> {
  if (inCluster()) return leaderMetrics(lc.admin, lc.installed![name]!);
  const line = await lc.controllers[name].waitForLog(
    (l) => typeof l.port === 'number' && String(l.msg).startsWith('ops server'),
  );
  const res = await fetch(`http://127.0.0.1:${Number(line.port)}/metrics`);
  return res.text();
}
