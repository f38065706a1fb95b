// One definition per API kind. From it come the CRD (crd.ts), the TypeScript type (Static<>) and
// the runtime validator (validate.ts), so the three can never drift apart.
import { Type, type Static, type TObject, type TSchema, type TOptional } from '@sinclair/typebox';
import type { ObjectMeta } from './meta.js';
import { k8sOptions, type CelRule } from './types.js';
import { boundStrings } from './bounds.js';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  /** 0 is shown by default; higher only with `-o wide`. */
  priority?: number;
  format?: string;
}

export interface KindNames {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular?: string;
  shortNames?: string[];
  categories?: string[];
  scope: 'Namespaced' | 'Cluster';
}

export interface KindInput<Body extends Record<string, TSchema>> extends KindNames {
  description: string;
  /** Top-level fields besides apiVersion/kind/metadata: usually spec and status (wrap optional ones in Type.Optional). */
  body: Body;
  printerColumns?: PrinterColumn[];
  /** CEL rules on the whole object (x-kubernetes-validations at the root). */
  rules?: CelRule[];
  /** Whether the kind has a status subresource; every kind of ours does. */
  statusSubresource?: boolean;
}

const MetadataSchema = Type.Unsafe<ObjectMeta>({ type: 'object' });

type Envelope<Body extends Record<string, TSchema>> = {
  apiVersion: TOptional<ReturnType<typeof Type.String>>;
  kind: TOptional<ReturnType<typeof Type.String>>;
  metadata: typeof MetadataSchema;
} & Body;

export interface KindDefinition<
  Body extends Record<string, TSchema> = Record<string, TSchema>,
> extends KindNames {
  description: string;
  apiVersion: string;
  schema: TObject<Envelope<Body>>;
  printerColumns: PrinterColumn[];
  statusSubresource: boolean;
}

/** The object type a kind definition describes. */
export type ObjectOf<D> = D extends KindDefinition<infer B> ? Static<TObject<Envelope<B>>> : never;

export function defineKind<Body extends Record<string, TSchema>>(
  input: KindInput<Body>,
): KindDefinition<Body> {
  const body = input.body;
  for (const field of Object.values(body)) boundStrings(field);
  const schema = Type.Object(
    {
      apiVersion: Type.Optional(Type.String()),
      kind: Type.Optional(Type.String()),
      metadata: MetadataSchema,
      ...body,
    },
    { ...k8sOptions({ description: input.description, rules: input.rules }) },
  );
  const printerColumns = [
    ...(input.printerColumns ?? []),
    { name: 'Age', type: 'date' as const, jsonPath: '.metadata.creationTimestamp' },
  ];
  return {
    group: input.group,
    version: input.version,
    kind: input.kind,
    plural: input.plural,
    singular: input.singular ?? input.kind.toLowerCase(),
    shortNames: input.shortNames,
    categories: input.categories,
    scope: input.scope,
    description: input.description,
    apiVersion: `${input.group}/${input.version}`,
    schema,
    printerColumns,
    statusSubresource: input.statusSubresource ?? true,
  };
}
