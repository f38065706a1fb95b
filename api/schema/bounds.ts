// Every string field of every kind has a maxLength. Without one, a megabyte value reaches etcd and the
// user meets etcd's raw gRPC size error instead of ours naming the field. A field that sets no bound
// of its own gets one here, by what it holds: an object name 253 (a DNS subdomain), a namespace 63 (a
// DNS label), anything else DEFAULT_STRING_MAX. Applied once, in defineKind, so the CRD and our
// validator see the same bound; bounds.test.ts walks every CRD and fails on an unbounded string.
import type { TSchema } from '@sinclair/typebox';

export const DEFAULT_STRING_MAX = 4096;
export const NAME_MAX = 253;
export const NAMESPACE_MAX = 63;

const BY_KEY: Record<string, number> = { name: NAME_MAX, namespace: NAMESPACE_MAX };

type Node = TSchema & {
  type?: unknown;
  maxLength?: number;
  properties?: Record<string, Node>;
  items?: Node | Node[];
  additionalProperties?: unknown;
  anyOf?: Node[];
  oneOf?: Node[];
  allOf?: Node[];
};

/** The schemas directly under `schema`, each with the property name it sits under ('' for none). */
function children(schema: Node): [Node, string][] {
  const items = schema.items;
  const extra = schema.additionalProperties;
  return [
    ...Object.entries(schema.properties ?? {}).map(([k, v]) => [v, k] as [Node, string]),
    ...(Array.isArray(items) ? items : items ? [items] : []).map((s) => [s, ''] as [Node, string]),
    ...(extra && typeof extra === 'object' ? [[extra as Node, ''] as [Node, string]] : []),
    ...[...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])].map(
      (s) => [s, ''] as [Node, string],
    ),
  ];
}

/** Sets maxLength on every string schema under `schema` that has none (in place; idempotent). */
export function boundStrings(schema: Node, key = ''): void {
  if (schema.type === 'string' && schema.maxLength === undefined)
    schema.maxLength = BY_KEY[key] ?? DEFAULT_STRING_MAX;
  for (const [child, k] of children(schema)) boundStrings(child, k);
}
