// Reading a webhook denial off a failed write: the API server hands the webhook's Status back to the
// client inside its error. The format and its parser are the contract's (contract/denial.ts).
import { parseDenial, type AdmissionDenial } from '../../contract/denial.js';
import { KubeApiError } from '../../lib/kube/errors.js';

export type { AdmissionDenial };

/** The webhook denial carried by a write error, or undefined when the error is something else. */
export function admissionDenial(e: unknown): AdmissionDenial | undefined {
  if (!(e instanceof KubeApiError)) return undefined;
  return parseDenial(e.status, e.statusCode);
}
