// The Helm chart charts/metal-maintenance, rendered from `kubectl kustomize manifests` (the one
// source of the install): each object is written back as YAML a 1.1 reader takes the same way
// (api/render.ts portableYAML; Helm reads templates with go-yaml), then templated as text in three
// places only, so `helm template --namespace metal-maintenance-system` gives the kustomize render back:
//   - the install namespace, wherever it appears (metadata, ServiceAccount usernames in CEL and in
//     the policy, DNS names, inject-ca-from): {{ .Release.Namespace }}
//   - the image: {{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
//   - the CRDs of metal-operator's kinds (metal.ironcore.dev): only with .Values.crd.enable, false
//     when metal-operator is installed and owns them (manifests/overlays/next-to-metal-operator).
// The Namespace object is left out: `helm install --namespace X --create-namespace` makes it.
import { portableYAML } from '../../api/render.js';

export const CHART_NAME = 'metal-maintenance';
/** The namespace manifests/ installs into; the chart puts the release's in its place. */
export const MANIFEST_NAMESPACE = 'metal-maintenance-system';
/** The image name the Deployments in manifests/ run (skaffold and kustomize `images:` replace it). */
export const MANIFEST_IMAGE = 'metal-maintenance';
/** metal-operator's API group: its CRDs are ours to ship only when metal-operator is not installed. */
export const METAL_OPERATOR_GROUP = 'metal.ironcore.dev';

const GENERATED = '# Generated from manifests/ by `npm run gen:chart`. Do not edit.\n';
const IMAGE_PLACEHOLDER = 'chart-image-placeholder';
const IMAGE_TEMPLATE = '"{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"';

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: Record<string, unknown>;
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

/** One object as chart template text. */
function template(o: Obj): string {
  const copy = structuredClone(o);
  setImages(copy);
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
`;

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
  ]);
  for (const [file, texts] of [...parts].sort(([a], [b]) => a.localeCompare(b)))
    files.set(file, GENERATED + texts.join('---\n'));
  return files;
}
