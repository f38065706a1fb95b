// Upstream metal-operator's own manager (v0.7.0, built by scripts/lib/metal-operator.sh) as a real
// process against a test control plane, the way its release deploys it (config/default): its own
// ServiceAccount `metal-operator-controller-manager` in `metal-operator-system` bound to the
// ClusterRole of the same release (config/rbac/role.yaml, read from the Go module cache), leader
// election off, its webhooks off (ENABLE_WEBHOOKS=false: ours is the one registered), its CRDs for
// the kinds we do not ship installed from the same release (it exits at once without them: `no
// matches for kind "BIOSSettings"`).
//
// Listeners: metrics and probes take an address (127.0.0.1 here); its registry cannot: it binds
// `:<--registry-port>` on every interface. So the manager runs in a network namespace of its own with
// only loopback (netns.ts): the API server and the BMC mocks are bridged in, the registry and probes out.
import { join } from 'node:path';
import { request } from 'undici';
import type { KubeObject } from '../../api/schema/meta.js';
import type { KubeClient } from '../../lib/kube/client.js';
import { isAlreadyExists } from '../../lib/kube/errors.js';
import { Core } from '../../lib/kube/resources.js';
import { ensureNamespace, tokenKubeconfig } from '../harness/processes.js';
import {
  metalOperatorModuleDir,
  moduleManifest,
  upstreamCRDs,
  type UpstreamCRD,
} from './metal-operator-module.js';
import { startInNetns, type NetnsProcess } from './netns.js';
import { preparePeer } from './process.js';

export const MANAGER_NAMESPACE = 'metal-operator-system';
export const MANAGER_SERVICE_ACCOUNT = 'metal-operator-controller-manager';
/** Ports inside the manager's namespace (any: nothing else listens there). */
const REGISTRY_PORT = 10000;
const METRICS_PORT = 8080;
const PROBE_PORT = 8081;

export interface MetalOperatorOptions {
  /** Host loopback ports of the BMC mocks the manager must reach. */
  bmcPorts: number[];
  /** Extra manager flags (they override the defaults below, flag parsing keeps the last). */
  args?: string[];
}

export interface MetalOperator {
  process: NetnsProcess;
  username: string;
  /** The registry as the host reaches it (the manager itself uses http://127.0.0.1:10000). */
  registryURL: string;
  /** Maps a registry URL the manager hands out (ignition) to `registryURL`. */
  registryAddress(url: string): string;
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

type Named = KubeObject & Record<string, unknown>;

async function createOrReplace(
  client: KubeClient,
  rt: (typeof Core)[keyof typeof Core],
  obj: Named,
): Promise<void> {
  const res = client.resource<Named>(rt);
  try {
    await res.create(obj);
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
    const cur = await res.get(obj.metadata.name!, obj.metadata.namespace);
    await res.replace({
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: cur.metadata.resourceVersion },
    });
  }
}

/**
 * Installs the CRDs of metal-operator's release for the kinds manifests/crds does not ship (ours stay),
 * and waits until each is Established. Returns their names.
 */
