// The install renders as one: `kubectl kustomize manifests` holds every part, the overlays move the
// namespace and leave metal-operator's CRDs alone, the chart lints and templates to the same objects,
// and every file a YAML 1.1 reader (PyYAML, like `kubectl apply -f` and Helm) takes the same way as a
// YAML 1.2 reader (kustomize, the yaml package). No API server: the install paths on one are in
// install-paths.int.test.ts.
import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { parsePolicyConfigMap } from '../../../lib/policy/parse.js';
import { POLICY_CONFIGMAP } from '../../../policies/schema.js';
import { REPO_ROOT } from '../../../e2e/harness/control-plane.js';
import type { Obj } from '../../../scripts/lib/chart.js';
import { CHART, MANIFESTS, helmPath, kubectlPath, ok, pythonPath, tool } from './tools.js';

const docs = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => !!o);
const key = (o: Obj) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const kustomize = async (dir: string) => docs(await ok(kubectlPath(), ['kustomize', dir]));
const helmTemplate = async (...args: string[]) =>
  docs(await ok(helmPath(), ['template', 'mm', CHART, '--namespace', 'metal-maintenance-system', ...args]));
const crdGroups = (objs: Obj[]) =>
  objs.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => (o.spec as { group: string }).group);

describe('kubectl kustomize manifests', () => {
  it('renders every part of the install into one namespace', async () => {
    const objs = await kustomize(MANIFESTS);
    const kinds = new Set(objs.map((o) => o.kind));
    for (const kind of [
      'Namespace',
      'CustomResourceDefinition',
      'ConfigMap',
      'ServiceAccount',
      'ClusterRole',
      'Deployment',
      'Service',
      'ValidatingWebhookConfiguration',
      'MutatingWebhookConfiguration',
      'Issuer',
      'Certificate',
    ])
      expect(kinds).toContain(kind);
    expect(objs.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name)).toEqual([
      'metal-maintenance-system',
    ]);
    const namespaces = new Set(objs.flatMap((o) => (o.metadata.namespace ? [o.metadata.namespace] : [])));
    expect([...namespaces]).toEqual(['metal-maintenance-system']);
    expect(objs.find((o) => o.kind === 'ConfigMap')?.metadata.name).toBe('metal-maintenance-policy');
  });

  it('gives every Deployment a metrics Service that selects its pods on the ops port', async () => {
    const objs = await kustomize(MANIFESTS);
    const deployments = objs.filter((o) => o.kind === 'Deployment');
    expect(deployments.length).toBeGreaterThanOrEqual(5);
    for (const d of deployments) {
      const pod = d.spec as { template: { metadata: { labels: Record<string, string> } } };
      const svc = objs.find(
        (o) =>
          o.kind === 'Service' &&
          o.metadata.labels?.['app.kubernetes.io/component'] === 'metrics' &&
          Object.entries((o.spec as { selector: Record<string, string> }).selector).every(
            ([k, v]) => pod.template.metadata.labels[k] === v,
          ),
      );
      expect({ deployment: d.metadata.name, ports: svc?.spec?.ports }).toEqual({
        deployment: d.metadata.name,
        ports: [{ name: 'metrics', port: 8081, targetPort: 'ops', protocol: 'TCP' }],
      });
    }
  });

  it('mounts the BMC CA ConfigMap as optional wherever it is mounted, so pods start without one', async () => {
    const mounts = (await kustomize(MANIFESTS)).flatMap((o) =>
      o.kind !== 'Deployment'
        ? []
        : ((
            o.spec as { template: { spec: { volumes?: { configMap?: { name: string } }[] } } }
          ).template.spec.volumes
            ?.map((v) => v.configMap)
            .filter((c) => c?.name === 'metal-maintenance-bmc-ca')
            .map((c) => ({ deployment: o.metadata.name, configMap: c })) ?? []),
    );
    expect(mounts.map((m) => m.deployment).sort()).toEqual([
      'metal-maintenance-boot-controller',
      'metal-maintenance-firmware-controller',
    ]);
    for (const m of mounts)
      expect(m).toEqual({
        deployment: m.deployment,
        configMap: { name: 'metal-maintenance-bmc-ca', optional: true },
      });
  });
});

