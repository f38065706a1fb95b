// The drain e2e suites' world: a real workload cluster (e2e/harness/workload-cluster.ts) wired to the
// real lifecycle binaries the way an operator wires it (the documented workload Role, its kubeconfig in
// a Secret the policy names, read through a RoleBinding in the tenant), and workloads under PDBs.
// bench/drain.ts imports it too, outside Jest: so Jest's globals (beforeAll, expect) are used only
// inside the functions the suites call, never imported from @jest/globals (which throws outside Jest).
import { readFileSync } from 'node:fs';
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import { SETUP_TIMEOUT_MS } from '../../../e2e/harness/dist.js';
import { Core } from '../../../lib/kube/resources.js';
import { applyManifest, tokenKubeconfig } from '../../../e2e/harness/processes.js';
import { REPO_ROOT } from '../../../e2e/harness/control-plane.js';
import { waitFor } from '../../../e2e/harness/env.js';
import {
  startWorkloadCluster,
  type Node,
  type WorkloadCluster,
} from '../../../e2e/harness/workload-cluster.js';
import { deploymentObject, podsOf, type Pdb } from '../../../e2e/harness/testing/workloads.js';
import { claimProviderID } from '../../../contract/names.js';
import {
  finish,
  startLifecycle,
  waitForGone,
  waitForMaintenance,
  type Fleet,
  type Lifecycle,
} from '../lifecycle/harness.js';
import { localTargetOnly } from '../../../e2e/harness/target.js';

// Every file of the suite comes through here: asked for cluster mode, each fails at load, saying why.
localTargetOnly(
  'the drain suite (test/integration/drain)',
  "the drain controller must reach the workload cluster this world starts on the test host at a loopback address, which a real cluster's pods cannot (the stand-in cluster's pods share the host's network, so there it would pass for the wrong reason)",
);

export const SHOP = 'shop';

/** The drain controller's identity, as the webhook stamps it on what it approves. */
export const DRAIN_SA = 'system:serviceaccount:metal-maintenance-system:drain-controller';

export const nodeOf = (i: number) => `node-${i}`;

export interface DrainWorld {
  wc: WorkloadCluster;
  lc: Lifecycle;
  f: Fleet;
  /** The workload cluster kubeconfig the drain controller is given (the documented Role's token). */
  workloadKubeconfig: string;
}

/** The suites' drain policy: the tenant's claims are consumed by the workload cluster's Nodes. */
export function drainPolicy(tenant: string, cluster: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    leadTime: '0s',
    timeout: '20s',
    onTimeout: 'Fail',
    emptyDirData: 'Block',
    unmanagedPods: 'Block',
    clusters: [{ namespace: tenant, secretName: 'workload-kubeconfig', secretKey: 'kubeconfig', ...cluster }],
  };
}

/**
 * Wires the drain controller to the workload cluster the way an operator does: exactly the documented
 * Role, its kubeconfig in a Secret the policy names for `tenant`, read through a RoleBinding there.
 * Returns that kubeconfig.
 */
export async function connectDrain(wc: WorkloadCluster, lc: Lifecycle, tenant: string): Promise<string> {
  // The workload cluster's side: exactly the documented Role, and its kubeconfig in a Secret the
  // policy names; the drain controller may read that Secret through a RoleBinding in the tenant.
  await applyManifest(wc.admin, `${REPO_ROOT}/manifests/drain-controller/workload/rbac.yaml`);
  const { kubeconfig } = await tokenKubeconfig(wc.admin, 'kube-system', 'metal-drain');
  const workloadKubeconfig = readFileSync(kubeconfig, 'utf8');
  await lc.admin.resource(Core.Secret).create({
    metadata: { name: 'workload-kubeconfig', namespace: tenant },
    data: { kubeconfig: Buffer.from(workloadKubeconfig).toString('base64') },
  } as never);
  await lc.admin.resource(Core.RoleBinding).create({
    metadata: { name: 'drain-credentials', namespace: tenant },
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'metal-maintenance-drain-credentials',
    },
    subjects: [{ kind: 'ServiceAccount', name: 'drain-controller', namespace: 'metal-maintenance-system' }],
  } as never);
  await lc.setPolicy({ drain: drainPolicy(tenant) } as never);
  return workloadKubeconfig;
}

/**
 * The workload cluster, the lifecycle binaries with the drain controller, and a fleet whose claim i is
 * consumed by node-i (node-2 cordoned by an admin before anything of ours ran).
 */
