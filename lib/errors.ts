// Coded errors. Every error this project raises on purpose carries a stable code (METAL_ERR_*),
// so logs, Events, conditions and tests can match on the code rather than on message text.

export interface ErrorDetails {
  [key: string]: unknown;
}

export class MetalError extends Error {
  readonly code: string;
  readonly details: ErrorDetails;

  constructor(code: string, message: string, details: ErrorDetails = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MetalError';
    this.code = code;
    this.details = details;
  }
}

/** Defines a family of errors with one code; call the result to build an instance. */
export function defineError<Args extends unknown[]>(
  code: string,
  format: (...args: Args) => string,
): ((...args: Args) => MetalError) & { code: string } {
  const make = (...args: Args) => new MetalError(code, format(...args));
  return Object.assign(make, { code });
}

export function isMetalError(e: unknown, code?: string): e is MetalError {
  return e instanceof MetalError && (code === undefined || e.code === code);
}

/** A message safe to log or put in a condition, for any thrown value. */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e instanceof MetalError ? `${e.code}: ${e.message}` : e.message;
  return String(e);
}
