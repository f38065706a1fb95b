// AdmissionReview v1: the request shape we accept (TypeBox, checked with ajv), and the response we
// always give for a review we could read: same apiVersion/kind, response.uid copied from the request.
import { Type, type Static } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import { denialStatus, type Decision } from '../contract/denial.js';
import { reviewInvalid } from './errors.js';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

const GroupVersionKind = Type.Object({ group: Type.String(), version: Type.String(), kind: Type.String() });
const GroupVersionResource = Type.Object({
  group: Type.String(),
  version: Type.String(),
  resource: Type.String(),
});

export const Operations = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] as const;
export type Operation = (typeof Operations)[number];

export const UserInfo = Type.Object({
  username: Type.Optional(Type.String()),
  uid: Type.Optional(Type.String()),
  groups: Type.Optional(Type.Array(Type.String())),
  extra: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
});
export type UserInfo = Static<typeof UserInfo>;

const Obj = Type.Union([Type.Object({}), Type.Null()]);

export const AdmissionRequestSchema = Type.Object({
  uid: Type.String({ minLength: 1, maxLength: 256 }),
  kind: GroupVersionKind,
  resource: GroupVersionResource,
  subResource: Type.Optional(Type.String()),
  requestKind: Type.Optional(GroupVersionKind),
  requestResource: Type.Optional(GroupVersionResource),
  requestSubResource: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  namespace: Type.Optional(Type.String()),
  operation: Type.Unsafe<Operation>({ type: 'string', enum: [...Operations] }),
  userInfo: UserInfo,
  object: Type.Optional(Obj),
  oldObject: Type.Optional(Obj),
  dryRun: Type.Optional(Type.Boolean()),
  options: Type.Optional(Obj),
});

/** The request with object bodies typed loosely: rules validate the kinds they read. */
export type AdmissionRequest = Omit<Static<typeof AdmissionRequestSchema>, 'object' | 'oldObject'> & {
  object?: unknown;
  oldObject?: unknown;
};

export const AdmissionReviewSchema = Type.Object({
  apiVersion: Type.Literal(ADMISSION_API_VERSION),
  kind: Type.Literal('AdmissionReview'),
  request: AdmissionRequestSchema,
});

export interface AdmissionResponseBody {
  uid: string;
  allowed: boolean;
  status?: {
    code: number;
    message: string;
    reason?: string;
    details?: { retryAfterSeconds?: number; causes?: { field?: string; message: string; reason?: string }[] };
  };
  warnings?: string[];
  patchType?: 'JSONPatch';
  patch?: string;
  auditAnnotations?: Record<string, string>;
}

export interface AdmissionReviewResponse {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: 'AdmissionReview';
  response: AdmissionResponseBody;
}

const ajv = new Ajv({ allErrors: false, strict: true });
const validateReview = ajv.compile(AdmissionReviewSchema);

/** Reads an AdmissionReview v1 request; throws METAL_ERR_REVIEW_INVALID (-> HTTP 400) if it is not one. */
export function parseAdmissionReview(body: unknown): AdmissionRequest {
  if (!validateReview(body)) {
    const e = validateReview.errors?.[0];
    throw reviewInvalid(e ? `${e.instancePath || '<root>'} ${e.message ?? 'is invalid'}` : 'unreadable');
  }
  return body.request as AdmissionRequest;
}

// The API server rejects warnings longer than this and limits their count; keep ours inside.
const MAX_WARNING = 256;
const MAX_WARNINGS = 16;

/** The AdmissionReview answer for a decision. */
export function toAdmissionResponse(
  uid: string,
  decision: Decision,
  audit?: Record<string, string>,
): AdmissionReviewResponse {
  const response: AdmissionResponseBody = { uid, allowed: decision.allowed };
  if (!decision.allowed) response.status = denialStatus(decision);
  const warnings = decision.warnings
    .slice(0, MAX_WARNINGS)
    .map((w) => (w.length > MAX_WARNING ? `${w.slice(0, MAX_WARNING - 1)}…` : w));
  if (warnings.length > 0) response.warnings = warnings;
  if (decision.allowed && decision.patch && decision.patch.length > 0) {
    response.patchType = 'JSONPatch';
    response.patch = Buffer.from(JSON.stringify(decision.patch)).toString('base64');
  }
  if (audit && Object.keys(audit).length > 0) response.auditAnnotations = audit;
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response };
}

/** `<group>/<resource>[/<subresource>]` of a request, e.g. `maintenance.metal.ironcore.dev/servermaintenances/status`. */
export function resourceKey(request: AdmissionRequest): string {
  const base = `${request.resource.group}/${request.resource.resource}`;
  return request.subResource ? `${base}/${request.subResource}` : base;
}
