// The lifecycle suite's world: the real admission webhook, the three lifecycle controllers as their own
// processes under their own ServiceAccounts (RBAC from manifests/<name>/rbac.yaml), each started from
// this run's image files (one scripts/build-dist.sh per run, shared by every suite) with the command,
// args and env of its shipped Deployment (e2e/harness/deployed.ts), so a flag that drifts between
// manifest and binary fails here; the harness appends only a kubeconfig, loopback ports and short
// Leases. The fleet
// simulator (e2e/sim/fleet) for what metal-operator does (park/unpark, and the actor that finishes a
// maintenance by deleting it), a short test policy, and a recorder of every ServerMaintenance state
// the watch shows, for invariants.
//
// With E2E_TARGET=cluster (e2e/harness/target.ts) the webhook and controllers are the installed ones
// instead (./cluster-mode.ts): a kill deletes their pods, the simulator and the recorder run from the
// test host as they do here, and stop() deletes what the run created and restores the policy. What
// both targets share (types, the simulator, the recorder, the seeding) is ./world.ts.
//
//   const lc = await startLifecycle({ policy: { grants: { ttl: '10s' } } });
//   const f = await lc.fleet('case1', { servers: 3, claims: 'consumer' });
//   ...
//   await lc.stop();
import type { ServerDisruptionBudget } from '../../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import { objectKey } from '../../../lib/kube/resources.js';
import { adminClient, freshNamespace, uniqueName, waitFor } from '../../../e2e/harness/env.js';
import { kubeconfigForBinary, type RunningBinary } from '../../../e2e/harness/processes.js';
import { spawnShipped } from '../../../e2e/harness/deployed.js';
import { prepareDist, SHORT_LEASE_ARGS } from '../../../e2e/harness/dist.js';
import { defaultPolicyData, startWebhook } from '../../../e2e/harness/webhook.js';
import { HOLD_ANNOTATION } from '../../../e2e/sim/fleet/decisions.js';
import { ServerClaimDisruptionBudgetResource } from '../../../lib/kube/kinds.js';
import { inCluster } from '../../../e2e/harness/target.js';
import { startInCluster } from './cluster-mode.js';
import {
  CASE_LABEL,
  CONTROLLERS,
  observe,
  policyData,
  writePolicy,
  type ControllerName,
  type Fleet,
  type Lifecycle,
  type LifecycleOptions,
} from './world.js';

export {
  CASE_LABEL,
  CONSUMER_LABEL,
  CONTROLLERS,
  TEST_POLICY,
  type ControllerName,
  type Fleet,
  type FleetOptions,
  type Lifecycle,
  type LifecycleOptions,
  type TestPolicy,
} from './world.js';

/** Waits until a controller process holds its Lease and runs its controllers. */
async function started(bin: RunningBinary, name: ControllerName): Promise<void> {
  await bin.waitForLog((l) => l.msg === `${name} started`, 60_000);
  await bin.waitForLog((l) => l.msg === 'controller started', 60_000);
}

export async function startLifecycle(options: LifecycleOptions = {}): Promise<Lifecycle> {
  if (inCluster()) return startInCluster(options);
  await prepareDist();
  const admin = await adminClient();
  const fleetName = uniqueName('lc');
  const ns = await freshNamespace(admin, 'lc-ops');
  const webhook = await startWebhook(admin, { replicas: 1, fromDist: true });
  await writePolicy(admin, policyData(options.policy ?? {}));
  const all = [...CONTROLLERS, ...(options.extra ?? [])];
  const kubeconfigs = Object.fromEntries(
    await Promise.all(all.map(async (c) => [c, (await kubeconfigForBinary(admin, c)).kubeconfig] as const)),
  ) as Record<ControllerName, string>;
  const spawn = (name: ControllerName) =>
    spawnShipped(name, [
      `--kubeconfig=${kubeconfigs[name]}`,
      '--ops-host=127.0.0.1',
      '--ops-port=0',
      ...SHORT_LEASE_ARGS,
      ...(options.flags?.[name] ?? []),
    ]);
  const controllers = Object.fromEntries(all.map((c) => [c, spawn(c)])) as Record<
    ControllerName,
    RunningBinary
  >;
  await Promise.all(all.map((c) => started(controllers[c], c)));
  const world = await observe(admin, fleetName, ns, options);
  const lc: Lifecycle = {
    ...world,
    webhook,
    controllers,
    async kill(name, signal = 'SIGKILL') {
      controllers[name].proc.kill(signal);
      await controllers[name].exited;
    },
    async start(name) {
      controllers[name] = spawn(name);
      await started(controllers[name], name);
      return controllers[name];
    },
    async stop() {
      await world.stopObserving();
      await Promise.all(all.map((c) => controllers[c].stop('SIGTERM', 15_000)));
      await webhook.stop();
      await writePolicy(admin, defaultPolicyData()).catch(() => undefined);
      await admin.close();
    },
  };
  world.bind(lc);
  return lc;
}

export * from './queries.js';

/** A fleet budget over exactly one case's servers (or over the servers `matchLabels` selects). */
export async function caseBudget(
  lc: Lifecycle,
  fleet: Fleet,
  maxUnavailable: number | string,
  options: { name?: string; matchLabels?: Record<string, string>; topologyKey?: string } = {},
): Promise<ServerDisruptionBudget> {
  const budget = await lc.sdbs.create({
    metadata: { name: options.name ?? `${fleet.name}-budget` },
    spec: {
      serverSelector: { matchLabels: options.matchLabels ?? { [CASE_LABEL]: fleet.name } },
      maxUnavailable,
      ...(options.topologyKey ? { topologyKey: options.topologyKey } : {}),
    },
  });
  // The webhook refuses a budget whose status predates its spec: wait for the budget controller.
  return waitFor(
    `budget ${budget.metadata.name ?? ''} observed`,
    async () => {
      const b = await lc.sdbs.get(budget.metadata.name ?? '');
      return (b.status?.observedGeneration ?? 0) >= (b.metadata.generation ?? 1) ? b : undefined;
    },
    { timeoutMs: 20_000 },
  );
}

export const claimKey = (c: { namespace: string; name: string }) => objectKey(c);
export const ledgerHas = (b: ServerDisruptionBudget | undefined, uid: string) =>
  (b?.status?.grants ?? []).some((g) => g.maintenanceUID === uid);
export { HOLD_ANNOTATION, ServerClaimDisruptionBudgetResource };
export { overlaps, peakInMaintenance, sample, startOrder, type StateRecord } from './history.js';

/** Annotations for a maintenance the simulated actor holds until the test deletes it. */
export const HOLD_FOREVER = { [HOLD_ANNOTATION]: 'forever' };
