// Runtime validation from the same TypeBox schema that yields the CRD. The API server also
// evaluates the CEL rules; here we check structure so the webhook and controllers can reject
// malformed input with the exact field path before doing any work.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { KindDefinition, ObjectOf } from './kind.js';
import { SHOWN_MAX, twinOf } from './checks.js';

// ajv-formats is CommonJS with a default export; under NodeNext it arrives as a namespace.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/**
 * One Ajv per mode: values (formats date-time, byte, uri, int32 and int64 checked too) or shape (whose
 * schemas have no value keywords left).
 */
function makeAjv(validateFormats: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: true,
    strictTypes: false,
    allowUnionTypes: true,
    validateFormats,
    // Errors carry the value, so messages can name it.
    verbose: true,
  });
  addFormats(ajv, ['date-time', 'byte', 'uri']);
  ajv.addFormat('int32', {
    type: 'number',
    validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
  });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
  // CEL rules with a JavaScript twin (checks.ts) are judged here too; the others only by the API server.
  ajv.addKeyword({
    keyword: 'x-kubernetes-validations',
    schemaType: 'array',
    errors: true,
    validate: function celTwins(rules: unknown[], data: unknown): boolean {
      const errors: Partial<ErrorObject>[] = [];
      for (const rule of rules) {
        const twin = twinOf(rule);
        if (!twin || twin.holds(data)) continue;
        const fieldPath = (rule as { fieldPath?: string }).fieldPath;
        errors.push({
          keyword: 'x-kubernetes-validations',
          message: twin.message(data),
          params: { fieldPath },
        });
      }
      (celTwins as { errors?: Partial<ErrorObject>[] }).errors = errors;
      return errors.length === 0;
    },
  });
  for (const keyword of [
    'x-kubernetes-int-or-string',
    'x-kubernetes-list-type',
    'x-kubernetes-list-map-keys',
    'x-kubernetes-map-type',
    'x-kubernetes-preserve-unknown-fields',
    'x-kubernetes-embedded-resource',
  ]) {
    ajv.addKeyword({ keyword, schemaType: ['string', 'boolean', 'array', 'object'] });
  }
  return ajv;
}

/** Keywords that judge a value rather than the object's shape; the shape-only check leaves them out. */
const VALUE_KEYWORDS = new Set([
  'x-kubernetes-validations',
  'pattern',
  'format',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
]);

type SchemaNode = Record<string, unknown>;
const isNode = (v: unknown): v is SchemaNode => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The schema without its value keywords, walking schema positions only (so a property that happens to be
 * called `pattern` or `format` stays): types, required fields, enums and nesting remain.
 */
export function shapeOf(schema: SchemaNode): SchemaNode {
  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(schema)) {
    if (VALUE_KEYWORDS.has(key)) continue;
    if (key === 'properties' && isNode(value))
      out[key] = Object.fromEntries(
        Object.entries(value).map(([name, sub]) => [name, isNode(sub) ? shapeOf(sub) : sub]),
      );
    else if ((key === 'items' || key === 'additionalProperties' || key === 'not') && isNode(value))
      out[key] = shapeOf(value);
    else if (
      (key === 'anyOf' || key === 'allOf' || key === 'oneOf' || key === 'items') &&
      Array.isArray(value)
    )
      out[key] = (value as unknown[]).map((sub) => (isNode(sub) ? shapeOf(sub) : sub));
    else out[key] = value;
  }
  return out;
}

/**
 * The fields a reader reads, per top-level part of the object (`spec`, `status`); a part not named is
 * checked whole.
 */
export type FieldsRead = Readonly<Partial<Record<'spec' | 'status', readonly string[]>>>;

/**
 * The schema with only the named fields of each part named; the rest of such a part is accepted
 * unread. Required fields not kept are dropped from `required` too.
 */
export function withFields(schema: SchemaNode, read: FieldsRead): SchemaNode {
  const properties = schema.properties;
  if (!isNode(properties)) return schema;
  let narrowed: SchemaNode | undefined;
  for (const [part, fields] of Object.entries(read)) {
    const node = properties[part];
    if (!isNode(node) || !isNode(node.properties) || !fields) continue;
    const partProperties = node.properties;
    const keep = fields.filter((f) => Object.hasOwn(partProperties, f));
    const next: SchemaNode = {
      ...node,
      properties: Object.fromEntries(keep.map((f) => [f, partProperties[f]])),
    };
    if (Array.isArray(node.required))
      next.required = (node.required as string[]).filter((f) => keep.includes(f));
    narrowed = { ...(narrowed ?? properties), [part]: next };
  }
  return narrowed ? { ...schema, properties: narrowed } : schema;
}

/** A kind's validators by the fields they check (undefined: all of the object). */
type ByFieldsRead = Map<FieldsRead | undefined, ValidateFunction>;

// Compiled on first use, per mode, kind and fields read (callers pass the same object each time, a
// module-level constant).
const modes = {
  values: {
    ajv: makeAjv(true),
    derive: (s: SchemaNode) => s,
    compiled: new WeakMap<object, ByFieldsRead>(),
  },
  shape: { ajv: makeAjv(false), derive: shapeOf, compiled: new WeakMap<object, ByFieldsRead>() },
};

