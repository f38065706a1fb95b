// Reading a webhook denial off a failed write. The API server hands the webhook's Status back to
// the client: the message is `admission webhook "<name>" denied the request: <CODE>: <text>` and,
// for a 429, details.retryAfterSeconds carries the webhook's retry hint, and a budget denial names
// its budget in a DisruptionBudget cause.
import { Codes, type Code } from '../../webhook/codes.js';
import { BUDGET_CAUSE } from '../../webhook/grants.js';
import { KubeApiError } from '../../lib/kube/errors.js';

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

/** The webhook denial carried by a write error, or undefined when the error is something else. */
export function admissionDenial(e: unknown): AdmissionDenial | undefined {
  if (!(e instanceof KubeApiError)) return undefined;
  const text = e.status.message ?? '';
  const match = CODE_IN_MESSAGE.exec(text);
  if (!match) return undefined;
  const code = match[1]!;
  // The webhook appends "(retry in Ns)" to the message; the structured hint is in details.
  const message = match[2]!.replace(/ \(retry in \d+s\)$/, '');
  const seconds = e.status.details?.retryAfterSeconds;
  const budget = e.status.details?.causes?.find((c) => c.reason === BUDGET_CAUSE)?.field;
  return {
    code,
    reason: reasonForCode(code),
    message,
    retryAfterMs: typeof seconds === 'number' && seconds > 0 ? seconds * 1000 : undefined,
    httpStatus: e.statusCode,
    ...(budget ? { budget } : {}),
  };
}
