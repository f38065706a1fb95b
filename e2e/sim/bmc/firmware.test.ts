// The simulator's firmware features through the real client: several Systems behind one BMC,
// BIOS images active only after a reset, BMC images after the BMC's own restart (an outage),
// tasks that fail and stall, and the exactly-once ledger per server.
import { biosVersion, bmcVersion, simpleUpdate } from '../../../lib/redfish/update.js';
import { readBios, setBiosAttributes } from '../../../lib/redfish/bios.js';
import { RedfishErrorCode } from '../../../lib/redfish/errors.js';
import { waitForManager } from '../../../lib/redfish/manager.js';
import { restart } from '../../../lib/redfish/power.js';
import { waitForTask } from '../../../lib/redfish/tasks.js';
import { Agent, request } from 'undici';
import { spread, startBmcSimulator, type BmcSimulator } from './server.js';
import { FAST_TIMING, FAST_WAIT, openSimBmc, testTls } from './testing.js';

let sim: BmcSimulator;
beforeAll(async () => {
  sim = await startBmcSimulator({
    count: 4,
    systems: 3,
    tls: testTls(),
    timing: FAST_TIMING,
    profile: (i) => (i === 3 ? 'dell' : 'generic'),
  });
});
afterAll(() => sim.close());

const IMAGE = 'http://127.0.0.1:8099/fw/';

