// A rule's answer, and the wire format of a denial: how the webhook writes it into its AdmissionReview
// response and how a controller reads it back off the API server's error. Both halves live here, so
// the format has one definition (denial.test.ts formats with the webhook's own code and parses back).
//
// Rules are pure functions returning a Decision. A denial carries a code, a message that names what
// blocked the write, and, for 429s, when to retry. On the wire (a metav1.Status):
//   message   `<CODE>: <text>[ (retry in <N>s)]`; the API server prefixes
//             `admission webhook "<name>" denied the request: `
//   details   retryAfterSeconds (429s), and causes; a budget denial names its budget in a cause whose
//             reason is BUDGET_CAUSE and whose field is the budget's refKey (Kind/namespace/name)
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
    message: retry !== undefined ? `${message}${retryHint(retry)}` : message,
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

// ---------------------------------------------------------------- the wire format

/**
 * The cause reason that names the budget a denial is about: field is `Kind/namespace/name` (refKey), so
 * that a controller can wait for that budget's releases and not for every budget's (Kubernetes' own
 * eviction denials carry a `DisruptionBudget` cause too).
 */
export const BUDGET_CAUSE = 'DisruptionBudget';

const retryHint = (seconds: number) => ` (retry in ${seconds}s)`;
const RETRY_HINT = / \(retry in \d+s\)$/;

/** A denial as metav1.Status carries it (the AdmissionReview response's status, relayed by the API server). */
export interface DenialStatus {
  code: number;
  message: string;
  reason?: string;
  details?: { retryAfterSeconds?: number; causes?: Cause[] };
}

function httpReason(status: number): string {
  if (status === 429) return 'TooManyRequests';
  if (status === 422) return 'Invalid';
  if (status >= 500) return 'InternalError';
  return 'Forbidden';
}

/** The Status the webhook answers a denied decision with. */
export function denialStatus(decision: Decision): DenialStatus {
  return {
    code: decision.status,
    message: `${decision.code}: ${decision.message}`,
    reason: httpReason(decision.status),
    ...(decision.retryAfterSeconds !== undefined || decision.causes
      ? {
          details: {
            ...(decision.retryAfterSeconds !== undefined
              ? { retryAfterSeconds: decision.retryAfterSeconds }
              : {}),
            ...(decision.causes ? { causes: decision.causes } : {}),
          },
        }
      : {}),
  };
}

/** A webhook denial as a controller reads it back. */
export interface AdmissionDenial {
  /** The webhook's METAL_ERR_* code. */
  code: string;
  /** The condition/Event reason for it (BudgetExhausted, AwaitingApproval, ...). */
  reason: string;
  /** The webhook's message, without the API server's prefix and the code. */
  message: string;
  /** The retry hint; undefined when the webhook gave none (a 403: retrying will not help soon). */
  retryAfterMs: number | undefined;
  httpStatus: number;
  /** The budget without room (refKey), when the denial names one (see BUDGET_CAUSE). */
  budget?: string;
}

const REASONS: Partial<Record<Code, string>> = {
  [Codes.APPROVAL_MISSING]: 'AwaitingApproval',
  [Codes.DEFERRED]: 'Deferred',
  [Codes.NOT_BEFORE]: 'NotBefore',
  [Codes.OUTSIDE_WINDOW]: 'OutsideWindow',
  [Codes.SERVER_BUSY]: 'ServerBusy',
  [Codes.SERVER_NOT_FOUND]: 'ServerNotFound',
  [Codes.CLAIM_NOT_FOUND]: 'ClaimNotFound',
  [Codes.BUDGET_EXHAUSTED]: 'BudgetExhausted',
  [Codes.BUDGET_PAUSED]: 'BudgetPaused',
  [Codes.BUDGET_STALE]: 'BudgetStale',
  [Codes.BUDGET_LEDGER_FULL]: 'BudgetLedgerFull',
  [Codes.BUDGET_CONFLICT]: 'BudgetConflict',
  [Codes.BUDGET_UNAVAILABLE]: 'BudgetUnavailable',
  [Codes.FORBIDDEN_WRITER]: 'ForbiddenWriter',
  [Codes.NO_POLICY]: 'NoPolicy',
};

/** METAL_ERR_SOME_THING -> SomeThing, for codes without a chosen reason. */
export function reasonForCode(code: string): string {
  const known = REASONS[code as Code];
  if (known) return known;
  return code
    .replace(/^METAL_ERR_/, '')
    .toLowerCase()
    .split('_')
    .map((w) => (w ? w[0]!.toUpperCase() + w.slice(1) : ''))
    .join('');
}

const CODE_IN_MESSAGE = /\b(METAL_ERR_[A-Z_]+): ([\s\S]*)$/;

/**
 * The webhook denial a Status carries (as the API server relays it, with its prefix), or undefined when
 * the Status is not one. `httpStatus` is the response's status code.
 */
export function parseDenial(
  status: {
    message?: string;
    details?: { retryAfterSeconds?: number; causes?: { reason?: string; field?: string }[] };
  },
  httpStatus: number,
): AdmissionDenial | undefined {
  const match = CODE_IN_MESSAGE.exec(status.message ?? '');
  if (!match) return undefined;
  const code = match[1]!;
  // deny() appends the retry hint to the message; the structured hint is in details.
  const message = match[2]!.replace(RETRY_HINT, '');
  const seconds = status.details?.retryAfterSeconds;
  const budget = status.details?.causes?.find((c) => c.reason === BUDGET_CAUSE)?.field;
  return {
    code,
    reason: reasonForCode(code),
    message,
    retryAfterMs: typeof seconds === 'number' && seconds > 0 ? seconds * 1000 : undefined,
    httpStatus,
    ...(budget ? { budget } : {}),
  };
}