export async function startDrainWorld(): Promise<DrainWorld> {
  const wc = await startWorkloadCluster();
  const lc = await startLifecycle({ actorHoldMs: 1000, extra: ['drain-controller'] });
  const f = await lc.fleet('drain', { servers: 5, claims: 'consumer' });
  const workloadKubeconfig = await connectDrain(wc, lc, f.tenant);
  await wc.admin.resource(Core.Namespace).create({ metadata: { name: SHOP } });
  // Claim i is consumed by node-i; node-2 was cordoned by an admin before anything of ours ran.
  await wc.addNodes(
    f.claims.map((c, i) => ({
      name: nodeOf(i),
      providerID: claimProviderID(c.namespace, c.name),
      labels: { pool: 'main' },
      unschedulable: i === 2,
    })),
  );
  return { wc, lc, f, workloadKubeconfig };
}

export async function stopDrainWorld(w: Partial<DrainWorld> | undefined): Promise<void> {
  await w?.lc?.stop();
  await w?.wc?.stop();
}

/**
 * A suite's world: started before its tests (then `setup`, e.g. CRDs or a policy of its own), stopped
 * after them. The object is filled in by beforeAll, so read its fields inside tests and hooks only.
 */
export function useDrainWorld(setup?: (w: DrainWorld) => Promise<void>): DrainWorld {
  const w = {} as DrainWorld;
  beforeAll(async () => {
    Object.assign(w, await startDrainWorld());
    await setup?.(w);
  }, SETUP_TIMEOUT_MS);
  afterAll(() => stopDrainWorld(w), 90_000);
  return w;
}

/**
 * Waits until maintenance `name` is drained, then until it runs on the drain controller's approval
 * (the claim holds that approval only until InMaintenance; the maintenance records it).
 */
export async function drainedThenApproved(
  lc: Lifecycle,
  name: string,
  timeoutMs = 90_000,
): Promise<{ drained: ServerMaintenance; running: ServerMaintenance }> {
  const drained = await waitForMaintenance(lc, name, 'drained', (x) => x.status?.drain?.phase === 'Drained', {
    timeoutMs,
  });
  const running = await waitForMaintenance(
    lc,
    name,
    'InMaintenance',
    (x) => x.status?.state === 'InMaintenance',
  );
  expect(running.status?.approval).toMatchObject({ source: 'Owner', approvedBy: DRAIN_SA });
  return { drained, running };
}

/** Ends maintenance `name` and waits for `node` to be schedulable again; returns that Node. */
export async function endedAndUncordoned(w: DrainWorld, name: string, node: string): Promise<Node> {
  await finish(w.lc, name);
  await waitForGone(w.lc, name);
  return waitFor(`${node} uncordoned`, async () => {
    const n = await nodesOf(w.wc).get(node);
    return !n.spec?.unschedulable && n;
  });
}

/**
 * Samples every 50 ms how many pods of `app` run and are not leaving; `fewest()` is the least seen
 * (from `start`, the count before anything moved). `stop()` ends the sampling.
 */
export function sampleRunning(wc: WorkloadCluster, app: string, start: number) {
  let fewest = start;
  const timer = setInterval(() => {
    void podsOf(wc.admin, SHOP, `app=${app}`).then((pods) => {
      const running = pods.filter((p) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp);
      fewest = Math.min(fewest, running.length);
    });
  }, 50);
  return { fewest: () => fewest, stop: () => clearInterval(timer) };
}

export const nodesOf = (wc: WorkloadCluster) => wc.admin.resource<Node>(Core.Node);

/**
 * A Deployment whose pods need the Node label `fits-<name>`: they start on `node` (the only Node with
 * it); spare Nodes added with the label later are where evicted pods land.
 */
export async function workloadOn(
  wc: WorkloadCluster,
  name: string,
  node: string,
  replicas: number,
  pdb: Pdb['spec'],
): Promise<void> {
  const fits = `fits-${name}`;
  await nodesOf(wc).patch(node, { metadata: { labels: { [fits]: 'yes' } } });
  await wc.admin
    .resource(Core.Deployment)
    .create(deploymentObject(SHOP, name, replicas, { nodeSelector: { [fits]: 'yes' } }));
  await wc.admin
    .resource<Pdb>(Core.PodDisruptionBudget)
    .create({ metadata: { name, namespace: SHOP }, spec: pdb });
  await waitFor(`${replicas} ${name} pods running on ${node}`, async () => {
    const pods = (await podsOf(wc.admin, SHOP, `app=${name}`)).filter((p) => p.status?.phase === 'Running');
    return pods.length === replicas && pods.every((p) => p.spec?.nodeName === node);
  });
}
