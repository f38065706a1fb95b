// What an integration test uses: the run's control plane, admin and service-account clients,
// fresh namespaces, and polling with a deadline.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { KubeClient } from '../../lib/kube/client.js';
import { Core } from '../../lib/kube/resources.js';
import { isAlreadyExists } from '../../lib/kube/errors.js';
import { readControlPlane, type ControlPlane } from './control-plane.js';
import { clusterKubeconfig, inCluster } from './target.js';
import type { KubeObject } from '../../api/schema/meta.js';

export function controlPlane(): ControlPlane {
  const dir = process.env.METAL_TEST_CP_DIR;
  if (!dir) {
    throw new Error(
      'integration tests need the control plane that Jest global setup starts; run them with `npm test` or ' +
        '`npm run test:integration` (see README), not with a bare `jest` on one file',
    );
  }
  return readControlPlane(dir);
}

/** The suite's admin identity: the run's control plane, or KUBECONFIG with E2E_TARGET=cluster. */
export function adminClient(): Promise<KubeClient> {
  return KubeClient.fromFile(inCluster() ? clusterKubeconfig() : controlPlane().kubeconfig);
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/** Creates a namespace no other test uses (envtest never deletes namespaces, so never reuse). */
export async function freshNamespace(client: KubeClient, prefix = 'test'): Promise<string> {
  const name = uniqueName(prefix);
  await client.resource(Core.Namespace).create({ metadata: { name } });
  return name;
}

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/**
 * A ServiceAccount with exactly `rules` (cluster-wide), and a kubeconfig file that authenticates as
 * it with a real token from the TokenRequest API.
 */
export async function serviceAccountKubeconfig(
  client: KubeClient,
  namespace: string,
  name: string,
  rules: PolicyRule[],
): Promise<{ kubeconfig: string; username: string }> {
  const ensure = async (rt: (typeof Core)[keyof typeof Core], obj: KubeObject & Record<string, unknown>) => {
    try {
      await client.resource(rt).create(obj);
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  };
  await ensure(Core.ServiceAccount, { metadata: { name, namespace } });
  const roleName = `${namespace}-${name}`;
  await ensure(Core.ClusterRole, { metadata: { name: roleName }, rules });
  await ensure(Core.ClusterRoleBinding, {
    metadata: { name: roleName },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
    subjects: [{ kind: 'ServiceAccount', name, namespace }],
  });
  const tr = await client.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    {
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 3600 },
      },
    },
  );
  const file = writeTokenKubeconfig(client, name, tr.status.token);
  return { kubeconfig: file, username: `system:serviceaccount:${namespace}:${name}` };
}

/**
 * A kubeconfig (mode 0600, in a fresh temp directory) for `user` with a bearer token, trusting the
 * API server with the CA `client` trusts it with.
 */
export function writeTokenKubeconfig(client: KubeClient, user: string, token: string): string {
  const ca = client.access.tls.ca;
  if (!ca) throw new Error(`${client.access.source} names no certificate authority for its cluster`);
  const file = join(mkdtempSync(join(tmpdir(), `metal-${user.replace(/[^a-z0-9-]/gi, '-')}-`)), 'kubeconfig');
  const cluster = { server: client.server, 'certificate-authority-data': Buffer.from(ca).toString('base64') };
  writeFileSync(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'local', cluster }],
      users: [{ name: user, user: { token } }],
      contexts: [{ name: 'local', context: { cluster: 'local', user } }],
      'current-context': 'local',
    }),
    { mode: 0o600 },
  );
  return file;
}

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

/** Polls `probe` until it returns a value other than undefined/false; fails naming `what`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  options: WaitOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const intervalMs = options.intervalMs ?? 100;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message})` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