describe('several Systems behind one BMC', () => {
  it('lists every System, each with its own state, and the ledger names each server', async () => {
    expect(
      sim
        .servers()
        .filter((s) => s.bmc === 0)
        .map((s) => s.system),
    ).toEqual(['1', '2', '3']);
    expect(
      sim
        .servers()
        .filter((s) => s.bmc === 3)
        .map((s) => s.system),
    ).toEqual(['System.Embedded.1', 'System.Embedded.2', 'System.Embedded.3']);
    const second = await openSimBmc(sim, 0, { systemId: '2' });
    expect(second.systemPath).toBe('/bmc/0/redfish/v1/Systems/2');
    await setBiosAttributes(second, { ProcTurboMode: 'Disabled' });
    expect((await readBios(second)).pending).toEqual({ ProcTurboMode: 'Disabled' });
    const first = await openSimBmc(sim, 0);
    expect((await readBios(first)).pending).toEqual({});
    await restart(second, FAST_WAIT);
    expect((await readBios(second)).current.ProcTurboMode).toBe('Disabled');
    expect(sim.bmc(0).hosts[0]!.ledger.resets).toBe(0);
    const ledger = sim.ledger().filter((l) => l.bmc === 0);
    expect(ledger.map((l) => [l.system, l.biosSettingsWrites, l.biosSettingsApplied])).toEqual([
      ['1', 0, 0],
      ['2', 1, 1],
      ['3', 0, 0],
    ]);
    await Promise.all([first.close(), second.close()]);
  });

  it('a BIOS image flashed for one System is active after its reset, exactly once', async () => {
    const bmc = await openSimBmc(sim, 1, { systemId: '3' });
    const task = await simpleUpdate(bmc, { imageUri: `${IMAGE}bios-2.0.0.bin`, targets: [bmc.systemPath] });
    const result = await waitForTask(bmc.client, task!, FAST_WAIT);
    expect(result).toMatchObject({ state: 'Completed', status: 'OK' });
    // Flashed but not active until the host restarts.
    expect(await biosVersion(bmc)).toEqual({ version: '1.0.0', source: 'System.BiosVersion' });
    await restart(bmc, FAST_WAIT);
    expect((await biosVersion(bmc)).version).toBe('bios-2.0.0.bin');
    const rows = sim.ledger().filter((l) => l.bmc === 1);
    expect(rows.map((l) => [l.system, l.biosUpdatesStarted, l.biosFlashes, l.biosVersion])).toEqual([
      ['1', 0, 0, '1.0.0'],
      ['2', 0, 0, '1.0.0'],
      ['3', 1, 1, 'bios-2.0.0.bin'],
    ]);
    await bmc.close();
  });

  it('a BMC image: the BMC restarts itself, is away, then reports the version; counted once per BMC', async () => {
    const bmc = await openSimBmc(sim, 2);
    const task = await simpleUpdate(bmc, {
      imageUri: `${IMAGE}bmc-7.1.0.bin`,
      targets: ['/bmc/2/redfish/v1/UpdateService/FirmwareInventory/BMC'],
      credentials: { username: 'fw', password: 'image-server-Secret' },
    });
    // The monitor is unreachable while the BMC restarts; the wait rides that out.
    await waitForTask(bmc.client, task!, FAST_WAIT);
    await waitForManager(bmc, FAST_WAIT);
    expect(await bmcVersion(bmc)).toEqual({ version: 'bmc-7.1.0.bin', source: 'Manager.FirmwareVersion' });
    const rows = sim.ledger().filter((l) => l.bmc === 2);
    expect(rows).toHaveLength(3);
    expect(rows.every((l) => l.bmcLedger.bmcFlashes === 1 && l.bmcVersion === 'bmc-7.1.0.bin')).toBe(true);
    await bmc.close();
  });

  it('images named fail end in TASK_FAILED; images named stall time out, reporting the whole timeout', async () => {
    const bmc = await openSimBmc(sim, 3, { systemId: 'System.Embedded.2' });
    const failed = await simpleUpdate(bmc, { imageUri: `${IMAGE}bios-fail.bin`, targets: [bmc.systemPath] });
    await expect(waitForTask(bmc.client, failed!, FAST_WAIT)).rejects.toMatchObject({
      code: RedfishErrorCode.TaskFailed,
    });
    const stalled = await simpleUpdate(bmc, {
      imageUri: `${IMAGE}bios-stall.bin`,
      targets: [bmc.systemPath],
    });
    await expect(waitForTask(bmc.client, stalled!, { timeoutMs: 250, pollMs: 40 })).rejects.toMatchObject({
      code: RedfishErrorCode.Timeout,
      message: expect.stringContaining('not finished after 250 ms (last state Running, 50 %)'),
      details: { timeoutMs: 250 },
    });
    const row = sim.ledger().find((l) => l.bmc === 3 && l.system === 'System.Embedded.2')!;
    expect([row.biosUpdatesStarted, row.biosFlashes]).toEqual([2, 0]);
    await bmc.close();
  });

  it('control API: a BMC-initiated reboot of one System, and the ledger over HTTP', async () => {
    const agent = new Agent({ connect: { ca: sim.ca } });
    try {
      const post = await request(`${sim.url}/sim/bmc/0/reboot`, {
        method: 'POST',
        dispatcher: agent,
        body: JSON.stringify({ system: '3' }),
      });
      expect(post.statusCode).toBe(202);
      await post.body.dump();
      const res = await request(`${sim.url}/sim/ledger`, { dispatcher: agent });
      const { servers } = (await res.body.json()) as {
        servers: { bmc: number; system: string; bmcReboots: number }[];
      };
      expect(servers).toHaveLength(12);
      expect(servers.filter((l) => l.bmcReboots > 0).map((l) => [l.bmc, l.system])).toEqual([[0, '3']]);
      const unknown = await request(`${sim.url}/sim/bmc/0/reboot`, {
        method: 'POST',
        dispatcher: agent,
        body: JSON.stringify({ system: '9' }),
      });
      expect(unknown.statusCode).toBe(404);
      await unknown.body.dump();
    } finally {
      await agent.close();
    }
  });

  it('spreads 1,000 servers over 400 BMCs evenly', () => {
    const per = spread(1000, 400);
    const counts = Array.from({ length: 400 }, (_, i) => per(i));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(1000);
    expect(new Set(counts)).toEqual(new Set([2, 3]));
  });
});
