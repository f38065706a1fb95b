// The client against the BMC simulator: transport, TLS, authentication and every injectable fault.
import { startBmcSimulator, type BmcSimulator } from '../../e2e/sim/bmc/server.js';
import { FAST_TIMING, captureLogger, openSimBmc, testTls } from '../../e2e/sim/bmc/testing.js';
import { isRedfishError, RedfishErrorCode, type RedfishError } from './errors.js';
import { RedfishClient } from './client.js';
import { connectBmc } from './bmc.js';
import { memberPaths } from './navigation.js';
import { powerState } from './power.js';
import { firmwareInventory } from './update.js';

let sim: BmcSimulator;

beforeAll(async () => {
  sim = await startBmcSimulator({ count: 16, tls: testTls(), timing: FAST_TIMING });
});
afterAll(() => sim.close());

async function caught(p: Promise<unknown>): Promise<RedfishError> {
  try {
    await p;
  } catch (e) {
    if (isRedfishError(e)) return e;
    throw e;
  }
  throw new Error('expected a RedfishError');
}

describe('transport and TLS', () => {
  it('refuses an https endpoint with neither a pinned CA nor an explicit insecure flag', () => {
    expect(() => new RedfishClient({ endpoint: sim.endpoint(0), credentials: sim.credentials })).toThrow(
      /tls.ca .* or tls.insecure/,
    );
  });

  it('fails TLS verification against a CA it was not given', async () => {
    const other = (await import('../../e2e/sim/bmc/tls.js')).generateTls();
    const e = await caught(
      connectBmc({ endpoint: sim.endpoint(0), tls: { ca: other.ca }, credentials: sim.credentials }),
    );
    expect(e.code).toBe(RedfishErrorCode.Connection);
    expect(e.details.tls).toBe(true);
  });

  it('connects with insecure=true only when asked', async () => {
    const bmc = await connectBmc({
      endpoint: sim.endpoint(1),
      tls: { insecure: true },
      credentials: sim.credentials,
    });
    expect(await powerState(bmc)).toBe('On');
    await bmc.close();
  });
});

describe('authentication', () => {
  it('opens a session, uses it, and deletes it on close', async () => {
    const before = { ...sim.bmc(2).counters };
    const bmc = await openSimBmc(sim, 2);
    expect(bmc.client.authKind).toBe('session');
    await powerState(bmc);
    await bmc.close();
    const after = sim.bmc(2).counters;
    expect(after.logins - before.logins).toBe(1);
    expect(after.logouts - before.logouts).toBe(1);
    expect(sim.bmc(2).sessions.size).toBe(0);
  });

  it('falls back to Basic when the session service is missing', async () => {
    const id = sim
      .bmc(3)
      .faults.add({ kind: 'status', status: 404, method: 'POST', path: '/SessionService/Sessions' });
    const bmc = await openSimBmc(sim, 3);
    expect(bmc.client.authKind).toBe('basic');
    expect(await powerState(bmc)).toBe('On');
    await bmc.close();
    expect(sim.bmc(3).counters.logins).toBe(0);
    expect(id).toBeGreaterThan(0);
    sim.bmc(3).faults.clear();
  });

  it('logs in again once when the BMC forgets the session', async () => {
    const bmc = await openSimBmc(sim, 4);
    sim.bmc(4).sessions.clear();
    expect(await powerState(bmc)).toBe('On');
    expect(sim.bmc(4).counters.logins).toBe(2);
    await bmc.close();
  });

  it('reports a refused login as AUTH without the password in the error or the log', async () => {
    const password = 'Wr0ng-S3cret-Pa55';
    // The BMC echoes the login request (and so the password) into its error text.
    sim.bmc(5).faults.add({ kind: 'status', status: 401, echo: true, path: '/SessionService/Sessions' });
    const { logger, text } = captureLogger();
    const e = await caught(
      connectBmc({
        endpoint: sim.endpoint(5),
        tls: { ca: sim.ca },
        credentials: { username: 'admin', password },
        logger,
      }),
    );
    logger.error({ err: e, details: e.details }, 'connect failed');
    expect(e.code).toBe(RedfishErrorCode.Auth);
    const everything = [e.message, JSON.stringify(e.details), String(e.stack), text()].join('\n');
    expect(everything).toContain('[redacted]');
    expect(everything).not.toContain(password);
    expect(everything).not.toContain(Buffer.from(`admin:${password}`).toString('base64'));
    sim.bmc(5).faults.clear();
  });

  it('reports wrong Basic credentials as AUTH after one failed re-login', async () => {
    const password = 'An0ther-Wr0ng-One';
    const { logger, text } = captureLogger();
    const e = await caught(
      connectBmc({
        endpoint: sim.endpoint(6),
        tls: { ca: sim.ca },
        credentials: { username: 'admin', password },
        auth: 'basic',
        logger,
      }),
    );
    expect(e.code).toBe(RedfishErrorCode.Auth);
    expect(e.status).toBe(401);
    expect(`${e.message}${JSON.stringify(e.details)}${text()}`).not.toContain(password);
  });
});

