// Every string field of every CRD we ship is bounded (api/schema/bounds.ts), so an oversized value is
// refused by the API server naming the field, never by etcd's raw size error. Walks the generated
// manifests/crds, the schemas the API server enforces, not our model of them.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { boundStrings, DEFAULT_STRING_MAX } from './schema/bounds.js';

const CRDS = join(import.meta.dirname, '..', 'manifests', 'crds');

interface Schema {
  type?: string;
  maxLength?: number;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  anyOf?: Schema[];
}

/** Paths of string schemas without a maxLength (an enum bounds a string too). */
function unbounded(s: Schema, path: string): string[] {
  const here = s.type === 'string' && s.maxLength === undefined && s.enum === undefined ? [path] : [];
  return [
    ...here,
    ...Object.entries(s.properties ?? {}).flatMap(([k, v]) => unbounded(v, `${path}.${k}`)),
    ...(s.items ? unbounded(s.items, `${path}[]`) : []),
    ...(typeof s.additionalProperties === 'object' ? unbounded(s.additionalProperties, `${path}{}`) : []),
    ...(s.anyOf ?? []).flatMap((v) => unbounded(v, path)),
  ];
}

const files = readdirSync(CRDS).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');

describe('string bounds', () => {
  it('finds the CRDs', () => expect(files.length).toBeGreaterThan(10));

  it.each(files)('%s has no unbounded string field', (file) => {
    const crd = parse(readFileSync(join(CRDS, file), 'utf8')) as {
      spec: { versions: { name: string; schema: { openAPIV3Schema: Schema } }[] };
    };
    const found = crd.spec.versions.flatMap((v) => {
      // apiVersion and kind are the API server's own to check.
      const { apiVersion: _a, kind: _k, ...rest } = v.schema.openAPIV3Schema.properties ?? {};
      return unbounded({ properties: rest }, v.name);
    });
    expect(found).toEqual([]);
  });

  it('the walker fails on an unbounded string, and boundStrings gives names, namespaces and the rest their bound', () => {
    const s: Schema = {
      properties: {
        name: { type: 'string' },
        namespace: { type: 'string' },
        list: { items: { type: 'string' } },
        map: { additionalProperties: { type: 'string' } },
        mode: { type: 'string', enum: ['a'] },
      },
    };
    expect(unbounded(s, '')).toEqual(['.name', '.namespace', '.list[]', '.map{}']);
    boundStrings(s as never);
    expect(unbounded(s, '')).toEqual([]);
    expect([s.properties!.name!.maxLength, s.properties!.namespace!.maxLength]).toEqual([253, 63]);
    expect(s.properties!.list!.items!.maxLength).toBe(DEFAULT_STRING_MAX);
  });
});
