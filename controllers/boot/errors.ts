// Coded errors of the boot controller (Redfish errors keep their METAL_ERR_REDFISH_* codes).
import { MetalError, defineError, errorMessage, isMetalError } from '../../lib/errors.js';
import { RedfishErrorCode, scrub } from '../../lib/redfish/index.js';
import type { ErrorView } from './model.js';

export const BootErrorCode = {
  /** The decision asked for the BMC although its access could not be resolved (a bug). */
  NoAccess: 'METAL_ERR_BOOT_NO_ACCESS',
  /** A ServerBootConfiguration of that name exists and belongs to something else. */
  SbcConflict: 'METAL_ERR_BOOT_SBC_CONFLICT',
  /** The decision did not converge (asked to observe twice). */
  Internal: 'METAL_ERR_BOOT_INTERNAL',
} as const;

export const noAccess = defineError(BootErrorCode.NoAccess, (why: string) => `no BMC access: ${why}`);
export const sbcConflict = defineError(
  BootErrorCode.SbcConflict,
  (name: string) => `ServerBootConfiguration ${name} already exists and is not owned by this boot`,
);
export const internal = defineError(BootErrorCode.Internal, (what: string) => what);

/** Errors no retry can fix: the BMC lacks the feature, or the request itself is wrong. */
export function isFatal(view: ErrorView): boolean {
  return (
    view.code === RedfishErrorCode.Unsupported ||
    view.code === RedfishErrorCode.Invalid ||
    view.code === BootErrorCode.SbcConflict
  );
}

/** A coded, credential-free view of any error (scrubbed once more: defence in depth). */
export function errorView(e: unknown, secrets: readonly string[] = []): ErrorView {
  if (e instanceof EdgeError) return e.view;
  const code = isMetalError(e) ? e.code : 'METAL_ERR_UNKNOWN';
  const text = isMetalError(e) ? e.message : errorMessage(e);
  return { code, message: scrub(`${code}: ${text}`, secrets).slice(0, 1024) };
}

/** A failure at the edge, already in its safe form. */
export class EdgeError extends MetalError {
  readonly view: ErrorView;

  constructor(view: ErrorView) {
    super(view.code, view.message);
    this.name = 'EdgeError';
    this.view = view;
  }
}