describe('faults', () => {
  let i = 7;
  const next = (): number => i++;

  it('waits out latency within the call timeout', async () => {
    const n = next();
    const bmc = await openSimBmc(sim, n);
    sim.bmc(n).faults.add({ kind: 'latency', ms: 150, times: 1, path: '/Systems/1' });
    const started = Date.now();
    expect(await powerState(bmc)).toBe('On');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    await bmc.close();
  });

  it('gives up on a hung BMC with TIMEOUT at the call deadline', async () => {
    const n = next();
    const bmc = await openSimBmc(sim, n, { timeoutMs: 300, readAttempts: 1 });
    sim.bmc(n).faults.add({ kind: 'hang', path: '/Systems/1' });
    const started = Date.now();
    const e = await caught(powerState(bmc));
    expect(e.code).toBe(RedfishErrorCode.Timeout);
    expect(Date.now() - started).toBeLessThan(1_500);
    sim.bmc(n).faults.clear();
    await bmc.close();
  });

  it("ends a hung call with ABORTED when the caller's signal fires, and refuses one already aborted", async () => {
    const n = next();
    const bmc = await openSimBmc(sim, n, { timeoutMs: 10_000, readAttempts: 1 });
    await powerState(bmc); // logged in: the hang below is the call itself, not the login
    sim.bmc(n).faults.add({ kind: 'hang', path: '/Systems/1' });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const started = Date.now();
    const e = await caught(bmc.client.get(bmc.systemPath, { signal: ac.signal }));
    expect(e.code).toBe(RedfishErrorCode.Aborted);
    expect(Date.now() - started).toBeLessThan(2_000);
    const before = sim.bmc(n).counters.requests;
    const again = await caught(bmc.client.get(bmc.systemPath, { signal: AbortSignal.abort() }));
    expect(again.code).toBe(RedfishErrorCode.Aborted);
    expect(sim.bmc(n).counters.requests).toBe(before);
    sim.bmc(n).faults.clear();
    await bmc.close();
  });

  it('retries a read through transient 503s, but not past its attempt budget', async () => {
    const n = next();
    const bmc = await openSimBmc(sim, n, { readAttempts: 3 });
    sim.bmc(n).faults.add({ kind: 'status', status: 503, times: 2, path: '/Systems/1', method: 'GET' });
    expect(await powerState(bmc)).toBe('On');
    sim.bmc(n).faults.add({ kind: 'status', status: 503, times: 3, path: '/Systems/1', method: 'GET' });
    const e = await caught(powerState(bmc));
    expect(e.code).toBe(RedfishErrorCode.Http);
    expect(e.status).toBe(503);
    await bmc.close();
  });

  it('does not retry a failed write, and parses its Redfish error body', async () => {
    const n = next();
    const bmc = await openSimBmc(sim, n);
    sim.bmc(n).faults.add({ kind: 'status', status: 500, times: 1, method: 'PATCH' });
    const e = await caught(bmc.client.patch(bmc.systemPath, { Boot: { BootSourceOverrideTarget: 'Pxe' } }));
    expect(e.status).toBe(500);
    expect(e.details.redfishCode).toBe('Base.1.12.InternalError');
    expect(e.message).toContain('Injected failure');
    expect(sim.bmc(n).counters.bootPatches).toBe(0);
    await bmc.close();
  });

  it('keeps a plain-text error body as the message', async () => {
    const n = next();
    const bmc = await openSimBmc(sim, n);
    sim.bmc(n).faults.add({ kind: 'status', status: 400, body: 'Boot override refused by policy', times: 1 });
    const e = await caught(bmc.client.patch(bmc.systemPath, {}));
    expect(e.message).toMatch(/HTTP 400: Boot override refused by policy$/);
    await bmc.close();
  });

  it('reports a body that is not JSON as MALFORMED', async () => {
    const n = next();
    const bmc = await openSimBmc(sim, n);
    sim.bmc(n).faults.add({ kind: 'malformed', times: 1, path: '/Systems/1' });
    const e = await caught(powerState(bmc));
    expect(e.code).toBe(RedfishErrorCode.Malformed);
    await bmc.close();
  });

  it('reports dropped connections as CONNECTION once retries are spent', async () => {
    const n = next();
    const bmc = await openSimBmc(sim, n, { readAttempts: 2 });
    sim.bmc(n).faults.add({ kind: 'reset', path: '/Systems/1' });
    const e = await caught(powerState(bmc));
    expect(e.code).toBe(RedfishErrorCode.Connection);
    sim.bmc(n).faults.clear();
    expect(await powerState(bmc)).toBe('On');
    await bmc.close();
  });
});

describe('navigation', () => {
  it('follows Members@odata.nextLink across pages', async () => {
    const bmc = await openSimBmc(sim, 15);
    const paths = await memberPaths(bmc.client, '/bmc/15/redfish/v1/UpdateService/FirmwareInventory');
    expect(paths.map((p) => p.split('/').pop())).toEqual(['BIOS', 'BMC', 'NIC']);
    const inventory = await firmwareInventory(bmc);
    expect(inventory.find((f) => f.id === 'BMC')?.version).toBe('5.10.0');
    await bmc.close();
  });
});