export interface FieldError {
  /** JSON-path-like location, e.g. `spec.maxUnavailable`. */
  field: string;
  message: string;
}

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

function validatorFor(def: KindDefinition, values: boolean, read: FieldsRead | undefined): ValidateFunction {
  const mode = values ? modes.values : modes.shape;
  let byFields = mode.compiled.get(def.schema);
  if (!byFields)
    mode.compiled.set(def.schema, (byFields = new Map<FieldsRead | undefined, ValidateFunction>()));
  let fn = byFields.get(read);
  if (!fn) {
    const schema = mode.derive(def.schema);
    fn = mode.ajv.compile(read ? withFields(schema, read) : schema);
    byFields.set(read, fn);
  }
  return fn;
}

/** The value in a message: short JSON, cut like the CEL twins cut theirs. */
function shown(value: unknown): string {
  const text = typeof value === 'string' ? `"${value}"` : (JSON.stringify(value) ?? String(value));
  const chars = [...text];
  return chars.length > SHOWN_MAX ? `${chars.slice(0, SHOWN_MAX).join('')}...` : text;
}

const itemCount = (data: unknown) => (Array.isArray(data) ? data.length : '?');

/** Refusals of a list's or map's size, in the API server's words. */
const COUNT_MESSAGES: Record<string, (limit: string, data: unknown) => string> = {
  minItems: (limit, data) => `should have at least ${limit} items; got ${itemCount(data)}`,
  maxItems: (limit, data) => `Too many: ${itemCount(data)}: must have at most ${limit} items`,
  maxProperties: (limit, data) =>
    `Too many: ${Object.keys(data as object).length}: must have at most ${limit} items`,
};

/**
 * The message in the API server's words (k8s.io/kube-openapi's validate errors), with the value given,
 * so a refusal reads the same whichever of the two made it.
 */
function messageOf(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  const counted = COUNT_MESSAGES[e.keyword];
  if (counted) return counted(String(p.limit), e.data);
  const got = `; got ${shown(e.data)}`;
  switch (e.keyword) {
    case 'x-kubernetes-validations':
      return e.message ?? 'is invalid';
    case 'enum':
      return `Unsupported value: ${shown(e.data)}: supported values: ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'type':
      return `must be of type ${String(p.type)}${got}`;
    case 'format':
      return `must be of type ${String(p.format)}${got}`;
    case 'pattern':
      return `should match '${String(p.pattern)}'${got}`;
    case 'minimum':
      return `should be greater than or equal to ${String(p.limit)}${got}`;
    case 'maximum':
      return `should be less than or equal to ${String(p.limit)}${got}`;
    case 'minLength':
      return `should be at least ${String(p.limit)} chars long${got}`;
    case 'maxLength':
      return `Too long: may not be more than ${String(p.limit)} characters; got ${[...String(e.data)].length}`;
    default:
      return e.message ?? 'is invalid';
  }
}

function toFieldError(e: ErrorObject): FieldError {
  const base = e.instancePath.replace(/^\//, '').split('/').filter(Boolean).map(decodePointer);
  const message = messageOf(e);
  if (e.keyword === 'required') base.push(String((e.params as { missingProperty: string }).missingProperty));
  const fieldPath =
    e.keyword === 'x-kubernetes-validations' ? (e.params as { fieldPath?: string }).fieldPath : undefined;
  if (fieldPath) base.push(...fieldPath.split('.').filter(Boolean));
  const field = base.reduce(
    (acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg),
    '',
  );
  return { field: field || '<root>', message };
}

function decodePointer(seg: string): string {
  return seg.replace(/~1/g, '/').replace(/~0/g, '~');
}

export interface ValidateOptions {
  /**
   * Check values too (default): patterns, formats, lengths and bounds. Without, only the shape: types,
   * required fields and enums, which is what code needs to read the object safely. That is for callers
   * whose objects the API server has checked against the CRD it serves (which, for another project's
   * kind, is that project's CRD, not our model of it).
   */
  values?: boolean;
  /**
   * Check only these fields of spec and status (default: all of the object), for a caller that reads
   * no others: a change elsewhere, say in another project's version of the kind, must not stop it.
   */
  fields?: FieldsRead;
}

/** Validates an object against its kind's schema; errors name the field and what was expected. */
export function validateObject<D extends KindDefinition>(
  def: D,
  value: unknown,
  options: ValidateOptions = {},
): ValidationResult<ObjectOf<D>> {
  const fn = validatorFor(def, options.values ?? true, options.fields);
  if (fn(value)) return { ok: true, value: value as ObjectOf<D> };
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  for (const e of fn.errors ?? []) {
    // anyOf branches (int-or-string) report once per branch; keep one error per field and message.
    if (e.keyword === 'anyOf') continue;
    const fe = toFieldError(e);
    const key = `${fe.field}:${fe.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      errors.push(fe);
    }
  }
  return { ok: false, errors };
}

export function formatFieldErrors(errors: FieldError[]): string {
  return errors.map((e) => `${e.field}: ${e.message}`).join('; ');
}
