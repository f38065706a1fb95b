// SIMULATOR: one Node HTTPS server standing in for many BMCs. Test infrastructure only.
//
//   https://127.0.0.1:<port>/bmc/<n>/redfish/v1/...   Redfish of simulated BMC n (0-based)
//   https://127.0.0.1:<port>/sim/...                  control API (no auth; loopback only)
//
// Control API:
//   GET    /sim                         summary
//   GET    /sim/bmc/<n>                 state, counters and armed faults of BMC n
//   POST   /sim/bmc/<n>/faults          arm a fault (FaultSpec JSON) -> {"id": …}
//   DELETE /sim/bmc/<n>/faults          disarm all faults
//   POST   /sim/bmc/<n>/reboot          {"system"?: id}: a reboot the BMC starts by itself
//   POST   /sim/bmc/<n>/power           {"state":"On"|"Off","system"?: id}: set power at once (test setup)
//   POST   /sim/bmc/<n>/host            {"stuck":true|false,"system"?: id}: the host never comes back on
//   GET    /sim/ledger                  the exactly-once ledger of every server (see ledger.ts)
//
// A BMC may manage several Systems (`systems` option); `system` defaults to the first.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { authorized, sessionRoutes, type SimCredentials } from './auth.js';
import type { FaultSpec } from './faults.js';
import { DEFAULT_TIMING, SimBmc, type SimHost, type SimTiming } from './model.js';
import { SIM_PROFILES, type EtagMode, type SimProfileName } from './profiles.js';
import { ledgerOf, type ServerLedger, type SimServer } from './ledger.js';
import { fail, route, routesFor, type SimReply, type SimRequest } from './routes.js';
import { generateTls, type SimTls } from './tls.js';

export interface BmcSimulatorOptions {
  /** Number of simulated BMCs. Default 1. */
  count?: number;
  /** Default 0 (a free port). The server binds 127.0.0.1 only. */
  port?: number;
  /** Vendor profile of each BMC: one for all, or per index. Default generic. */
  profile?: SimProfileName | ((index: number) => SimProfileName);
  /** Systems behind each BMC: one number for all, or per BMC index. Default 1. */
  systems?: number | ((index: number) => number);
  /** Overrides the profile's ETag behaviour. */
  etag?: EtagMode | ((index: number) => EtagMode | undefined);
  credentials?: SimCredentials;
  timing?: Partial<SimTiming>;
  /** How a BMC is unreachable after Manager.Reset: dropped connections or 503. Default reset. */
  outage?: 'reset' | 'unavailable';
  /** Reuse TLS material (tests starting many simulators). */
  tls?: SimTls;
  now?: () => number;
}

export interface BmcSimulator {
  /** `https://127.0.0.1:<port>`. */
  url: string;
  /** PEM of the CA to pin. */
  ca: string;
  count: number;
  credentials: SimCredentials;
  /** Endpoint of BMC `i` for the client: `<url>/bmc/<i>`. */
  endpoint(i: number): string;
  bmc(i: number): SimBmc;
  /** Every server: its BMC index, System id and endpoint (`connectBmc({ systemId })`). */
  servers(): SimServer[];
  /** Per-server counters of flashes and settings writes, for exactly-once checks. */
  ledger(): ServerLedger[];
  close(): Promise<void>;
}

export type { ServerLedger, SimServer } from './ledger.js';
export { spread } from './ledger.js';

export const DEFAULT_SIM_CREDENTIALS: SimCredentials = { username: 'admin', password: 'sim-Secret-4711' };

const BMC_PATH = /^\/bmc\/(\d+)\/redfish\/v1(\/.*)?$/;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, reply: SimReply): void {
  const headers: Record<string, string> = { ...reply.headers };
  let payload: string | undefined;
  if (reply.text !== undefined) {
    payload = reply.text;
    headers['Content-Type'] = 'text/plain';
  } else if (reply.body !== undefined) {
    payload = JSON.stringify(reply.body);
    headers['Content-Type'] = 'application/json';
  }
  if (payload !== undefined) headers['Content-Length'] = String(Buffer.byteLength(payload));
  res.writeHead(reply.status, headers);
  res.end(payload);
}

class Simulator {
  readonly bmcs: SimBmc[];
  readonly creds: SimCredentials;
  readonly outage: 'reset' | 'unavailable';
  readonly sockets = new Set<Socket>();

