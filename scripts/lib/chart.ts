// The Helm chart charts/metal-maintenance, rendered from `kubectl kustomize manifests` (the one
// source of the install): each object is written back as YAML a 1.1 reader takes the same way
// (api/render.ts portableYAML; Helm reads templates with go-yaml), then templated as text in three
// places only, so `helm template --namespace metal-maintenance-system` gives the kustomize render back:
//   - the install namespace, wherever it appears (metadata, ServiceAccount usernames in CEL and in
//     the policy, DNS names, inject-ca-from): {{ .Release.Namespace }}
//   - the image: {{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
//   - the CRDs of metal-operator's kinds (metal.ironcore.dev): only with .Values.crd.enable, false
//     when metal-operator is installed and owns them (manifests/overlays/next-to-metal-operator).
//   - the policy document in the policy ConfigMap: .Values.policy when set, else the shipped default.
//     values.schema.json holds the policy's own JSON Schema (policies/schema.ts, the one the webhook
//     validates with), partial as a ConfigMap may be, so `helm template`/`install` refuses a value
//     of the wrong shape naming its path; the checks that need code (time zones, unique names,
//     minNotice <= deadline) are the webhook's, when the ConfigMap is written.
// The Namespace object is left out: `helm install --namespace X --create-namespace` makes it.
import { portableYAML } from '../../api/render.js';
import { POLICY_CONFIGMAP, PolicySchema } from '../../policies/schema.js';

export const CHART_NAME = 'metal-maintenance';
/** The namespace manifests/ installs into; the chart puts the release's in its place. */
export const MANIFEST_NAMESPACE = 'metal-maintenance-system';
/** The image name the Deployments in manifests/ run (skaffold and kustomize `images:` replace it). */
export const MANIFEST_IMAGE = 'metal-maintenance';
/** metal-operator's API group: its CRDs are ours to ship only when metal-operator is not installed. */
export const METAL_OPERATOR_GROUP = 'metal.ironcore.dev';

const GENERATED = '# Generated from manifests/ by `npm run gen:chart`. Do not edit.\n';
const IMAGE_PLACEHOLDER = 'chart-image-placeholder';
const POLICY_PLACEHOLDER = 'chart-policy-placeholder';
const IMAGE_TEMPLATE = '"{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"';

/** A Kubernetes object as the renders hold it. */
export interface Obj {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: Record<string, unknown>;
  [field: string]: unknown;
}

interface PodSpecHolder {
  spec: { template: { spec: { containers: { image?: string }[]; initContainers?: { image?: string }[] } } };
}

/** The template file an object goes to: CRDs one per file, the rest by binary, component or kind. */
function templateFile(o: Obj): string {
  if (o.kind === 'CustomResourceDefinition') {
    const spec = o.spec as { group: string; names: { plural: string } };
    return `templates/crds/${spec.group}_${spec.names.plural}.yaml`;
  }
  const name = o.metadata.labels?.['app.kubernetes.io/name'];
  if (name?.startsWith(`${CHART_NAME}-`)) return `templates/${name.slice(CHART_NAME.length + 1)}.yaml`;
  const component = o.metadata.labels?.['app.kubernetes.io/component'];
  if (component) return `templates/${component}.yaml`;
  return `templates/${o.kind.toLowerCase()}.yaml`;
}

function setImages(o: Obj): void {
  if (o.kind !== 'Deployment') return;
  const pod = (o as unknown as PodSpecHolder).spec.template.spec;
  for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
    if (c.image !== MANIFEST_IMAGE)
      throw new Error(`Deployment/${o.metadata.name}: image ${c.image} is not ${MANIFEST_IMAGE}`);
    c.image = IMAGE_PLACEHOLDER;
  }
}

const isPolicyConfigMap = (o: Obj) => o.kind === 'ConfigMap' && o.metadata.name === POLICY_CONFIGMAP.name;

/** The policy document: the release's .Values.policy when set, else the shipped one (`shipped`). */
function policyData(shipped: string): string {
  const indented = shipped
    .trimEnd()
    .split('\n')
    .map((l) => (l ? `    ${l}` : ''))
    .join('\n');
  return [
    `  ${POLICY_CONFIGMAP.key}: |`,
    '{{- if .Values.policy }}',
    '{{ toYaml .Values.policy | indent 4 }}',
    '{{- else }}',
    indented,
    '{{- end }}',
  ].join('\n');
}

