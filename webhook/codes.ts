// Denial codes. Every decision carries one; metrics, logs, tests and docs/webhook.md match on the code,
// never on message text. `status` is the HTTP code the API server hands the client: 403 for a write
// the contract forbids, 429 (with a retry hint) for one that may succeed later, as the Eviction API does.
import { defineError } from '../lib/errors.js';

export const Codes = {
  OK: 'METAL_OK',
  // Placement (WS1)
  SERVER_UNCLAIMABLE: 'METAL_ERR_SERVER_UNCLAIMABLE',
  SERVER_TAINTED: 'METAL_ERR_SERVER_TAINTED',
  SERVER_IN_MAINTENANCE: 'METAL_ERR_SERVER_IN_MAINTENANCE',
  SERVER_NOT_FOUND: 'METAL_ERR_SERVER_NOT_FOUND',
  // Eviction (WS2)
  APPROVAL_MISSING: 'METAL_ERR_APPROVAL_MISSING',
  NOT_BEFORE: 'METAL_ERR_NOT_BEFORE',
  DEFERRED: 'METAL_ERR_DEFERRED',
  OUTSIDE_WINDOW: 'METAL_ERR_OUTSIDE_WINDOW',
  SERVER_BUSY: 'METAL_ERR_SERVER_BUSY',
  CLAIM_NOT_FOUND: 'METAL_ERR_CLAIM_NOT_FOUND',
  BUDGET_EXHAUSTED: 'METAL_ERR_BUDGET_EXHAUSTED',
  BUDGET_PAUSED: 'METAL_ERR_BUDGET_PAUSED',
  BUDGET_STALE: 'METAL_ERR_BUDGET_STALE',
  BUDGET_LEDGER_FULL: 'METAL_ERR_BUDGET_LEDGER_FULL',
  BUDGET_CONFLICT: 'METAL_ERR_BUDGET_CONFLICT',
  BUDGET_UNAVAILABLE: 'METAL_ERR_BUDGET_UNAVAILABLE',
  // Contract
  APPROVAL_NOT_ANNOUNCED: 'METAL_ERR_APPROVAL_NOT_ANNOUNCED',
  DEFER_NOT_ANNOUNCED: 'METAL_ERR_DEFER_NOT_ANNOUNCED',
  DEFER_PAST_DEADLINE: 'METAL_ERR_DEFER_PAST_DEADLINE',
  FORBIDDEN_WRITER: 'METAL_ERR_FORBIDDEN_WRITER',
  BOOT_NEEDS_MAINTENANCE: 'METAL_ERR_BOOT_NEEDS_MAINTENANCE',
  FIRMWARE_LOCKED: 'METAL_ERR_FIRMWARE_LOCKED',
  // Policy and legacy labels
  POLICY_INVALID: 'METAL_ERR_POLICY_INVALID',
  LEGACY_LABEL_DENIED: 'METAL_ERR_LEGACY_LABEL_DENIED',
  // The request itself
  OBJECT_INVALID: 'METAL_ERR_OBJECT_INVALID',
  NO_POLICY: 'METAL_ERR_NO_POLICY',
  INTERNAL: 'METAL_ERR_INTERNAL',
} as const;
export type Code = (typeof Codes)[keyof typeof Codes];

/** HTTP status of a denial with this code. */
export const CODE_STATUS: Record<Code, number> = {
  METAL_OK: 200,
  METAL_ERR_SERVER_UNCLAIMABLE: 403,
  METAL_ERR_SERVER_TAINTED: 403,
  METAL_ERR_SERVER_IN_MAINTENANCE: 403,
  METAL_ERR_SERVER_NOT_FOUND: 429,
  METAL_ERR_APPROVAL_MISSING: 429,
  METAL_ERR_NOT_BEFORE: 429,
  METAL_ERR_DEFERRED: 429,
  METAL_ERR_OUTSIDE_WINDOW: 429,
  METAL_ERR_SERVER_BUSY: 429,
  METAL_ERR_CLAIM_NOT_FOUND: 429,
  METAL_ERR_BUDGET_EXHAUSTED: 429,
  METAL_ERR_BUDGET_PAUSED: 429,
  METAL_ERR_BUDGET_STALE: 429,
  METAL_ERR_BUDGET_LEDGER_FULL: 429,
  METAL_ERR_BUDGET_CONFLICT: 429,
  METAL_ERR_BUDGET_UNAVAILABLE: 429,
  METAL_ERR_APPROVAL_NOT_ANNOUNCED: 403,
  METAL_ERR_DEFER_NOT_ANNOUNCED: 403,
  METAL_ERR_DEFER_PAST_DEADLINE: 403,
  METAL_ERR_FORBIDDEN_WRITER: 403,
  METAL_ERR_BOOT_NEEDS_MAINTENANCE: 403,
  METAL_ERR_FIRMWARE_LOCKED: 403,
  METAL_ERR_POLICY_INVALID: 422,
  METAL_ERR_LEGACY_LABEL_DENIED: 403,
  METAL_ERR_OBJECT_INVALID: 422,
  METAL_ERR_NO_POLICY: 503,
  METAL_ERR_INTERNAL: 500,
};

/** Thrown by a BudgetStore when the resourceVersion precondition fails (HTTP 409 from the API server). */
export const budgetConflict = defineError(
  'METAL_ERR_BUDGET_CONFLICT',
  (name: string) => `budget ${name} was modified concurrently`,
);

/** Thrown for a request body that is not an AdmissionReview v1 (answered with HTTP 400). */
export const reviewInvalid = defineError(
  'METAL_ERR_REVIEW_INVALID',
  (why: string) => `not an AdmissionReview v1: ${why}`,
);

/** A request on a connection without a client certificate the client CA signed (answered with HTTP 401). */
export const unauthenticated = defineError(
  'METAL_ERR_UNAUTHENTICATED',
  (why: string) => `${why}; this port serves the API server only (--client-ca-file)`,
);