  constructor(opts: BmcSimulatorOptions) {
    const timing = { ...DEFAULT_TIMING, ...opts.timing };
    const now = opts.now ?? Date.now;
    this.creds = opts.credentials ?? DEFAULT_SIM_CREDENTIALS;
    this.outage = opts.outage ?? 'reset';
    this.bmcs = Array.from({ length: opts.count ?? 1 }, (_, i) => {
      const name = typeof opts.profile === 'function' ? opts.profile(i) : (opts.profile ?? 'generic');
      const profile = SIM_PROFILES[name];
      const etag = (typeof opts.etag === 'function' ? opts.etag(i) : opts.etag) ?? profile.etag;
      const systems = typeof opts.systems === 'function' ? opts.systems(i) : (opts.systems ?? 1);
      return new SimBmc(i, profile, etag, timing, now, systems);
    });
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://sim');
    if (url.pathname === '/sim' || url.pathname.startsWith('/sim/')) {
      send(res, await this.control(req, url));
      return;
    }
    const m = BMC_PATH.exec(url.pathname);
    const bmc = m ? this.bmcs[Number(m[1])] : undefined;
    if (!m || !bmc) {
      send(res, fail(404, 'Base.1.12.ResourceMissingAtURI', 'No simulated BMC here'));
      return;
    }
    bmc.advance();
    bmc.counters.requests += 1;
    if (bmc.inOutage) {
      if (this.outage === 'reset') req.socket.destroy();
      else
        send(res, {
          ...fail(503, 'Base.1.12.ServiceTemporarilyUnavailable', 'BMC restarting'),
          headers: { 'Retry-After': '1' },
        });
      return;
    }
    const rel = (m[2] ?? '').replace(/\/+$/, '');
    const text = await readBody(req);
    const fault = bmc.faults.take(req.method ?? 'GET', rel);
    if (fault) {
      bmc.counters.faultsHit += 1;
      if (fault.kind === 'latency') await new Promise((r) => setTimeout(r, fault.ms ?? 1_000));
      else if (this.#fault(fault, req, res, text)) return;
    }
    send(res, this.#redfish(bmc, req, url, rel, text));
  }

  /** Applies a request fault; true when it answered (or dropped) the request. */
  #fault(fault: FaultSpec, req: IncomingMessage, res: ServerResponse, text: string): boolean {
    switch (fault.kind) {
      case 'hang':
        return true;
      case 'reset':
        req.socket.destroy();
        return true;
      case 'malformed':
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{"@odata.id": "/redfish/v1/Systems/1", "PowerState": "O');
        return true;
      case 'status': {
        const status = fault.status ?? 500;
        if (fault.body !== undefined) send(res, { status, text: fault.body });
        else {
          const detail = fault.echo ? ` (request was: ${text})` : '';
          send(res, fail(status, 'Base.1.12.InternalError', `Injected failure${detail}`));
        }
        return true;
      }
      default:
        return false;
    }
  }

  #redfish(bmc: SimBmc, req: IncomingMessage, url: URL, rel: string, text: string): SimReply {
    let body: unknown;
    if (text.trim() !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        return fail(400, 'Base.1.12.MalformedJSON', 'The request body is not valid JSON');
      }
    }
    const { routes, paths } = routesFor(
      bmc.profile,
      bmc.hosts.map((h) => h.systemId),
    );
    const sreq: SimRequest = {
      bmc,
      host: bmc.hosts[0]!,
      hp: paths.hosts[0]!,
      base: `/bmc/${bmc.index}/redfish/v1`,
      method: req.method ?? 'GET',
      rel,
      query: url.searchParams,
      headers: req.headers,
      body,
      paths,
    };
    if (!authorized(sreq, bmc, this.creds)) {
      bmc.counters.authFailures += 1;
      return {
        ...fail(
          401,
          'Base.1.12.NoValidSession',
          'There is no valid session established with the implementation.',
        ),
        headers: { 'WWW-Authenticate': 'Basic realm="simulated BMC"' },
      };
    }
    return sessionRoutes(sreq, this.creds) ?? route(sreq, routes);
  }

