// manifests/crds/ is generated from api/; this fails when someone changes a schema and forgets
// `npm run gen:crds`, and when a schema leaves the structural subset the API server accepts.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { portableYAML, renderCRDs } from './render.js';
import { ALL_KINDS } from './registry.js';
import { toCRD } from './schema/crd.js';
import { structuralProblems } from './testdata/structural.js';

const dir = join(import.meta.dirname, '..', 'manifests', 'crds');

type Schema = Record<string, unknown>;

describe('manifests/crds', () => {
  const wanted = renderCRDs();

  it('matches the schema source (run `npm run gen:crds` if this fails)', () => {
    const onDisk = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
    expect(onDisk.sort()).toEqual([...wanted.keys()].sort());
    for (const [file, text] of wanted) {
      expect({ file, text: readFileSync(join(dir, file), 'utf8') }).toEqual({ file, text });
    }
  });

  // kubectl apply -f, PyYAML and Helm read YAML 1.1, where a plain On/Off/yes/y is a boolean:
  // an unquoted `enum: [On, Off]` became `enum: [true, false]` in the API server and refused every
  // `power: On`. Every generated file must mean the same to a 1.1 reader as to a 1.2 reader.
  it.each([...wanted.keys()])('%s reads the same under YAML 1.1 and 1.2', (file) => {
    const text = wanted.get(file)!;
    expect(parse(text, { version: '1.1' })).toEqual(parse(text, { version: '1.2' }));
  });

  it('quotes every string a YAML 1.1 reader would retype', () => {
    const retyped = ['On', 'Off', 'yes', 'No', 'y', 'N', '0777', '1:20', '1_000', '~', 'null', '.inf'];
    const text = portableYAML({ enum: retyped });
    expect(parse(text, { version: '1.1' })).toEqual({ enum: retyped });
    for (const s of retyped) expect(text).toContain(`"${s}"`);
  });

  it('has one CRD per registered kind, with unique names and short names', () => {
    const names = ALL_KINDS.map((k) => `${k.plural}.${k.group}`);
    expect(new Set(names).size).toBe(ALL_KINDS.length);
    const shortNames = ALL_KINDS.flatMap((k) => k.shortNames ?? []);
    expect(new Set(shortNames).size).toBe(shortNames.length);
    expect(wanted.size).toBe(ALL_KINDS.length + 1); // + kustomization.yaml
  });

  describe.each(ALL_KINDS.map((k) => [k.kind, k] as const))('%s', (_name, def) => {
    const crd = toCRD(def);
    const version = (crd.spec.versions as Schema[])[0]!;
    const schema = (version.schema as Schema).openAPIV3Schema as Schema;

    it('is a structural schema', () => {
      expect(structuralProblems(schema, '')).toEqual([]);
    });

    it('has a status subresource', () => {
      expect(version.subresources).toEqual({ status: {} });
    });

    it('round-trips through YAML unchanged', () => {
      const file = `${def.group}_${def.plural}.yaml`;
      expect(parse(wanted.get(file)!)).toEqual(JSON.parse(JSON.stringify(crd)));
    });

    it('has printer columns that point into the object', () => {
      const columns = version.additionalPrinterColumns as { name: string; jsonPath: string }[];
      expect(new Set(columns.map((c) => c.name)).size).toBe(columns.length);
      for (const c of columns)
        expect(c.jsonPath).toMatch(/^\.(metadata|spec|status|data|stringData|immutable|type)\b/);
    });

    it('describes itself', () => {
      expect(typeof schema.description).toBe('string');
      expect(schema.type).toBe('object');
    });
  });
});