/** One object as chart template text. */
function template(o: Obj): string {
  const copy = structuredClone(o);
  setImages(copy);
  const data = copy.data as Record<string, string> | undefined;
  const shippedPolicy = isPolicyConfigMap(copy) ? data?.[POLICY_CONFIGMAP.key] : undefined;
  if (shippedPolicy !== undefined) data![POLICY_CONFIGMAP.key] = POLICY_PLACEHOLDER;
  if (copy.kind === 'CustomResourceDefinition') {
    // Uninstalling the release must not delete the CRDs, and with them every maintenance and budget.
    copy.metadata.annotations = { ...copy.metadata.annotations, 'helm.sh/resource-policy': 'keep' };
  }
  let text = portableYAML(copy);
  if (text.includes('{{'))
    throw new Error(`${o.kind}/${o.metadata.name}: contains "{{", which Helm would read`);
  text = text.replaceAll(MANIFEST_NAMESPACE, '{{ .Release.Namespace }}');
  text = text.replaceAll(`image: ${IMAGE_PLACEHOLDER}`, `image: ${IMAGE_TEMPLATE}`);
  if (text.includes(IMAGE_PLACEHOLDER))
    throw new Error(`${o.kind}/${o.metadata.name}: image in an unexpected place`);
  if (shippedPolicy !== undefined) {
    const line = `  ${POLICY_CONFIGMAP.key}: ${POLICY_PLACEHOLDER}`;
    if (!text.includes(line)) throw new Error(`${o.kind}/${o.metadata.name}: policy in an unexpected place`);
    // After the namespace replacement above, so the default's ServiceAccount names follow the release.
    text = text.replace(
      line,
      policyData(shippedPolicy.replaceAll(MANIFEST_NAMESPACE, '{{ .Release.Namespace }}')),
    );
  }
  const group = (copy.spec as { group?: string } | undefined)?.group;
  if (copy.kind === 'CustomResourceDefinition' && group === METAL_OPERATOR_GROUP)
    return `{{- if .Values.crd.enable }}\n${text}{{- end }}\n`;
  return text;
}

function chartYaml(version: string): string {
  return (
    GENERATED +
    portableYAML({
      apiVersion: 'v2',
      name: CHART_NAME,
      description:
        'Typed maintenance contract for IronCore bare-metal fleets: admission webhook and controllers',
      type: 'application',
      version,
      appVersion: version,
      // matchConditions on webhooks are GA from 1.30.
      kubeVersion: '>= 1.30.0-0',
    })
  );
}

const VALUES = `${GENERATED}# The one image every binary runs (the Dockerfile); the tag defaults to the chart's appVersion.
image:
  repository: ${MANIFEST_IMAGE}
  tag: ""
crd:
  # Install the CRDs of metal-operator's kinds (${METAL_OPERATOR_GROUP}: Server, ServerClaim, BMC, ...).
  # false next to metal-operator, which owns them; the CRDs of our own groups are always installed.
  enable: true
# The maintenance policy (docs/policy.md), as YAML under this key; empty: the shipped default
# (policies/default-policy.yaml). A partial document is fine: missing fields take the defaults.
# values.schema.json checks its shape at \`helm template\`/\`install\`; the webhook checks the rest
# (time zones, unique names, minNotice <= deadline) when the ConfigMap is written.
policy: {}
`;

/**
 * The policy's JSON Schema with every object's required fields dropped, except inside list items:
 * a ConfigMap's document is merged onto the defaults (objects merge, lists replace), so any object
 * may be partial but a list item is taken whole.
 */
function partialSchema(schema: unknown, inList = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => partialSchema(s, inList));
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'required' && !inList) continue;
    if (k === 'items') out[k] = partialSchema(v, true);
    else if (k === 'properties')
      out[k] = Object.fromEntries(
        Object.entries(v as Record<string, unknown>).map(([name, p]) => [name, partialSchema(p, inList)]),
      );
    else out[k] = k === 'examples' || k === 'description' ? v : partialSchema(v, inList);
  }
  return out;
}

function valuesSchema(): string {
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: {
      image: {
        type: 'object',
        properties: { repository: { type: 'string', minLength: 1 }, tag: { type: 'string' } },
      },
      crd: { type: 'object', properties: { enable: { type: 'boolean' } } },
      policy: partialSchema(JSON.parse(JSON.stringify(PolicySchema))),
    },
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}

/** Every file of the chart, keyed by its path inside charts/metal-maintenance. */
export function chartFiles(rendered: readonly unknown[], version: string): Map<string, string> {
  const parts = new Map<string, string[]>();
  for (const doc of rendered) {
    const o = doc as Obj;
    if (o.kind === 'Namespace') continue;
    const file = templateFile(o);
    parts.set(file, [...(parts.get(file) ?? []), template(o)]);
  }
  const files = new Map<string, string>([
    ['Chart.yaml', chartYaml(version)],
    ['values.yaml', VALUES],
    ['values.schema.json', valuesSchema()],
  ]);
  for (const [file, texts] of [...parts].sort(([a], [b]) => a.localeCompare(b)))
    files.set(file, GENERATED + texts.join('---\n'));
  return files;
}