  async control(req: IncomingMessage, url: URL): Promise<SimReply> {
    if (url.pathname === '/sim') {
      return {
        status: 200,
        body: {
          count: this.bmcs.length,
          servers: this.bmcs.reduce((n, b) => n + b.hosts.length, 0),
          profiles: this.bmcs.map((b) => b.profile.name),
        },
      };
    }
    if (url.pathname === '/sim/ledger') return { status: 200, body: { servers: ledgerOf(this.bmcs) } };
    const m = /^\/sim\/bmc\/(\d+)(\/[a-z]+)?$/.exec(url.pathname);
    const bmc = m ? this.bmcs[Number(m[1])] : undefined;
    if (!bmc) return { status: 404, body: { error: 'no such simulated BMC' } };
    bmc.advance();
    const action = `${req.method} ${m![2] ?? ''}`;
    const text = req.method === 'POST' ? await readBody(req) : '';
    const input = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    const host = typeof input.system === 'string' ? bmc.host(input.system) : bmc.hosts[0];
    if (!host)
      return { status: 404, body: { error: `no System ${String(input.system)} behind BMC ${bmc.index}` } };
    return bmcControl(bmc, host, action, input);
  }
}

/** One control action on a BMC (and the System `host` behind it). */
function bmcControl(bmc: SimBmc, host: SimHost, action: string, input: Record<string, unknown>): SimReply {
  switch (action) {
    case 'GET ':
      return { status: 200, body: snapshot(bmc) };
    case 'POST /faults':
      return { status: 201, body: { id: bmc.faults.add(input as unknown as FaultSpec) } };
    case 'DELETE /faults':
      bmc.faults.clear();
      return { status: 204 };
    case 'POST /reboot':
      host.bmcInitiatedReboot();
      return { status: 202 };
    case 'POST /host':
      host.stuck = input.stuck === true;
      return { status: 204 };
    case 'POST /power':
      host.power = input.state === 'Off' ? 'Off' : 'On';
      bmc.bump(host.key('system'));
      return { status: 204 };
    default:
      return { status: 404, body: { error: `unknown control ${action}` } };
  }
}

/** State of one simulated BMC as the control API reports it. */
export function snapshot(bmc: SimBmc): object {
  return {
    index: bmc.index,
    profile: bmc.profile.name,
    etag: bmc.etagMode,
    power: bmc.power,
    hostStuck: bmc.hostStuck,
    boot: bmc.boot,
    bios: bmc.bios,
    managerAttributes: bmc.managerAttrs,
    media: bmc.media,
    firmware: { ...bmc.firmware, BIOS: bmc.hosts[0]!.biosVersion },
    systems: bmc.hosts.map((h) => ({
      id: h.systemId,
      power: h.power,
      biosVersion: h.biosVersion,
      stagedBiosVersion: h.stagedBiosVersion ?? null,
      bios: h.bios,
      ledger: h.ledger,
    })),
    ledger: bmc.ledger,
    counters: bmc.counters,
    faults: bmc.faults.list(),
  };
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const addr = server.address();
      resolve(typeof addr === 'object' && addr ? addr.port : port);
    });
  });
}

export async function startBmcSimulator(opts: BmcSimulatorOptions = {}): Promise<BmcSimulator> {
  const tls = opts.tls ?? generateTls();
  const sim = new Simulator(opts);
  const server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    sim.handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) send(res, fail(500, 'Base.1.12.InternalError', `simulator error: ${String(e)}`));
    });
  });
  server.keepAliveTimeout = 30_000;
  server.on('connection', (s: Socket) => {
    sim.sockets.add(s);
    s.on('close', () => sim.sockets.delete(s));
  });
  // A dropped TLS handshake (clients that distrust the CA) is expected in tests.
  server.on('tlsClientError', () => undefined);
  const port = await listen(server, opts.port ?? 0);
  const url = `https://127.0.0.1:${port}`;
  return {
    url,
    ca: tls.ca,
    count: sim.bmcs.length,
    credentials: sim.creds,
    endpoint: (i) => `${url}/bmc/${i}`,
    servers: () =>
      sim.bmcs.flatMap((b) =>
        b.hosts.map((h) => ({ bmc: b.index, system: h.systemId, endpoint: `${url}/bmc/${b.index}` })),
      ),
    ledger: () => {
      for (const b of sim.bmcs) b.advance();
      return ledgerOf(sim.bmcs);
    },
    bmc: (i) => {
      const b = sim.bmcs[i];
      if (!b) throw new Error(`no simulated BMC ${i}`);
      b.advance();
      return b;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sim.sockets) s.destroy();
      }),
  };
}
