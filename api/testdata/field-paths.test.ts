// The superset comparison finds what it must: missing paths (in properties, list items and map
// values), other types, and nothing below a node that keeps unknown fields.
import { fieldTypes, supersetGaps } from './field-paths.js';

type Node = { type?: string; properties?: Record<string, Node>; [k: string]: unknown };
const obj = (properties: Record<string, Node>, extra: Record<string, unknown> = {}): Node => ({
  type: 'object',
  properties,
  ...extra,
});
/** The `spec` properties of a copy of the upstream schema, to change. */
const specOf = (root: Node) => root.properties!.spec!.properties!;

const upstream = obj({
  spec: obj({
    name: { type: 'string' },
    port: { type: 'integer' },
    taints: { type: 'array', items: obj({ key: { type: 'string' }, effect: { type: 'string' } }) },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    size: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
    raw: obj({ deep: { type: 'string' } }),
  }),
});

describe('fieldTypes', () => {
  it('lists every path with its type, list items as [] and map values as {}', () => {
    expect(Object.fromEntries(fieldTypes(upstream))).toEqual({
      '': 'object',
      '.spec': 'object',
      '.spec.name': 'string',
      '.spec.port': 'integer',
      '.spec.taints': 'array',
      '.spec.taints[]': 'object',
      '.spec.taints[].key': 'string',
      '.spec.taints[].effect': 'string',
      '.spec.labels': 'object',
      '.spec.labels{}': 'string',
      '.spec.size': 'int-or-string',
      '.spec.raw': 'object',
      '.spec.raw.deep': 'string',
    });
  });
});

describe('supersetGaps', () => {
  it('is empty for the same schema and for a schema with more fields', () => {
    expect(supersetGaps(upstream, upstream)).toEqual([]);
    const more = structuredClone(upstream);
    specOf(more).maintenance = obj({ state: { type: 'string' } });
    expect(supersetGaps(upstream, more)).toEqual([]);
  });

  it('names each missing path and each other type', () => {
    const less = structuredClone(upstream);
    const spec = specOf(less);
    delete (spec.taints!.items as Node).properties!.effect;
    delete spec.labels!.additionalProperties;
    spec.port = { type: 'string' };
    spec.size = { type: 'integer' };
    expect(supersetGaps(upstream, less)).toEqual([
      '.spec.port: integer in upstream, string in ours',
      '.spec.taints[].effect: missing (upstream: string)',
      '.spec.labels{}: missing (upstream: string)',
      '.spec.size: int-or-string in upstream, integer in ours',
    ]);
  });

  it('counts paths below a node that keeps unknown fields as kept', () => {
    const keeping = structuredClone(upstream);
    const spec = specOf(keeping);
    spec.raw = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    expect(supersetGaps(upstream, keeping)).toEqual([]);
  });
});
