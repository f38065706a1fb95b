// ConfigMap -> Policy. Pure: no I/O, no clock. The webhook uses it to admit or refuse a policy
// ConfigMap; the PolicyStore uses it to decide whether an update may replace the last good policy.
import { createHash } from 'node:crypto';
import { parseDocument } from 'yaml';
import { POLICY_CONFIGMAP, type Policy } from '../../policies/schema.js';
import { mergeOntoDefaults, validatePolicy, type PolicyFieldError } from '../../policies/validate.js';

export type { PolicyFieldError };

/** The part of a ConfigMap we read. */
export interface ConfigMapLike {
  metadata?: { namespace?: string; name?: string; resourceVersion?: string };
  data?: Record<string, unknown> | null;
}

export type PolicyParseResult =
  | {
      ok: true;
      policy: Policy;
      /** sha256 of the YAML text, to tell real changes from resyncs. */ hash: string;
    }
  | { ok: false; errors: PolicyFieldError[] };

export interface ParseOptions {
  /** Data key holding the YAML document; default `policy.yaml`. */
  key?: string;
}

export const EMPTY_POLICY =
  'is empty: an empty policy would put every setting back to its built-in default; write {} to mean exactly that, or the settings to change (policies/default-policy.yaml lists them all)';

/** A policy document larger than this is refused before parsing (a ConfigMap holds at most 1 MiB). */
export const MAX_POLICY_BYTES = 256 * 1024;

export function parsePolicyConfigMap(cm: unknown, options: ParseOptions = {}): PolicyParseResult {
  const key = options.key ?? POLICY_CONFIGMAP.key;
  const field = `data[${JSON.stringify(key)}]`;
  const data = typeof cm === 'object' && cm !== null ? (cm as ConfigMapLike).data : undefined;
  const text = data && typeof data === 'object' ? data[key] : undefined;
  if (typeof text !== 'string') {
    return {
      ok: false,
      errors: [
        { field, message: `is missing; the ConfigMap must carry the policy YAML under data key "${key}"` },
      ],
    };
  }
  return parsePolicyText(text, field);
}

/** Parses the YAML text of a policy document; `field` names where it came from in errors. */
export function parsePolicyText(text: string, field = 'policy'): PolicyParseResult {
  if (Buffer.byteLength(text) > MAX_POLICY_BYTES) {
    return { ok: false, errors: [{ field, message: `is larger than ${MAX_POLICY_BYTES} bytes` }] };
  }
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      errors: doc.errors.map((e) => ({
        field,
        message: `is not valid YAML: ${e.message.split('\n')[0] ?? e.code}${e.linePos ? ` (line ${e.linePos[0].line})` : ''}`,
      })),
    };
  }
  let raw: unknown;
  try {
    // maxAliasCount bounds "billion laughs" documents.
    raw = doc.toJS({ maxAliasCount: 50 });
  } catch (e) {
    return { ok: false, errors: [{ field, message: `cannot be read: ${(e as Error).message}` }] };
  }
  // An empty document (or only comments) is most likely a mistake, say a lost file; taken as `{}` it
  // would put every binary back on the built-in defaults without a word.
  if (raw === null || raw === undefined) {
    return { ok: false, errors: [{ field, message: EMPTY_POLICY }] };
  }
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    return {
      ok: false,
      errors: [{ field, message: 'must be a YAML mapping (the MaintenancePolicy document)' }],
    };
  }
  const result = validatePolicy(mergeOntoDefaults(raw));
  if (!result.ok) return result;
  return { ok: true, policy: result.policy, hash: createHash('sha256').update(text).digest('hex') };
}
