// Schema building blocks that stay inside the Kubernetes structural-schema subset.
//
// TypeBox is the single source: each helper returns a TypeBox schema whose JSON form is a valid
// CRD openAPIV3Schema fragment, whose Static<> type is what our code reads and writes, and which
// ajv compiles into the runtime validator. Kubernetes forbids `const`, `$ref`, `patternProperties`
// and `type` inside `anyOf`, so unions and maps are expressed with Type.Unsafe.
import { Type, type SchemaOptions, type TSchema, type TUnsafe } from '@sinclair/typebox';

/** A CEL rule evaluated by the API server (`x-kubernetes-validations`). */
export interface CelRule {
  rule: string;
  message: string;
  messageExpression?: string;
  fieldPath?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  optionalOldSelf?: boolean;
}

/** Options every helper accepts: a description plus optional CEL rules. */
export interface FieldOptions extends SchemaOptions {
  description?: string;
  rules?: CelRule[];
}

/** Moves `rules` into the `x-kubernetes-validations` keyword. */
export function k8sOptions(options: FieldOptions = {}): SchemaOptions {
  const { rules, ...rest } = options;
  return rules && rules.length > 0 ? { ...rest, 'x-kubernetes-validations': rules } : rest;
}

/** A closed set of strings, typed as the union of its members. */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: FieldOptions = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...k8sOptions(options), type: 'string', enum: [...values] });
}

/**
 * Kubernetes IntOrString (e.g. maxUnavailable: 3 or "10%"). The CRD carries only the
 * x-kubernetes-int-or-string marker (crd.ts drops the `type` our validator reads): the API server
 * then checks the type itself, in one line, where `anyOf: [integer, string]` gave four.
 */
export function IntOrString(options: FieldOptions = {}): TUnsafe<number | string> {
  return Type.Unsafe<number | string>({
    ...k8sOptions(options),
    'x-kubernetes-int-or-string': true,
    type: ['integer', 'string'],
  });
}

/** A resource.Quantity ("64Gi", 1000). */
export function Quantity(options: FieldOptions = {}): TUnsafe<number | string> {
  return IntOrString({ pattern: QUANTITY_PATTERN, ...options });
}
const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

/** An RFC 3339 timestamp as the API server serialises metav1.Time. */
export function Time(options: FieldOptions = {}) {
  return Type.String({ ...k8sOptions(options), format: 'date-time' });
}

/** A Go-style duration ("90s", "10m", "1h30m"). */
export function Duration(options: FieldOptions = {}) {
  return Type.String({ pattern: '^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$', ...k8sOptions(options) });
}

/** map[string]string; `valueMaxLength` bounds each value. */
export function StringMap(
  options: FieldOptions & { valueMaxLength?: number } = {},
): TUnsafe<Record<string, string>> {
  const { valueMaxLength, ...rest } = options;
  return Type.Unsafe<Record<string, string>>({
    ...k8sOptions(rest),
    type: 'object',
    additionalProperties: {
      type: 'string',
      ...(valueMaxLength !== undefined ? { maxLength: valueMaxLength } : {}),
    },
  });
}

/** A free-form object the API server keeps as is. */
export function Opaque<T = Record<string, unknown>>(options: FieldOptions = {}): TUnsafe<T> {
  return Type.Unsafe<T>({
    ...k8sOptions(options),
    type: 'object',
    'x-kubernetes-preserve-unknown-fields': true,
  });
}

export function Int32(options: FieldOptions = {}) {
  return Type.Integer({ ...k8sOptions(options), format: 'int32' });
}

export function Int64(options: FieldOptions = {}) {
  return Type.Integer({ ...k8sOptions(options), format: 'int64' });
}

/** A list whose items are merged by key under server-side apply (`+listType=map`). */
export function MapList<T extends TSchema>(item: T, keys: string[], options: FieldOptions = {}) {
  return Type.Array(item, {
    ...k8sOptions(options),
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': keys,
  });
}

/** A list of unique scalars (`+listType=set`). */
export function SetList<T extends TSchema>(item: T, options: FieldOptions = {}) {
  return Type.Array(item, { ...k8sOptions(options), 'x-kubernetes-list-type': 'set' });
}

/** CEL: once set, the field keeps its value (it may not be re-pointed). */
export const immutable = (message = 'field is immutable'): CelRule => ({ rule: 'self == oldSelf', message });

/**
 * A string with documented values that we do not enforce, because another controller
 * (metal-operator) writes it and may add values; typed as the known values or any string.
 */
export function KnownString<const T extends readonly string[]>(
  values: T,
  options: FieldOptions = {},
): TUnsafe<T[number] | (string & {})> {
  const known = `Known values: ${values.join(', ')}.`;
  const description = options.description ? `${options.description} ${known}` : known;
  return Type.Unsafe<T[number] | (string & {})>({
    ...k8sOptions({ ...options, description }),
    type: 'string',
  });
}
