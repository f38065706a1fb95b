// Errors from the Kubernetes API, carrying the HTTP status and the Status reason so callers can
// branch on them (conflict → retry, not found → gone, gone → relist).
import { MetalError } from '../errors.js';

export interface KubeStatus {
  kind?: 'Status';
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    kind?: string;
    /** StatusCause: its type is `reason` on the wire. */
    causes?: { reason?: string; message?: string; field?: string }[];
    retryAfterSeconds?: number;
  };
}

export class KubeApiError extends MetalError {
  readonly statusCode: number;
  readonly reason: string;
  readonly status: KubeStatus;

  constructor(method: string, path: string, statusCode: number, status: KubeStatus) {
    const reason = status.reason ?? 'Unknown';
    super(
      'METAL_ERR_KUBE_API',
      `${method} ${path}: ${statusCode} ${reason}: ${status.message ?? ''}`.trim(),
      {
        statusCode,
        reason,
      },
    );
    this.name = 'KubeApiError';
    this.statusCode = statusCode;
    this.reason = reason;
    this.status = status;
  }
}

/** The API server could not be reached or did not answer in time. */
export class KubeTransportError extends MetalError {
  constructor(method: string, path: string, cause: unknown) {
    super(
      'METAL_ERR_KUBE_TRANSPORT',
      `${method} ${path}: ${cause instanceof Error ? cause.message : String(cause)}`,
      {},
      { cause },
    );
    this.name = 'KubeTransportError';
  }
}

const hasStatus = (e: unknown, code: number): boolean => e instanceof KubeApiError && e.statusCode === code;

export const isNotFound = (e: unknown): boolean => hasStatus(e, 404);
export const isConflict = (e: unknown): boolean =>
  hasStatus(e, 409) && (e as KubeApiError).reason === 'Conflict';
export const isAlreadyExists = (e: unknown): boolean =>
  hasStatus(e, 409) && (e as KubeApiError).reason === 'AlreadyExists';
export const isGone = (e: unknown): boolean => hasStatus(e, 410);
export const isInvalid = (e: unknown): boolean => hasStatus(e, 422);
export const isForbidden = (e: unknown): boolean => hasStatus(e, 403);
export const isTooManyRequests = (e: unknown): boolean => hasStatus(e, 429);
/** Worth retrying as is: the server was busy, unreachable, or timed out. */
export const isTransient = (e: unknown): boolean =>
  e instanceof KubeTransportError ||
  (e instanceof KubeApiError && (e.statusCode === 429 || e.statusCode >= 500 || e.reason === 'Timeout'));

/**
 * The API server refused the request because calling an admission webhook failed: the webhook is down,
 * restarting or too slow (failurePolicy Fail). It goes through once the webhook serves again.
 */
export const isWebhookUnavailable = (e: unknown): boolean =>
  e instanceof KubeApiError && e.statusCode >= 500 && /failed calling webhook/i.test(e.status.message ?? '');
