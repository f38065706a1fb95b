// SIMULATOR request/reply shapes and the helpers every route handler shares: Redfish error
// replies, ETag preconditions on PATCH, the If-Match guard on actions.
import type { SimHost } from './host.js';
import type { SimBmc } from './model.js';
import * as view from './resources.js';

export interface SimRequest {
  bmc: SimBmc;
  /** The System a host-scoped route addresses (the first one for BMC-scoped routes). */
  host: SimHost;
  /** Paths of that System. */
  hp: view.HostPaths;
  /** `/bmc/<n>/redfish/v1`. */
  base: string;
  method: string;
  /** Path after `/redfish/v1`, without a trailing slash ('' for the root). */
  rel: string;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  paths: view.SimPaths;
}

export interface SimReply {
  status: number;
  body?: unknown;
  /** Raw text body (instead of JSON). */
  text?: string;
  headers?: Record<string, string>;
}

export type Handler = (req: SimRequest) => SimReply;
export type Methods = Partial<Record<'GET' | 'POST' | 'PATCH' | 'DELETE', Handler>>;

export const ok = (body: unknown, headers?: Record<string, string>): SimReply => ({
  status: 200,
  body,
  headers,
});
export const noContent = (): SimReply => ({ status: 204 });
export const fail = (status: number, id: string, message: string): SimReply => ({
  status,
  body: view.redfishError(id, message),
});

export function header(req: SimRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function bodyObject(req: SimRequest): Record<string, unknown> {
  return typeof req.body === 'object' && req.body !== null ? (req.body as Record<string, unknown>) : {};
}

/**
 * ETag precondition of a PATCH on the resource `key`; undefined when it passes. The tag must come
 * back as it was sent, quotes included (RFC 9110 entity-tag); `W/` is tolerated, as BMCs do.
 */
export function precondition(req: SimRequest, key: string): SimReply | undefined {
  const bmc = req.bmc;
  if (bmc.etagMode === 'none') return undefined;
  const ifMatch = header(req, 'if-match');
  if (!ifMatch) {
    if (bmc.etagMode !== 'required') return undefined;
    bmc.counters.preconditionRequired += 1;
    return fail(428, 'Base.1.12.PreconditionRequired', 'This request requires the If-Match header.');
  }
  const strip = (t: string): string => t.replace(/^W\//, '');
  if (ifMatch === '*' || strip(ifMatch) === strip(bmc.etag(key) ?? '')) return undefined;
  bmc.counters.preconditionFailed += 1;
  return fail(412, 'Base.1.12.PreconditionFailed', 'The ETag supplied did not match the current one.');
}

/** Action POSTs: counts If-Match (clients must not send it) and refuses it like iDRAC. */
export function actionGuard(req: SimRequest): SimReply | undefined {
  if (!header(req, 'if-match')) return undefined;
  req.bmc.counters.ifMatchOnActions += 1;
  if (!req.bmc.profile.quirks.rejectIfMatchOnActions) return undefined;
  return fail(412, 'Base.1.12.PreconditionFailed', 'If-Match is not supported on actions.');
}

export function withEtag(req: SimRequest, key: string, body: object): SimReply {
  const etag = req.bmc.etag(key);
  return ok(body, etag ? { ETag: etag } : undefined);
}

export function applyTimeOf(body: Record<string, unknown>): string | undefined {
  return (body['@Redfish.SettingsApplyTime'] as { ApplyTime?: string } | undefined)?.ApplyTime;
}