export async function installUpstreamOnlyCRDs(client: KubeClient, timeoutMs = 60_000): Promise<string[]> {
  const ours = new Set(
    (await client.resource<UpstreamCRD>(Core.CustomResourceDefinition).list()).items
      .filter((c) => c.metadata.labels?.['app.kubernetes.io/part-of'] === 'metal-maintenance')
      .map((c) => c.metadata.name!),
  );
  const names: string[] = [];
  for (const crd of upstreamCRDs().values()) {
    const name = crd.metadata.name!;
    if (ours.has(name)) continue;
    names.push(name);
    await createOrReplace(client, Core.CustomResourceDefinition, crd as unknown as Named);
  }
  const deadline = Date.now() + timeoutMs;
  for (const name of names)
    for (;;) {
      const crd = await client.resource<Named>(Core.CustomResourceDefinition).get(name);
      const conditions = (crd.status as { conditions?: { type: string; status: string }[] } | undefined)
        ?.conditions;
      if (conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline)
        throw new Error(`upstream CRD ${name} not Established within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  return names;
}

/** The manager's ServiceAccount, bound to the ClusterRole of its release; a token kubeconfig for it. */
async function managerIdentity(client: KubeClient): Promise<{ kubeconfig: string; username: string }> {
  await ensureNamespace(client, MANAGER_NAMESPACE);
  const role = moduleManifest('config/rbac/role.yaml').find((o) => o.kind === 'ClusterRole') as
    Named | undefined;
  if (!role) throw new Error('metal-operator config/rbac/role.yaml has no ClusterRole');
  const roleName = 'metal-operator-manager-role';
  await createOrReplace(client, Core.ServiceAccount, {
    metadata: { name: MANAGER_SERVICE_ACCOUNT, namespace: MANAGER_NAMESPACE },
  });
  await createOrReplace(client, Core.ClusterRole, { ...role, metadata: { name: roleName } });
  await createOrReplace(client, Core.ClusterRoleBinding, {
    metadata: { name: 'metal-operator-manager-rolebinding' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
    subjects: [{ kind: 'ServiceAccount', name: MANAGER_SERVICE_ACCOUNT, namespace: MANAGER_NAMESPACE }],
  });
  return tokenKubeconfig(client, MANAGER_NAMESPACE, MANAGER_SERVICE_ACCOUNT);
}

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await request(url, { signal: AbortSignal.timeout(2_000) });
  return { status: res.statusCode, body: await res.body.text() };
}

export async function startMetalOperator(
  client: KubeClient,
  options: MetalOperatorOptions,
): Promise<MetalOperator> {
  const [dir, moduleDir] = [await preparePeer('metal-operator.sh'), metalOperatorModuleDir()];
  await installUpstreamOnlyCRDs(client);
  const { kubeconfig, username } = await managerIdentity(client);
  const apiPort = Number(new URL(client.server).port);
  const proc = await startInNetns({
    name: 'metal-operator',
    command: join(dir, 'manager'),
    args: [
      `--registry-url=http://127.0.0.1:${REGISTRY_PORT}`,
      `--registry-port=${REGISTRY_PORT}`,
      `--metrics-bind-address=127.0.0.1:${METRICS_PORT}`,
      '--metrics-secure=false',
      `--health-probe-bind-address=127.0.0.1:${PROBE_PORT}`,
      `--manager-namespace=${MANAGER_NAMESPACE}`,
      `--discovery-ignition-path=${join(moduleDir, 'config', 'manager', 'ignition-template.yaml')}`,
      '--probe-image=ghcr.io/ironcore-dev/metalprobe:v0.7.0',
      '--probe-os-image=ghcr.io/ironcore-dev/os-images/gardenlinux:1877.0',
      '--protocol=http',
      // Test pacing: the defaults (5 s polls, 2 min resync) are for real BMCs.
      '--power-polling-interval=200ms',
      '--resource-polling-interval=200ms',
      '--server-resync-interval=2s',
      '--zap-encoder=json',
      ...(options.args ?? []),
    ],
    env: { KUBECONFIG: kubeconfig, ENABLE_WEBHOOKS: 'false' },
    inbound: [apiPort, ...options.bmcPorts],
    outbound: [REGISTRY_PORT, METRICS_PORT, PROBE_PORT],
  });
  const probe = `http://127.0.0.1:${proc.hostPort(PROBE_PORT)}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ready = await get(`${probe}/readyz`).catch(() => ({ status: 0, body: '' }));
    if (ready.status === 200) break;
    const gone = await Promise.race([
      proc.exited.then(() => true),
      new Promise((r) => setTimeout(() => r(false), 200)),
    ]);
    if (gone || Date.now() > deadline) {
      await proc.stop();
      throw new Error(
        `metal-operator's manager ${gone ? 'exited' : 'not ready within 60 s'}:\n${proc.lines.slice(-15).join('\n')}`,
      );
    }
  }
  const registryURL = `http://127.0.0.1:${proc.hostPort(REGISTRY_PORT)}`;
  return {
    process: proc,
    username,
    registryURL,
    registryAddress(url) {
      if (url !== `http://127.0.0.1:${REGISTRY_PORT}`) throw new Error(`unexpected registry URL ${url}`);
      return registryURL;
    },
    metrics: async () => (await get(`http://127.0.0.1:${proc.hostPort(METRICS_PORT)}/metrics`)).body,
    stop: () => proc.stop(),
  };
}
