// Errors of the webhook's HTTP layer itself (not decisions of the contract: those are contract/codes.ts).
import { defineError } from '../lib/errors.js';

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
