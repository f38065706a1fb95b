// Renders every kind's CRD to YAML text, keyed by file name, plus a kustomization listing them.
import { stringify } from 'yaml';
import { ALL_KINDS } from './registry.js';
import { toCRD } from './schema/crd.js';

const HEADER = '# Generated from api/ by `npm run gen:crds`. Do not edit.\n';

/**
 * YAML that every reader takes the same way. `kubectl apply -f`, PyYAML and Helm read YAML 1.1,
 * where a plain `On`, `Off`, `yes` or `y` is a boolean and `0777` an octal number; YAML 1.2
 * readers (`kubectl apply -k`, the `yaml` package) take them as strings. Stringifying with the 1.1
 * schema quotes every string a 1.1 reader would retype, and a quoted string is a string to both.
 */
export const portableYAML = (value: unknown): string =>
  stringify(value, { version: '1.1', lineWidth: 0, sortMapEntries: false });

export function renderCRDs(): Map<string, string> {
  const files = new Map<string, string>();
  const names: string[] = [];
  for (const def of ALL_KINDS) {
    const file = `${def.group}_${def.plural}.yaml`;
    names.push(file);
    files.set(file, HEADER + portableYAML(toCRD(def)));
  }
  files.set(
    'kustomization.yaml',
    HEADER +
      portableYAML({
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        resources: names.sort(),
      }),
  );
  return files;
}