describe('overlays', () => {
  it('namespace: moves every reference to the install namespace, usernames and DNS names included', async () => {
    const text = await ok(kubectlPath(), ['kustomize', join(MANIFESTS, 'overlays', 'namespace')]);
    expect(text).not.toContain('metal-maintenance-system');
    const objs = docs(text);
    const validating = objs.find((o) => o.kind === 'ValidatingWebhookConfiguration')!;
    const expressions = (validating.webhooks as { matchConditions?: { expression: string }[] }[])
      .flatMap((w) => w.matchConditions ?? [])
      .map((c) => c.expression)
      .join('\n');
    expect(expressions).toContain("'system:serviceaccount:metal-maintenance:maintenance-controller'");
    expect(expressions).toContain("'system:serviceaccount:metal-maintenance:approval-controller'");
    expect(validating.metadata.annotations?.['cert-manager.io/inject-ca-from']).toBe(
      'metal-maintenance/metal-maintenance-webhook',
    );
    const cert = objs.find((o) => o.kind === 'Certificate')!;
    expect((cert.spec as { dnsNames: string[] }).dnsNames[0]).toBe(
      'metal-maintenance-webhook.metal-maintenance.svc',
    );
    const policy = objs.find((o) => o.kind === 'ConfigMap')!;
    expect((policy.data as Record<string, string>)['policy.yaml']).toContain(
      'system:serviceaccount:metal-maintenance:approval-controller',
    );
  });

  it('next-to-metal-operator: ships only the CRDs of our groups, never metal-operator’s', async () => {
    const all = crdGroups(await kustomize(MANIFESTS));
    const beside = crdGroups(await kustomize(join(MANIFESTS, 'overlays', 'next-to-metal-operator')));
    expect(all).toContain('metal.ironcore.dev');
    expect(beside).not.toContain('metal.ironcore.dev');
    expect(beside.sort()).toEqual(all.filter((g) => g !== 'metal.ironcore.dev').sort());
  });
});

describe('the Helm chart', () => {
  it('passes helm lint --strict', async () => {
    const r = await tool(helmPath(), ['lint', '--strict', CHART]);
    expect({ code: r.code, out: r.stdout }).toEqual({
      code: 0,
      out: expect.stringContaining('0 chart(s) failed'),
    });
  });

  it('templates to the kustomize render: the same objects, only image and CRD keep policy added', async () => {
    const fromKustomize = (await kustomize(MANIFESTS)).filter((o) => o.kind !== 'Namespace');
    const fromHelm = await helmTemplate('--set', 'image.tag=v1');
    expect(fromHelm.map(key).sort()).toEqual(fromKustomize.map(key).sort());
    const byKey = new Map(fromHelm.map((o) => [key(o), o]));
    for (const want of fromKustomize) {
      const got = structuredClone(byKey.get(key(want))!);
      if (got.kind === 'CustomResourceDefinition') {
        expect(got.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
        delete got.metadata.annotations!['helm.sh/resource-policy'];
        if (Object.keys(got.metadata.annotations!).length === 0) delete got.metadata.annotations;
      }
      if (got.kind === 'Deployment') {
        const containers = (got.spec as { template: { spec: { containers: { image: string }[] } } }).template
          .spec.containers;
        for (const c of containers) {
          expect(c.image).toBe('metal-maintenance:v1');
          c.image = 'metal-maintenance';
        }
      }
      expect(got).toEqual(want);
    }
  });

  it('with crd.enable=false ships the CRDs the next-to-metal-operator overlay ships', async () => {
    const beside = crdGroups(await kustomize(join(MANIFESTS, 'overlays', 'next-to-metal-operator')));
    expect(crdGroups(await helmTemplate('--set', 'crd.enable=false')).sort()).toEqual(beside.sort());
  });

  it('installs into the release namespace', async () => {
    const text = await ok(helmPath(), ['template', 'mm', CHART, '--namespace', 'fleet-ops']);
    expect(text).not.toContain('metal-maintenance-system');
    expect(text).toContain('system:serviceaccount:fleet-ops:approval-controller');
  });
});

describe('the chart’s policy value', () => {
  const policyOf = (objs: Obj[]) =>
    objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name === POLICY_CONFIGMAP.name);
  const values = (policy: unknown) => {
    const dir = mkdtempSync(join(tmpdir(), 'chart-values-'));
    writeFileSync(join(dir, 'values.yaml'), stringify({ policy }));
    return join(dir, 'values.yaml');
  };

  it('becomes the policy ConfigMap’s document, read by the webhook’s parser as given', async () => {
    const policy = { grants: { ttl: '5m' }, legacyLabels: { mode: 'deny' } };
    const cm = policyOf(await helmTemplate('-f', values(policy)));
    const parsed = parsePolicyConfigMap(cm);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.policy.grants.ttl).toBe('5m');
    expect(parsed.policy.legacyLabels.mode).toBe('deny');
  });

  it('left empty, is the shipped default policy', async () => {
    const cm = policyOf(await helmTemplate()) as unknown as { data: Record<string, string> };
    const shipped = (await kustomize(MANIFESTS)).find(
      (o) => o.kind === 'ConfigMap' && o.metadata.name === POLICY_CONFIGMAP.name,
    ) as unknown as { data: Record<string, string> };
    expect(cm.data[POLICY_CONFIGMAP.key]).toBe(shipped.data[POLICY_CONFIGMAP.key]);
  });

  it.each([
    [{ grants: { ttl: 'forever' } }, "at '/policy/grants/ttl': 'forever' does not match pattern"],
    [{ grantz: { ttl: '1m' } }, "at '/policy': additional properties 'grantz' not allowed"],
    [{ legacyLabels: { mode: 'maybe' } }, "at '/policy/legacyLabels/mode'"],
    // A list replaces the default whole: its items must be complete.
    [{ windows: [{ name: 'w' }] }, "at '/policy/windows/0'"],
  ])('of the wrong shape fails helm template naming its path: %j', async (policy, message) => {
    const r = await tool(helmPath(), ['template', 'mm', CHART, '-f', values(policy)]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(message);
  });

  it('whose error needs code (minNotice past the deadline) renders, and the webhook’s parser refuses it', async () => {
    const policy = { classes: { Urgent: { deadline: '1h', minNotice: '2h' } } };
    const parsed = parsePolicyConfigMap(policyOf(await helmTemplate('-f', values(policy))));
    expect(parsed.ok).toBe(false);
    expect(JSON.stringify(parsed)).toContain('classes.Urgent.minNotice');
  });
});

