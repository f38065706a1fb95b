// Renders a kind definition as an apiextensions.k8s.io/v1 CustomResourceDefinition.
import type { KindDefinition } from './kind.js';

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec: Record<string, unknown>;
}

/** Keywords TypeBox adds for its own bookkeeping, or that Kubernetes forbids in a CRD. */
const DROP = new Set(['$id', '$schema', 'additionalItems']);

/** Strips TypeBox's symbols and anything a structural schema may not carry. */
export function toOpenAPISchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toOpenAPISchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  const intOrString = (schema as Record<string, unknown>)['x-kubernetes-int-or-string'] === true;
  for (const [key, value] of Object.entries(schema)) {
    if (DROP.has(key)) continue;
    // The marker alone makes the API server accept an integer or a string (see IntOrString).
    if (intOrString && key === 'type') continue;
    // TypeBox closes objects only when asked; Kubernetes prunes unknown fields by default,
    // so `additionalProperties: false` would only make old clients fail. Drop it.
    if (key === 'additionalProperties' && value === false) continue;
    out[key] = toOpenAPISchema(value);
  }
  return out;
}

export function crdName(def: KindDefinition): string {
  return `${def.plural}.${def.group}`;
}

export function toCRD(def: KindDefinition): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: crdName(def),
      labels: { 'app.kubernetes.io/part-of': 'metal-maintenance' },
    },
    spec: {
      group: def.group,
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular: def.singular,
        ...(def.shortNames ? { shortNames: def.shortNames } : {}),
        ...(def.categories ? { categories: def.categories } : {}),
      },
      scope: def.scope,
      versions: [
        {
          name: def.version,
          served: true,
          storage: true,
          additionalPrinterColumns: def.printerColumns,
          schema: { openAPIV3Schema: toOpenAPISchema(def.schema) },
          ...(def.statusSubresource ? { subresources: { status: {} } } : {}),
        },
      ],
    },
  };
}
