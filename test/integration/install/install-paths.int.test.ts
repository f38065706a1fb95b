// Every way an operator installs, on a real kube-apiserver of its own (a scratch control plane: the
// install registers webhook configurations that would reach into the shared one's tests), each
// followed by an upstream-shaped ServerClaim with `power: On`, which a CRD read by a YAML 1.1
// reader as `enum: [true, false]` refuses. Between paths the ServerClaim CRD is deleted, so each path
// writes it afresh through its own reader. cert-manager's Issuer and Certificate CRDs come from its
// release; its controllers are not needed to accept the objects.
import { afterAll, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { join } from 'node:path';
import { controlPlaneUp, scratchControlPlaneDir } from '../../../e2e/harness/control-plane.js';
import { uniqueName, waitFor } from '../../../e2e/harness/env.js';
import {
  CHART,
  MANIFESTS,
  certManagerCRDFiles,
  helmPath,
  kubectlPath,
  kustomizationFiles,
  ok,
  tool,
} from './tools.js';

const CLAIMS_CRD = 'serverclaims.metal.ironcore.dev';
// Each path is tens of kubectl processes (apply -f file by file took 93 s on a loaded machine).
jest.setTimeout(180_000);
let cp: ReturnType<typeof scratchControlPlaneDir>;
let kubeconfig: string;

const kubectl = (args: string[], input?: string) =>
  ok(kubectlPath(), ['--kubeconfig', kubeconfig, ...args], input);

/**
 * Waits for a CRD's Established condition. Not `kubectl wait`: on a CRD created a moment before,
 * whose status has no conditions yet, it fails (".status.conditions accessor error") instead of waiting.
 */
async function established(crd: string): Promise<void> {
  const jsonpath = 'jsonpath={.status.conditions[?(@.type=="Established")].status}';
  await waitFor(
    `CRD ${crd} Established`,
    async () => (await kubectl(['get', 'crd', crd, '-o', jsonpath])) === 'True' || undefined,
    { timeoutMs: 60_000 },
  );
}

beforeAll(async () => {
  cp = scratchControlPlaneDir('metal-install-cp-');
  ({ kubeconfig } = await controlPlaneUp(cp.dir));
  for (const file of certManagerCRDFiles()) await kubectl(['apply', '-f', file]);
  await established('issuers.cert-manager.io');
  await established('certificates.cert-manager.io');
}, 300_000);

afterAll(() => cp?.teardown());

/** The ServerClaim enum the API server holds, and whether it accepts a claim as upstream writes it. */
async function acceptsUpstreamClaim(): Promise<{ enum: unknown; created: string }> {
  await established(CLAIMS_CRD);
  const crd = JSON.parse(await kubectl(['get', 'crd', CLAIMS_CRD, '-o', 'json'])) as {
    spec: {
      versions: {
        schema: { openAPIV3Schema: { properties: { spec: { properties: { power: { enum: unknown } } } } } };
      }[];
    };
  };
  const ns = uniqueName('install');
  await kubectl(['create', 'namespace', ns]);
  // As metal-operator's samples write it; JSON, so no YAML reader of ours is involved in the claim.
  const claim = {
    apiVersion: 'metal.ironcore.dev/v1alpha1',
    kind: 'ServerClaim',
    metadata: { name: 'worker-0', namespace: ns },
    spec: {
      power: 'On',
      serverSelector: { matchLabels: { 'topology.metal.ironcore.dev/rack': 'rack1' } },
      image: 'ghcr.io/ironcore-dev/os-images/gardenlinux:1877.2',
      ignitionSecretRef: { name: 'worker-0-ignition' },
    },
  };
  const created = await kubectl(['create', '-f', '-', '-o', 'name'], JSON.stringify(claim));
  return {
    enum: crd.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties.power.enum,
    created: created.trim(),
  };
}

const accepted = { enum: ['On', 'Off'], created: 'serverclaim.metal.ironcore.dev/worker-0' };

describe('install paths', () => {
  beforeEach(async () => {
    await kubectl(['delete', 'crd', CLAIMS_CRD, '--ignore-not-found', '--wait', '--timeout=60s']);
  });

  // First: on objects kubectl's client-side apply wrote, server-side apply conflicts with its manager
  // on the webhooks' defaulted rules (the migration needs --force-conflicts, docs/operations.md).
  it('kubectl apply --server-side -k manifests, on a fresh API server', async () => {
    await kubectl(['apply', '--server-side', '--field-manager=metal-install', '-k', MANIFESTS]);
    expect(await acceptsUpstreamClaim()).toEqual(accepted);
  });

  it('kubectl apply -f, file by file as the kustomizations list them', async () => {
    const files = kustomizationFiles();
    expect(files).toContain(join(MANIFESTS, 'crds', `metal.ironcore.dev_serverclaims.yaml`));
    // The Namespace and the CRDs first, as an operator must without kustomize's ordering.
    const first = files.filter((f) => f.endsWith('namespace.yaml') || f.includes('/crds/'));
    for (const f of [...first, ...files.filter((f) => !first.includes(f))]) await kubectl(['apply', '-f', f]);
    expect(await acceptsUpstreamClaim()).toEqual(accepted);
  });

  it('kubectl apply -k manifests', async () => {
    await kubectl(['apply', '-k', MANIFESTS]);
    expect(await acceptsUpstreamClaim()).toEqual(accepted);
  });

  it('helm template | kubectl apply -f -', async () => {
    const rendered = await ok(helmPath(), [
      'template',
      'metal-maintenance',
      CHART,
      '--namespace',
      'metal-maintenance-system',
    ]);
    await kubectl(['apply', '-f', '-'], rendered);
    expect(await acceptsUpstreamClaim()).toEqual(accepted);
  });

  it('kubectl apply -k the namespace overlay: everything in the other namespace', async () => {
    await kubectl(['apply', '-k', join(MANIFESTS, 'overlays', 'namespace')]);
    expect(await acceptsUpstreamClaim()).toEqual(accepted);
    const accounts = await kubectl(['get', 'serviceaccounts', '-n', 'metal-maintenance', '-o', 'name']);
    expect(accounts.split('\n').filter(Boolean).sort()).toEqual(
      expect.arrayContaining(['serviceaccount/approval-controller', 'serviceaccount/webhook']),
    );
    const policy = await tool(kubectlPath(), [
      '--kubeconfig',
      kubeconfig,
      'get',
      'configmap',
      'metal-maintenance-policy',
      '-n',
      'metal-maintenance',
      '-o',
      'jsonpath={.data.policy\\.yaml}',
    ]);
    expect(policy.stdout).toContain('system:serviceaccount:metal-maintenance:maintenance-controller');
  });
});
