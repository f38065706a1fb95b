// A rule's answer. Rules are pure functions returning a Decision; the server turns it into an
// AdmissionReview response. Denials carry a code, a message that names what blocked the write, and,
// for 429s, when to retry.
import type { Operation } from 'fast-json-patch';
import { CODE_STATUS, Codes, type Code } from './codes.js';

export interface Cause {
  field?: string;
  message: string;
  reason?: string;
}

export interface Decision {
  allowed: boolean;
  code: Code;
  message: string;
  warnings: string[];
  /** RFC 6902 operations (mutating paths only). */
  patch?: Operation[];
  /** HTTP status of a denial (403 forbidden by contract, 429 retry later, 422 invalid). */
  status: number;
  retryAfterSeconds?: number;
  causes?: Cause[];
}

export function allow(warnings: string[] = [], patch?: Operation[]): Decision {
  return { allowed: true, code: Codes.OK, message: '', warnings, status: 200, ...(patch ? { patch } : {}) };
}

export interface DenyOptions {
  warnings?: string[];
  retryAfterSeconds?: number;
  causes?: Cause[];
}

export function deny(code: Code, message: string, options: DenyOptions = {}): Decision {
  const retry = options.retryAfterSeconds;
  return {
    allowed: false,
    code,
    message: retry !== undefined ? `${message} (retry in ${retry}s)` : message,
    warnings: options.warnings ?? [],
    status: CODE_STATUS[code],
    ...(retry !== undefined ? { retryAfterSeconds: retry } : {}),
    ...(options.causes ? { causes: options.causes } : {}),
  };
}

/** Seconds from now until `at`, at least 1 (a retry hint is never 0). */
export function secondsUntil(at: Date | number, now: Date): number {
  const ms = (typeof at === 'number' ? at : at.getTime()) - now.getTime();
  return Math.max(1, Math.ceil(ms / 1000));
}

/** Combines decisions of several checks: the first denial wins; warnings of all are kept. */
export function combine(decisions: Decision[]): Decision {
  const warnings = decisions.flatMap((d) => d.warnings);
  const denied = decisions.find((d) => !d.allowed);
  if (denied) return { ...denied, warnings };
  const patch = decisions.flatMap((d) => d.patch ?? []);
  return allow(warnings, patch.length > 0 ? patch : undefined);
}

export function withWarnings(decision: Decision, warnings: string[]): Decision {
  return warnings.length === 0 ? decision : { ...decision, warnings: [...decision.warnings, ...warnings] };
}
