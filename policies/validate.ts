// The ajv validator of the policy schema, plus the checks a JSON schema cannot express (time zones,
// unique names). Every error names the field, says why it is wrong and what would be valid.
import { Ajv, type ErrorObject } from 'ajv';
import { DEFAULT_POLICY, PolicySchema, type Policy } from './schema.js';

export interface PolicyFieldError {
  /** Dotted path inside the policy document, e.g. `classes.Planned.deadline` or `windows[0].timeZone`. */
  field: string;
  message: string;
}

export type PolicyValidation = { ok: true; policy: Policy } | { ok: false; errors: PolicyFieldError[] };

// A private instance: `verbose` gives each error its schema node, which carries the examples we quote.
const ajv = new Ajv({ allErrors: true, strict: true, verbose: true });
const validateSchema = ajv.compile<Policy>(PolicySchema);

const DURATION_UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses a Go-style duration ("90s", "1h30m", "0.5h") into milliseconds; undefined when malformed. */
export function parseDuration(text: string): number | undefined {
  if (!/^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$/.test(text)) return undefined;
  let total = 0;
  for (const [, amount, , unit] of text.matchAll(/([0-9]+(\.[0-9]+)?)(ms|s|m|h)/g)) {
    total += Number(amount) * (DURATION_UNIT_MS[unit ?? ''] ?? 0);
  }
  return Math.round(total);
}

function fieldOf(instancePath: string, extra?: string): string {
  const segments = instancePath.split('/').slice(1);
  if (extra !== undefined) segments.push(extra);
  const path = segments
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), '');
  return path || '<root>';
}

const show = (value: unknown) => JSON.stringify(value);

function describe(e: ErrorObject): PolicyFieldError {
  const parent = (e.parentSchema ?? {}) as { examples?: unknown[]; description?: string };
  const examples = parent.examples ? ` such as ${parent.examples.map(show).join(', ')}` : '';
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return { field: fieldOf(e.instancePath, String(params.missingProperty)), message: 'is required' };
    case 'additionalProperties': {
      const allowed = Object.keys((e.parentSchema as { properties?: object }).properties ?? {});
      return {
        field: fieldOf(e.instancePath, String(params.additionalProperty)),
        message: `is not a known field; valid fields here: ${allowed.join(', ')}`,
      };
    }
    case 'enum':
      return {
        field: fieldOf(e.instancePath),
        message: `is ${show(e.data)}; must be one of ${(params.allowedValues as unknown[]).map(show).join(', ')}`,
      };
    case 'pattern':
      return { field: fieldOf(e.instancePath), message: `is ${show(e.data)}; must be a value${examples}` };
    case 'type':
      return {
        field: fieldOf(e.instancePath),
        message: `is ${e.data === null ? 'null' : Array.isArray(e.data) ? 'an array' : typeof e.data}; must be ${String(params.type)}${examples}`,
      };
    default:
      return {
        field: fieldOf(e.instancePath),
        message: `${e.message ?? 'is invalid'} (got ${show(e.data)})`,
      };
  }
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function duplicates(names: string[]): Set<string> {
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const n of names) (seen.has(n) ? dup : seen).add(n);
  return dup;
}

/** Checks that need code: valid time zones, unique names, durations that make sense. */
function semanticErrors(policy: Policy): PolicyFieldError[] {
  const errors: PolicyFieldError[] = [];
  policy.windows.forEach((w, i) => {
    if (!isTimeZone(w.timeZone)) {
      errors.push({
        field: `windows[${i}].timeZone`,
        message: `is ${show(w.timeZone)}; must be an IANA time zone such as "UTC" or "Europe/Berlin"`,
      });
    }
    if (w.start === w.end) {
      errors.push({
        field: `windows[${i}].end`,
        message: `equals start (${w.start}); a window must have a length`,
      });
    }
  });
  const dupWindows = duplicates(policy.windows.map((w) => w.name));
  policy.windows.forEach((w, i) => {
    if (dupWindows.has(w.name))
      errors.push({
        field: `windows[${i}].name`,
        message: `${show(w.name)} is used twice; names must be unique`,
      });
  });
  const dupRules = duplicates(policy.autoApproval.rules.map((r) => r.name));
  policy.autoApproval.rules.forEach((r, i) => {
    if (dupRules.has(r.name)) {
      errors.push({
        field: `autoApproval.rules[${i}].name`,
        message: `${show(r.name)} is used twice; names must be unique`,
      });
    }
  });
  if (parseDuration(policy.grants.ttl) === 0) {
    errors.push({ field: 'grants.ttl', message: 'is 0; must be positive such as "2m"' });
  }
  for (const cls of ['Planned', 'Urgent', 'Emergency'] as const) {
    const c = policy.classes[cls];
    if ((parseDuration(c.minNotice) ?? 0) > (parseDuration(c.deadline) ?? 0)) {
      errors.push({
        field: `classes.${cls}.minNotice`,
        message: `is ${show(c.minNotice)}, longer than the deadline ${show(c.deadline)}; must not exceed it`,
      });
    }
  }
  return errors;
}

/** Validates a complete policy document (defaults already merged in). */
export function validatePolicy(doc: unknown): PolicyValidation {
  if (!validateSchema(doc)) {
    const seen = new Set<string>();
    const errors = (validateSchema.errors ?? []).map(describe).filter((e) => {
      const key = `${e.field}\0${e.message}`;
      return seen.has(key) ? false : (seen.add(key), true);
    });
    return { ok: false, errors };
  }
  const errors = semanticErrors(doc);
  return errors.length > 0 ? { ok: false, errors } : { ok: true, policy: doc };
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Deep-merges a partial document onto a base: objects merge key by key, anything else replaces. */
export function mergeOntoDefaults(partial: unknown, base: unknown = DEFAULT_POLICY): unknown {
  if (!isPlainObject(partial) || !isPlainObject(base))
    return partial === undefined ? structuredClone(base) : partial;
  const out: Record<string, unknown> = structuredClone(base);
  for (const [key, value] of Object.entries(partial)) {
    const merged = Object.hasOwn(base, key) ? mergeOntoDefaults(value, base[key]) : value;
    // defineProperty keeps a "__proto__" key an ordinary (and so rejected) field instead of a prototype.
    Object.defineProperty(out, key, { value: merged, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Formats errors for a denial message: `field: message; field: message`. */
export function formatPolicyErrors(errors: PolicyFieldError[]): string {
  return errors.map((e) => `${e.field}: ${e.message}`).join('; ');
}
