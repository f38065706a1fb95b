// `kubectl metal status` and the connection errors against the real API server: the wait reason a
// maintenance really has (NotBefore, not an unclaimed server's Unclaimed), a per-rack budget per
// rack, a tenant ServiceAccount that sees its namespace and is told what is hidden (exit 0), and
// --context / kubeconfig errors that say what is missing and where the plugin looked.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminClient, freshNamespace, uniqueName } from '../../../e2e/harness/env.js';
import { adminKubeconfig, tokenKubeconfig } from '../../../e2e/harness/processes.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import { Core } from '../../../lib/kube/resources.js';
import { api, type Api } from '../../../cli/kube.js';
import { main } from '../../../cli/main.js';

let admin: KubeClient;
let a: Api;
let ns: string;
let tenantKubeconfig: string;
const T = new Date().toISOString().replace(/\.\d+Z$/, 'Z');

async function cli(kubeconfig: string | undefined, ...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main([...(kubeconfig ? ['--kubeconfig', kubeconfig] : []), '--no-color', ...args], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const cond = (type: string, reason: string) => ({
  type,
  status: 'False' as const,
  reason,
  message: reason,
  lastTransitionTime: T,
});

beforeAll(async () => {
  admin = await adminClient();
  a = api(admin);
  ns = await freshNamespace(admin, 'cli-status');
  const server = uniqueName('srv');
  await a.servers.create({ metadata: { name: server }, spec: { systemUUID: server } });
  const m = await a.maintenances.create({
    metadata: { name: 'later', namespace: ns },
    spec: { serverRef: { name: server }, approval: { notBefore: '2099-01-01T00:00:00Z' } },
  });
  // What the approval and maintenance controllers write for a maintenance of an unclaimed server
  // that may not start yet (no webhook runs in this file: the admin writes it as they would).
  await a.maintenances.replaceStatus({
    ...m,
    status: {
      state: 'Approved',
      conditions: [cond('Announced', 'Unclaimed'), cond('Admitted', 'NotBefore')],
    },
  });
  const b = await a.serverBudgets.create({
    metadata: { name: uniqueName('per-rack') },
    spec: { serverSelector: { matchLabels: { none: 'x' } }, maxUnavailable: 2, topologyKey: 'rack' },
  });
  await a.serverBudgets.replaceStatus({
    ...b,
    status: {
      observedGeneration: 1,
      expected: 20,
      unavailable: 3,
      disruptionsAllowed: 4,
      domains: [
        { name: 'r1', expected: 10, unavailable: 1, granted: 0, allowed: 1 },
        { name: 'r2', expected: 10, unavailable: 2, granted: 0, allowed: 0 },
      ],
    },
  });
  // A tenant: may read maintenances and claims in its namespace, nothing cluster-scoped.
  await admin.resource(Core.ServiceAccount).create({ metadata: { name: 'tenant', namespace: ns } });
  await admin.resource(Core.Role).create({
    metadata: { name: 'tenant', namespace: ns },
    rules: [
      {
        apiGroups: ['metal.ironcore.dev', 'maintenance.metal.ironcore.dev'],
        resources: ['serverclaims', 'servermaintenances', 'serverclaimdisruptionbudgets'],
        verbs: ['get', 'list', 'watch'],
      },
    ],
  } as never);
  await admin.resource(Core.RoleBinding).create({
    metadata: { name: 'tenant', namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'tenant' },
    subjects: [{ kind: 'ServiceAccount', name: 'tenant', namespace: ns }],
  } as never);
  tenantKubeconfig = (await tokenKubeconfig(admin, ns, 'tenant')).kubeconfig;
}, 60_000);

afterAll(async () => {
  await admin?.close();
});

describe('kubectl metal status', () => {
  it('shows NotBefore as the wait reason of a maintenance of an unclaimed server, not Unclaimed', async () => {
    const r = await cli(adminKubeconfig(), '-n', ns, 'status');
    expect(r.code).toBe(0);
    const line = r.out.split('\n').find((l) => l.includes(' later '));
    expect(line).toMatch(/\bNotBefore\b/);
    expect(line).not.toContain('Unclaimed');
  });

  it('shows a per-rack budget per rack', async () => {
    const r = await cli(adminKubeconfig(), 'status');
    const rows = r.out.split('\n').filter((l) => l.includes('per-rack'));
    expect(rows.map((l) => l.split(/\s+/).slice(2, 7))).toEqual(
      expect.arrayContaining([
        ['2', 'rack=r1', '10', '1', '1'],
        ['2', 'rack=r2', '10', '2', '0'],
      ]),
    );
  });

  it('as a tenant, shows its namespace and says what it may not see, exit 0', async () => {
    const r = await cli(tenantKubeconfig, '-n', ns, 'status');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/\blater\b.*\bNotBefore\b/);
    expect(r.out).toContain('HIDDEN');
    expect(r.out).toMatch(/servers \(all namespaces\): .*forbidden/);
    expect(r.out).toMatch(/serverdisruptionbudgets \(all namespaces\): .*forbidden/);
    expect(r.out).toContain('Servers hidden (not allowed to list them).');
  });
});

describe('connection errors', () => {
  it('--context nosuch names the kubeconfig and the contexts it has', async () => {
    const r = await cli(adminKubeconfig(), '--context', 'nosuch', 'status');
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      `METAL_ERR_CLI_NO_CONTEXT: context "nosuch" is not in ${adminKubeconfig()}; it has "`,
    );
  });

  it('no kubeconfig anywhere names every place it looked', async () => {
    const saved = {
      KUBECONFIG: process.env.KUBECONFIG,
      HOME: process.env.HOME,
      K: process.env.KUBERNETES_SERVICE_HOST,
    };
    const home = mkdtempSync(join(tmpdir(), 'kubectl-metal-home-'));
    delete process.env.KUBECONFIG;
    delete process.env.KUBERNETES_SERVICE_HOST;
    process.env.HOME = home;
    try {
      const r = await cli(undefined, 'status');
      expect(r.code).toBe(1);
      expect(r.err).toContain(
        'METAL_ERR_CLI_NO_KUBECONFIG: no kubeconfig found; looked in $KUBECONFIG (unset)',
      );
      expect(r.err).toContain(join(home, '.kube', 'config'));
      expect(r.err).not.toContain('HTTP protocol');
    } finally {
      for (const [k, v] of [
        ['KUBECONFIG', saved.KUBECONFIG],
        ['HOME', saved.HOME],
        ['KUBERNETES_SERVICE_HOST', saved.K],
      ] as const)
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  });
});
