// SIMULATOR authentication: Redfish sessions (X-Auth-Token) and HTTP Basic, per simulated BMC.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { SimBmc } from './model.js';
import { fail, noContent, type SimReply, type SimRequest } from './routes.js';

export interface SimCredentials {
  username: string;
  password: string;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function header(req: SimRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

const SESSIONS = '/SessionService/Sessions';

/** Handles login/logout and the session collection; undefined for other requests. */
export function sessionRoutes(req: SimRequest, creds: SimCredentials): SimReply | undefined {
  const bmc = req.bmc;
  if (req.rel === SESSIONS && req.method === 'POST') return login(req, creds);
  if (req.rel === SESSIONS && req.method === 'GET') {
    const members = [...bmc.sessions.values()].map((id) => ({ '@odata.id': `${req.base}${SESSIONS}/${id}` }));
    return {
      status: 200,
      body: { '@odata.id': req.base + SESSIONS, Members: members, 'Members@odata.count': members.length },
    };
  }
  const m = /^\/SessionService\/Sessions\/([^/]+)$/.exec(req.rel);
  if (m && req.method === 'DELETE') {
    for (const [token, id] of bmc.sessions) {
      if (id === m[1]) {
        bmc.sessions.delete(token);
        bmc.counters.logouts += 1;
        return noContent();
      }
    }
    return fail(404, 'Base.1.12.ResourceMissingAtURI', 'No such session');
  }
  if (m && req.method === 'GET') return { status: 200, body: { '@odata.id': req.base + req.rel, Id: m[1] } };
  return undefined;
}

function login(req: SimRequest, creds: SimCredentials): SimReply {
  const bmc = req.bmc;
  const body = (req.body ?? {}) as { UserName?: unknown; Password?: unknown };
  if (
    body.UserName !== creds.username ||
    typeof body.Password !== 'string' ||
    !same(body.Password, creds.password)
  ) {
    bmc.counters.authFailures += 1;
    return fail(401, 'Base.1.12.ResourceAtUriUnauthorized', 'Invalid username or password');
  }
  const token = randomBytes(16).toString('hex');
  const id = bmc.nextId();
  bmc.sessions.set(token, id);
  bmc.counters.logins += 1;
  const location = `${req.base}${SESSIONS}/${id}`;
  return {
    status: 201,
    body: { '@odata.id': location, Id: id, UserName: creds.username },
    headers: { 'X-Auth-Token': token, Location: location },
  };
}

/** True when the request may proceed: open path, a live session token or valid Basic credentials. */
export function authorized(req: SimRequest, bmc: SimBmc, creds: SimCredentials): boolean {
  if (req.rel === '' && req.method === 'GET') return true;
  if (req.rel === SESSIONS && req.method === 'POST') return true;
  const token = header(req, 'x-auth-token');
  if (token !== undefined) return bmc.sessions.has(token);
  const auth = header(req, 'authorization');
  if (!auth?.startsWith('Basic ')) return false;
  const decoded = Buffer.from(auth.slice(6), 'base64').toString();
  const sep = decoded.indexOf(':');
  return sep > 0 && decoded.slice(0, sep) === creds.username && same(decoded.slice(sep + 1), creds.password);
}
