// Checks that a CRD schema stays inside the structural subset Kubernetes accepts, before an API
// server has to tell us: no const/$ref (TypeBox literals and references), no types inside
// junctions (but for int-or-string), every object with properties typed as an object.
type Schema = Record<string, unknown>;

/**
 * x-kubernetes-int-or-string, untyped, either alone or with the one `anyOf` with types Kubernetes
 * allows.
 */
function isIntOrString(node: Schema): boolean {
  const anyOf = node.anyOf as Schema[] | undefined;
  if (node['x-kubernetes-int-or-string'] !== true || 'type' in node) return false;
  if (anyOf === undefined) return true;
  return (
    anyOf.length === 2 &&
    anyOf[0]?.type === 'integer' &&
    anyOf[1]?.type === 'string' &&
    anyOf.every((b) => Object.keys(b).length === 1)
  );
}

const FORBIDDEN = ['const', '$ref', '$id', '$schema', 'patternProperties', 'definitions', '$defs'];

/** Junctions may only constrain values; types inside them are not structural. */
function junctionProblems(s: Schema, path: string): string[] {
  return ['anyOf', 'oneOf', 'allOf'].flatMap((junction) => {
    const branches = (s[junction] as Schema[] | undefined) ?? [];
    if (junction === 'anyOf' && isIntOrString(s)) return [];
    return branches.flatMap((b, i) =>
      'type' in b ? [`${path}.${junction}[${i}]: type inside ${junction}`] : [],
    );
  });
}

/** Problems of one schema node, not looking into its children. */
function nodeProblems(s: Schema, path: string): string[] {
  const problems = FORBIDDEN.filter((k) => k in s).map((k) => `${path}: has ${k}`);
  problems.push(...junctionProblems(s, path));
  if ('properties' in s && s.type !== 'object') problems.push(`${path}: properties without type: object`);
  if ('properties' in s && 'additionalProperties' in s)
    problems.push(`${path}: both properties and additionalProperties`);
  if (s.additionalProperties === false) problems.push(`${path}: additionalProperties: false`);
  if ('items' in s && s.type !== 'array') problems.push(`${path}: items without type: array`);
  // A node that describes a value needs a type (junction branches and CEL-only nodes don't).
  const typed = 'type' in s || isIntOrString(s) || s['x-kubernetes-preserve-unknown-fields'] === true;
  if (!typed && ['properties', 'items', 'enum', 'format'].some((k) => k in s))
    problems.push(`${path}: no type`);
  return problems;
}

/** Keys whose values are data, not schemas. */
const NOT_SCHEMA = new Set([
  'enum',
  'default',
  'x-kubernetes-validations',
  'x-kubernetes-list-map-keys',
  'required',
]);

/** Problems that make a schema non-structural (or that TypeBox could leak into one), recursively. */
export function structuralProblems(node: unknown, path: string): string[] {
  if (node === null || typeof node !== 'object') return [];
  if (Array.isArray(node)) return node.flatMap((n, i) => structuralProblems(n, `${path}[${i}]`));
  const s = node as Schema;
  const problems = nodeProblems(s, path);
  for (const [key, value] of Object.entries(s)) {
    if (NOT_SCHEMA.has(key)) continue;
    if (key === 'properties') {
      for (const [name, child] of Object.entries(value as Schema))
        problems.push(...structuralProblems(child, `${path}.${name}`));
    } else {
      problems.push(...structuralProblems(value, `${path}.${key}`));
    }
  }
  return problems;
}
