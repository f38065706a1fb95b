// The BMC simulator itself: scale, the HTTP control API, and the CLI entry.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { REPO_ROOT } from '../../peers/process.js';
import { startBmcSimulator, type BmcSimulator } from './server.js';
import { FAST_TIMING, testTls } from './testing.js';

let sim: BmcSimulator;
let agent: Agent;

beforeAll(async () => {
  sim = await startBmcSimulator({
    count: 1000,
    tls: testTls(),
    timing: FAST_TIMING,
    profile: (i) => (i % 2 ? 'dell' : 'generic'),
  });
  agent = new Agent({ connect: { ca: sim.ca }, connections: 8 });
});
afterAll(async () => {
  await agent.close();
  await sim.close();
});

async function call(
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  auth = false,
): Promise<{ status: number; json: Record<string, unknown> & { [k: string]: unknown } }> {
  const headers: Record<string, string> = body ? { 'content-type': 'application/json' } : {};
  if (auth)
    headers.authorization =
      'Basic ' + Buffer.from(`${sim.credentials.username}:${sim.credentials.password}`).toString('base64');
  const res = await request(sim.url + path, {
    method,
    dispatcher: agent,
    headers,
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

describe('BMC simulator', () => {
  it('serves 1000 BMCs on one port, each with its own identity and profile', async () => {
    const ids = [0, 1, 499, 998, 999];
    const roots = await Promise.all(ids.map((i) => call('GET', `/bmc/${i}/redfish/v1/`)));
    expect(roots.map((r) => r.json.Name as string)).toEqual(ids.map((i) => `Simulated BMC ${i}`));
    expect(roots.map((r) => r.json.Vendor as string)).toEqual([
      'Contoso',
      'Dell Inc.',
      'Dell Inc.',
      'Contoso',
      'Dell Inc.',
    ]);
    expect((await call('GET', '/bmc/1000/redfish/v1/')).status).toBe(404);
    expect((await call('GET', '/sim')).json.count).toBe(1000);
  });

  it('requires auth everywhere but the service root', async () => {
    expect((await call('GET', '/bmc/3/redfish/v1/Systems/System.Embedded.1')).status).toBe(401);
    expect((await call('GET', '/bmc/3/redfish/v1/Systems/System.Embedded.1', undefined, true)).status).toBe(
      200,
    );
    expect(sim.bmc(3).counters.authFailures).toBe(1);
  });

  it('arms and clears faults through the control API', async () => {
    const armed = await call('POST', '/sim/bmc/10/faults', {
      kind: 'status',
      status: 503,
      times: 1,
      path: '/Systems',
    });
    expect(armed.status).toBe(201);
    expect((await call('GET', '/bmc/10/redfish/v1/Systems/1', undefined, true)).status).toBe(503);
    expect((await call('GET', '/bmc/10/redfish/v1/Systems/1', undefined, true)).status).toBe(200);
    await call('POST', '/sim/bmc/10/faults', { kind: 'malformed' });
    expect((await call('GET', '/sim/bmc/10')).json.faults).toHaveLength(1);
    expect((await call('DELETE', '/sim/bmc/10/faults')).status).toBe(204);
    expect((await call('GET', '/sim/bmc/10')).json.counters).toMatchObject({ faultsHit: 1 });
  });

  it('starts a BMC-initiated reboot from the control API, visible in its boot log', async () => {
    expect((await call('POST', '/sim/bmc/12/reboot')).status).toBe(202);
    await new Promise((r) => setTimeout(r, 80));
    const state = (await call('GET', '/sim/bmc/12')).json;
    expect(state.power).toBe('On');
    expect((state.counters as { bootLog: unknown }).bootLog).toEqual([
      expect.objectContaining({ cause: 'bmc', device: 'Hdd' }),
    ]);
  });

  it('a stuck host never comes back on: a restart ends in Off with no boot', async () => {
    expect((await call('POST', '/sim/bmc/16/host', { stuck: true })).status).toBe(204);
    const target = '/bmc/16/redfish/v1/Systems/1/Actions/ComputerSystem.Reset';
    expect((await call('POST', target, { ResetType: 'ForceRestart' }, true)).status).toBe(204);
    await new Promise((r) => setTimeout(r, (FAST_TIMING.restartMs ?? 0) + 40));
    const state = (await call('GET', '/sim/bmc/16')).json;
    expect(state).toMatchObject({ power: 'Off', hostStuck: true });
    expect((state.counters as { bootLog: unknown[] }).bootLog).toEqual([]);
    expect((await call('POST', '/sim/bmc/16/host', { stuck: false })).status).toBe(204);
    expect((await call('POST', target, { ResetType: 'On' }, true)).status).toBe(204);
    await new Promise((r) => setTimeout(r, (FAST_TIMING.powerOnMs ?? 0) + 40));
    expect((await call('GET', '/sim/bmc/16')).json.power).toBe('On');
  });

  it('drops connections during the outage after Manager.Reset, then answers again', async () => {
    const target = '/bmc/14/redfish/v1/Managers/BMC/Actions/Manager.Reset';
    expect((await call('POST', target, { ResetType: 'GracefulRestart' }, true)).status).toBe(204);
    await expect(call('GET', '/bmc/14/redfish/v1/', undefined)).rejects.toThrow();
    await new Promise((r) => setTimeout(r, (FAST_TIMING.managerResetOutageMs ?? 0) + 50));
    expect((await call('GET', '/bmc/14/redfish/v1/')).status).toBe(200);
  });

  it('CLI: prints its URL first, then serves until SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [
        join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs'),
        join(REPO_ROOT, 'e2e/sim/bmc/main.ts'),
        '--count',
        '5',
        '--port',
        '0',
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const out = await new Promise<string>((resolve, reject) => {
      let buf = '';
      child.stdout.on('data', (b: Buffer) => {
        buf += b.toString();
        if (buf.split('\n').length > 2) resolve(buf);
      });
      child.once('exit', () => reject(new Error(`CLI exited early: ${buf}`)));
    });
    const [url, json] = out.split('\n');
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const info = JSON.parse(json!);
    expect(info).toMatchObject({ url, count: 5 });
    const cli = new Agent({ connect: { ca: info.ca } });
    const res = await request(`${url}/bmc/4/redfish/v1/`, { dispatcher: cli });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    await cli.close();
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 30_000);
});