/** PyYAML's reading of each file, as JSON (a value JSON cannot hold, such as a date, as its repr). */
async function pyyaml(files: string[]): Promise<unknown[][]> {
  const script =
    'import json, sys, yaml\n' +
    'json.dump([list(yaml.safe_load_all(open(f))) for f in sys.argv[1:]], sys.stdout, default=repr)\n';
  return JSON.parse(await ok(pythonPath(), ['-c', script, ...files])) as unknown[][];
}

const yamlFiles = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.yaml'))
    .map((e) => join(e.parentPath, e.name))
    .sort();

describe('YAML 1.1 readers', () => {
  it('read every manifest, the chart’s values and every render as YAML 1.2 readers do', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'metal-renders-'));
    const renders: [string, string][] = [
      ['kustomize', await ok(kubectlPath(), ['kustomize', MANIFESTS])],
      ['namespace', await ok(kubectlPath(), ['kustomize', join(MANIFESTS, 'overlays', 'namespace')])],
      [
        'next-to-metal-operator',
        await ok(kubectlPath(), ['kustomize', join(MANIFESTS, 'overlays', 'next-to-metal-operator')]),
      ],
      ['helm', await ok(helmPath(), ['template', 'mm', CHART, '--namespace', 'metal-maintenance-system'])],
    ];
    const files = [...yamlFiles(MANIFESTS), join(CHART, 'Chart.yaml'), join(CHART, 'values.yaml')];
    for (const [name, text] of renders) {
      const file = join(dir, `${name}.yaml`);
      writeFileSync(file, text);
      files.push(file);
    }
    const read11 = await pyyaml(files);
    files.forEach((file, i) => {
      const read12 = parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as unknown);
      expect({ file: relative(REPO_ROOT, file), docs: read11[i] }).toEqual({
        file: relative(REPO_ROOT, file),
        docs: read12,
      });
    });
    expect(files.length).toBeGreaterThan(40);
    rmSync(dir, { recursive: true, force: true });
  });
});
