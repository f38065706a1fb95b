// Behaviour 7's Gardener half (issue 27), against the real workload cluster and the real lifecycle
// binaries: a claim the IronCore MCM provider made is consumed by the Node of a Gardener MCM Machine
// (machine.sapcloud.io/v1alpha1, CRD written from the published API in fixtures/) whose
// spec.providerID names the claim; its status.node is the Node, whatever that Node's own providerID
// says. The Machines are read in the namespace the policy names, with exactly the documented role.
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { KubeObject } from '../../../api/schema/meta.js';
import { installCRDFiles, REPO_ROOT } from '../../../e2e/harness/control-plane.js';
import { SETUP_TIMEOUT_MS } from '../../../e2e/harness/dist.js';
import { waitFor } from '../../../e2e/harness/env.js';
import { applyManifest } from '../../../e2e/harness/processes.js';
import { podsOf } from '../../../e2e/harness/testing/workloads.js';
import { McmMachineType } from '../../../controllers/drain/views.js';
import { claimProviderID } from '../../../contract/names.js';
import { Core } from '../../../lib/kube/resources.js';
import {
  conditionOf,
  finish,
  waitForGone,
  waitForMaintenance,
  type Fleet,
  type Lifecycle,
} from '../lifecycle/harness.js';
import {
  DRAIN_SA,
  drainPolicy,
  nodeOf,
  nodesOf,
  SHOP,
  startDrainWorld,
  stopDrainWorld,
  workloadOn,
  type DrainWorld,
} from './world.js';

/** Where the shoot's Machines are (in a real landscape: the shoot's namespace in the seed). */
const SHOOT_NS = 'shoot--tenant--prod';

let w: DrainWorld | undefined;
let lc: Lifecycle;
let f: Fleet;

beforeAll(async () => {
  w = await startDrainWorld();
  ({ lc, f } = w);
  const admin = w.wc.admin;
  await installCRDFiles(admin, [
    join(import.meta.dirname, 'fixtures', 'machines.machine.sapcloud.io.crd.yaml'),
  ]);
  await admin.resource(Core.Namespace).create({ metadata: { name: SHOOT_NS } });
  // The documented role for MCM Machines, bound in the Machines' namespace to the identity whose
  // kubeconfig the drain controller has (the workload cluster's own here).
  await applyManifest(admin, `${REPO_ROOT}/manifests/drain-controller/workload/mcm-rbac.yaml`);
  await admin.resource(Core.RoleBinding).create({
    metadata: { name: 'metal-drain-mcm', namespace: SHOOT_NS },
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'metal-maintenance-drain-mcm',
    },
    subjects: [{ kind: 'ServiceAccount', name: 'metal-drain', namespace: 'kube-system' }],
  } as never);
  await lc.setPolicy({ drain: drainPolicy(f.tenant, { mcm: { namespace: SHOOT_NS } }) } as never);
}, SETUP_TIMEOUT_MS);

afterAll(() => stopDrainWorld(w), 90_000);

it('finds a Gardener MCM Machine’s Node by spec.providerID and status.node, and drains it', async () => {
  const { wc } = w!;
  const claim = f.claims[3]!;
  const node = 'mcm-worker';
  await wc.addNodes([{ name: node }]);
  // The MCM provider's Machine, before its Node joined: no status.node yet.
  await wc.admin.resource<KubeObject>(McmMachineType).create({
    metadata: { name: 'prod-worker-z1-abc12', namespace: SHOOT_NS },
    spec: {
      providerID: claimProviderID(claim.namespace, claim.name),
      class: { kind: 'MachineClass', name: 'x' },
    },
  } as never);
  await workloadOn(wc, 'api', node, 2, { maxUnavailable: 1, selector: { matchLabels: { app: 'api' } } });
  await wc.addNodes([{ name: 'mcm-spare', labels: { 'fits-api': 'yes' } }]);

  await lc.maintenance('mcm-drain', f.servers[3]!);
  const waiting = await waitForMaintenance(
    lc,
    'mcm-drain',
    'NodeNotFound naming the Machine',
    (x) => x.status?.drain?.phase === 'NodeNotFound',
    { timeoutMs: 30_000 },
  );
  expect(conditionOf(waiting, 'Drained')).toMatchObject({
    status: 'False',
    reason: 'NodeNotFound',
    message: `MCM Machine ${SHOOT_NS}/prod-worker-z1-abc12 has no status.node yet`,
  });

  await wc.admin
    .resource(McmMachineType)
    .patch('prod-worker-z1-abc12', { status: { node } }, { namespace: SHOOT_NS, subresource: 'status' });
  const drained = await waitForMaintenance(
    lc,
    'mcm-drain',
    'drained',
    (x) => x.status?.drain?.phase === 'Drained',
    { timeoutMs: 90_000 },
  );
  expect(drained.status?.drain).toMatchObject({ node, cordoned: 'ByUs', podsLeft: 0 });
  expect(drained.status?.drain?.via).toBe(`MCM Machine ${SHOOT_NS}/prod-worker-z1-abc12 status.node`);
  const running = await waitForMaintenance(
    lc,
    'mcm-drain',
    'InMaintenance',
    (x) => x.status?.state === 'InMaintenance',
  );
  expect(running.status?.approval).toMatchObject({ source: 'Owner', approvedBy: DRAIN_SA });
  const pods = await podsOf(wc.admin, SHOP, 'app=api');
  expect(pods.map((p) => p.spec?.nodeName)).toEqual(['mcm-spare', 'mcm-spare']);
  // The Node whose providerID names the claim is not the consumer here: it was never cordoned.
  expect((await nodesOf(wc).get(nodeOf(3))).spec?.unschedulable).toBeFalsy();

  await finish(lc, 'mcm-drain');
  await waitForGone(lc, 'mcm-drain');
  await waitFor(`${node} uncordoned`, async () => !(await nodesOf(wc).get(node)).spec?.unschedulable);
}, 240_000);
