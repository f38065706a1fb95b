// Coded errors of the Redfish client, and the parsing of Redfish error bodies into them.
//
// Every message built here is safe to log, to put in an Event or a condition: messages coming
// from a BMC are passed through `scrub()` with the secrets of that connection before they are
// stored, because some BMCs echo the request (and so a password) back in their error text.
import { MetalError, isMetalError } from '../errors.js';

export const RedfishErrorCode = {
  /** A call or an operation did not finish before its deadline. */
  Timeout: 'METAL_ERR_REDFISH_TIMEOUT',
  /** Login refused, or a request still unauthorised after a fresh login. */
  Auth: 'METAL_ERR_REDFISH_AUTH',
  /** The BMC answered with an HTTP error status. */
  Http: 'METAL_ERR_REDFISH_HTTP',
  /** The BMC could not be reached, or dropped the connection. */
  Connection: 'METAL_ERR_REDFISH_CONNECTION',
  /** The BMC answered with a body that is not the JSON it should be. */
  Malformed: 'METAL_ERR_REDFISH_MALFORMED',
  /** The BMC does not offer what was asked (no such action, value not allowed, no resource). */
  Unsupported: 'METAL_ERR_REDFISH_UNSUPPORTED',
  /** A task ended in Exception, Killed or Cancelled. */
  TaskFailed: 'METAL_ERR_REDFISH_TASK_FAILED',
  /** A conditional write kept failing its precondition (412) after re-reading. */
  Conflict: 'METAL_ERR_REDFISH_CONFLICT',
  /** The caller aborted the operation. */
  Aborted: 'METAL_ERR_REDFISH_ABORTED',
  /** The caller passed something the client refuses before talking to the BMC. */
  Invalid: 'METAL_ERR_REDFISH_INVALID',
  /** The BMC accepted a write (2xx) but reading the resource back does not show it. */
  NotApplied: 'METAL_ERR_REDFISH_NOT_APPLIED',
} as const;
export type RedfishErrorCode = (typeof RedfishErrorCode)[keyof typeof RedfishErrorCode];

/** One entry of `error.@Message.ExtendedInfo[]` (or of a Task's `Messages[]`). */
export interface RedfishMessage {
  MessageId?: string;
  Message?: string;
  MessageArgs?: unknown[];
  RelatedProperties?: string[];
  Severity?: string;
  Resolution?: string;
}

/** What the client knows about a failed HTTP exchange; kept in `MetalError.details`. */
export interface RedfishErrorDetails {
  [key: string]: unknown;
  status?: number;
  method?: string;
  path?: string;
  /** `error.code` of a Redfish error body, e.g. `Base.1.8.GeneralError`. */
  redfishCode?: string;
  /** MessageIds of the extended info, in order. */
  messageIds?: string[];
  messages?: RedfishMessage[];
}

export class RedfishError extends MetalError {
  declare readonly details: RedfishErrorDetails;

  constructor(code: RedfishErrorCode, message: string, details: RedfishErrorDetails = {}, cause?: unknown) {
    super(code, message, details, cause === undefined ? undefined : { cause });
    this.name = 'RedfishError';
  }

  get status(): number | undefined {
    return this.details.status;
  }

  /** True when any MessageId of the body contains `fragment` (e.g. `PreconditionHeaderMissing`). */
  hasMessageId(fragment: string): boolean {
    return (this.details.messageIds ?? []).some((id) => id.includes(fragment));
  }
}

export function isRedfishError(e: unknown, code?: RedfishErrorCode): e is RedfishError {
  return e instanceof RedfishError && isMetalError(e, code);
}

export function isHttpStatus(e: unknown, ...statuses: number[]): e is RedfishError {
  return isRedfishError(e, RedfishErrorCode.Http) && statuses.includes(e.status ?? -1);
}

const MAX_TEXT = 300;

/**
 * Replaces every occurrence of each secret (and its URI-encoded and JSON-escaped forms) with
 * `[redacted]`. Secrets shorter than 3 characters are ignored: they would shred ordinary text
 * and carry no meaning on their own.
 */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 3) continue;
    for (const form of new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)])) {
      out = out.split(form).join('[redacted]');
    }
  }
  return out;
}

interface ParsedBody {
  summary: string;
  redfishCode?: string;
  messages: RedfishMessage[];
}

function asMessages(value: unknown): RedfishMessage[] {
  if (!Array.isArray(value)) return [];
  return value.filter((m): m is RedfishMessage => typeof m === 'object' && m !== null);
}

/**
 * Reads a Redfish error body: `{"error":{"code","message","@Message.ExtendedInfo":[…]}}`, a bare
 * `@Message.ExtendedInfo` list, or plain text (sushy-tools, Go's http.Error, proxies).
 */
export function parseErrorBody(text: string): ParsedBody {
  const trimmed = text.trim();
  if (trimmed === '') return { summary: '', messages: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return { summary: trimmed.slice(0, MAX_TEXT), messages: [] };
  }
  if (typeof parsed !== 'object' || parsed === null) return { summary: String(parsed), messages: [] };
  const root = parsed as Record<string, unknown>;
  const err = (typeof root.error === 'object' && root.error !== null ? root.error : root) as Record<
    string,
    unknown
  >;
  const messages = asMessages(err['@Message.ExtendedInfo']);
  const redfishCode = typeof err.code === 'string' ? err.code : undefined;
  const texts = messages.map((m) => m.Message).filter((m): m is string => typeof m === 'string');
  const head = typeof err.message === 'string' ? err.message : '';
  const summary = [head, ...texts.filter((t) => t !== head)].filter(Boolean).join('; ');
  return { summary: (summary || redfishCode || trimmed).slice(0, MAX_TEXT), redfishCode, messages };
}

/** Builds the coded error for an HTTP error answer. */
export function httpError(
  status: number,
  method: string,
  path: string,
  bodyText: string,
  secrets: readonly string[],
): RedfishError {
  const parsed = parseErrorBody(scrub(bodyText, secrets));
  const code =
    status === 401 || status === 403
      ? RedfishErrorCode.Auth
      : status === 501 || status === 405
        ? RedfishErrorCode.Unsupported
        : RedfishErrorCode.Http;
  const summary = parsed.summary ? `: ${parsed.summary}` : '';
  return new RedfishError(code, `${method} ${path} answered HTTP ${status}${summary}`, {
    status,
    method,
    path,
    redfishCode: parsed.redfishCode,
    messageIds: parsed.messages.map((m) => m.MessageId).filter((id): id is string => typeof id === 'string'),
    messages: parsed.messages,
  });
}

export function unsupported(message: string, details: RedfishErrorDetails = {}): RedfishError {
  return new RedfishError(RedfishErrorCode.Unsupported, message, details);
}

export function invalid(message: string, details: RedfishErrorDetails = {}): RedfishError {
  return new RedfishError(RedfishErrorCode.Invalid, message, details);
}

export function timeout(message: string, details: RedfishErrorDetails = {}): RedfishError {
  return new RedfishError(RedfishErrorCode.Timeout, message, details);
}
