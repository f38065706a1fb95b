// Field paths of a CRD's structural schema with the JSON type at each, and the comparison that says
// whether one schema keeps everything another declares (the API server prunes what a schema does not
// declare, so a missing path is data lost without an error, and another type is an object refused).
//
//   fieldTypes(schema) -> Map { '.spec.taints[].key' => 'string', '.metadata' => 'object', ... }
//   supersetGaps(upstream, ours) -> ['.spec.x: missing', '.status.y: integer in upstream, string in ours']
type Schema = Record<string, unknown>;

/** What a value at a path may be: a JSON type, `int-or-string`, or `any` (preserve-unknown, no type). */
export type FieldType = string;

function typeOf(node: Schema): FieldType {
  if (node['x-kubernetes-int-or-string'] === true) return 'int-or-string';
  if (typeof node.type === 'string') return node.type;
  return 'any';
}

/** Whether the schema keeps whatever it is given below this node (no pruning). */
function keepsUnknown(node: Schema): boolean {
  return node['x-kubernetes-preserve-unknown-fields'] === true;
}

/** Every path the schema declares, with its type. `[]` is a list item, `{}` a map value. */
export function fieldTypes(root: Schema): Map<string, FieldType> {
  const out = new Map<string, FieldType>();
  const walk = (node: Schema, path: string): void => {
    out.set(path, typeOf(node));
    for (const [name, child] of Object.entries((node.properties as Record<string, Schema>) ?? {}))
      walk(child, `${path}.${name}`);
    if (node.items && typeof node.items === 'object') walk(node.items as Schema, `${path}[]`);
    if (node.additionalProperties && typeof node.additionalProperties === 'object')
      walk(node.additionalProperties as Schema, `${path}{}`);
  };
  walk(root, '');
  return out;
}

/** Paths of `root` where unknown fields are kept (x-kubernetes-preserve-unknown-fields). */
function preservingPaths(root: Schema): string[] {
  const out: string[] = [];
  const walk = (node: Schema, path: string): void => {
    if (keepsUnknown(node)) out.push(path);
    for (const [name, child] of Object.entries((node.properties as Record<string, Schema>) ?? {}))
      walk(child, `${path}.${name}`);
    if (node.items && typeof node.items === 'object') walk(node.items as Schema, `${path}[]`);
    if (node.additionalProperties && typeof node.additionalProperties === 'object')
      walk(node.additionalProperties as Schema, `${path}{}`);
  };
  walk(root, '');
  return out;
}

/**
 * Why `ours` is not a superset of `upstream`: each upstream path ours lacks, and each path whose type
 * differs. A path below a node of ours that keeps unknown fields is kept, so it is not missing (its type
 * is then not checked by us). Empty when ours keeps and accepts everything upstream declares.
 */
export function supersetGaps(upstream: Schema, ours: Schema): string[] {
  const theirs = fieldTypes(upstream);
  const mine = fieldTypes(ours);
  const kept = preservingPaths(ours);
  const gaps: string[] = [];
  for (const [path, type] of theirs) {
    const have = mine.get(path);
    if (have === undefined) {
      if (!kept.some((p) => path.startsWith(`${p}.`) || path.startsWith(`${p}[`) || path.startsWith(`${p}{`)))
        gaps.push(`${path || '<root>'}: missing (upstream: ${type})`);
      continue;
    }
    if (have !== type && have !== 'any')
      gaps.push(`${path || '<root>'}: ${type} in upstream, ${have} in ours`);
  }
  return gaps;
}
