// Renders every kind's CRD to YAML text, keyed by file name, plus a kustomization listing them.
import { stringify } from 'yaml';
import { ALL_KINDS } from './registry.js';
import { toCRD } from './schema/crd.js';

const HEADER = '# Generated from api/ by `npm run gen:crds`. Do not edit.\n';

export function renderCRDs(): Map<string, string> {
  const files = new Map<string, string>();
  const names: string[] = [];
  for (const def of ALL_KINDS) {
    const file = `${def.group}_${def.plural}.yaml`;
    names.push(file);
    files.set(file, HEADER + stringify(toCRD(def), { lineWidth: 0, sortMapEntries: false }));
  }
  files.set(
    'kustomization.yaml',
    HEADER +
      stringify({
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        resources: names.sort(),
      }),
  );
  return files;
}
