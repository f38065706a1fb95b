// Standard (and not so standard) Redfish payloads the client must survive: each case here broke
// an earlier version (a TypeError, a silent drop, a 2xx taken as done, an ETag from the wrong
// resource), and each test fails against that version.
import { startBmcSimulator, type BmcSimulator } from '../../e2e/sim/bmc/server.js';
import type { SimProfileName } from '../../e2e/sim/bmc/profiles.js';
import { startProfileSim, FAST_TIMING, openSimBmc, testTls } from '../../e2e/sim/bmc/testing.js';
import { readBios, setBiosAttributes } from './bios.js';
import { RedfishErrorCode } from './errors.js';
import { setManagerAttributes } from './manager.js';
import { pickMember } from './navigation.js';
import { chooseApplyTime, writeEtag, type SettingsState } from './settings.js';
import { simpleUpdate, waitForTask } from './index.js';
import { findVirtualMedia, insertMedia } from './virtual-media.js';

const PROFILES: SimProfileName[] = ['generic', 'hpe', 'ami'];
const PER = 6;
let sim: BmcSimulator;
let idx: (p: SimProfileName, k: number) => number;
beforeAll(async () => {
  ({ sim, idx } = await startProfileSim(PROFILES, PER));
});
afterAll(() => sim.close());
const IMAGE = 'http://127.0.0.1:8099/images/maintenance.iso';
/** Serve `body` for GETs of `path` on BMC `n` (a payload the simulator would not produce). */
function serve(n: number, path: string, body: unknown, times = 10): void {
  sim
    .bmc(n)
    .faults.add({ kind: 'status', status: 200, method: 'GET', path, body: JSON.stringify(body), times });
}

describe('collection members and media types', () => {
  it('skips a member without @odata.id; a collection of only such members is a coded refusal', async () => {
    const n = idx('generic', 0);
    const bmc = await openSimBmc(sim, n);
    const base = '/bmc/0/redfish/v1';
    serve(n, '/Systems', { Members: [{}, { '@odata.id': 42 }, { '@odata.id': `${base}/Systems/1` }] }, 1);
    expect(await pickMember(bmc.client, bmc.root, 'Systems')).toBe(`${base}/Systems/1`);
    serve(n, '/Systems', { Members: [{ Name: 'no id' }, null] }, 1);
    await expect(pickMember(bmc.client, bmc.root, 'Systems')).rejects.toMatchObject({
      code: RedfishErrorCode.Unsupported,
      message: expect.stringContaining('listed: none with an @odata.id'),
    });
    await bmc.close();
  });

  it('accepts MediaTypes sent as one string', async () => {
    const n = idx('generic', 1);
    const bmc = await openSimBmc(sim, n);
    const cd = `/bmc/${n}/redfish/v1/Systems/1/VirtualMedia/CD1`;
    serve(n, '/Systems/1/VirtualMedia/CD1', { '@odata.id': cd, MediaTypes: 'DVD', Inserted: false }, 1);
    expect((await findVirtualMedia(bmc, 'CD')).path).toBe(cd);
    await bmc.close();
  });
});

describe('ETags of settings objects', () => {
  const state = (over: Partial<SettingsState>): SettingsState => ({
    path: '/Bios',
    writePath: '/Bios/Settings',
    current: {},
    pending: {},
    settingsReadable: true,
    ...over,
  });

  it("sends the settings object's own ETag as received, never the annotation's", () => {
    expect(writeEtag(state({ settingsEtag: 'W/"settings-3"', appliedEtag: '"bios-7"' }))).toBe(
      'W/"settings-3"',
    );
    // The annotation's ETag is the Bios's after the last apply: not a precondition of the settings object.
    expect(writeEtag(state({ appliedEtag: '"bios-7"' }))).toBeUndefined();
  });

  it('guards a write-only settings object with the ETag of the resource it applies to', () => {
    expect(writeEtag(state({ settingsReadable: false, etag: '"bios-8"', appliedEtag: '"bios-7"' }))).toBe(
      '"bios-8"',
    );
    expect(writeEtag(state({ settingsReadable: false, appliedEtag: '"bios-7"' }))).toBe('"bios-7"');
  });

  it('AMI: the write-only SD object takes the Bios ETag on the first PATCH', async () => {
    const n = idx('ami', 0);
    const bmc = await openSimBmc(sim, n);
    const res = await setBiosAttributes(bmc, { AdminPhone: '555-0199' }, { applyTime: 'OnReset' });
    expect(res.confirmed).toBe(false); // SD cannot be read back: verified after the reset
    const c = sim.bmc(n).counters;
    expect([c.preconditionFailed, c.preconditionRequired, c.biosPatches]).toEqual([0, 0, 1]);
    await bmc.close();
  });
});

describe('apply times', () => {
  it('an apply time the BMC does not offer falls back to OnReset, then Immediate, and says so', () => {
    const s = { writePath: '/x/Settings', applyTimes: ['Immediate', 'AtMaintenanceWindowStart'] };
    expect(chooseApplyTime(s, { applyTime: 'OnReset' })).toEqual({
      applyTime: 'Immediate',
      fallback: expect.objectContaining({ requested: 'OnReset', used: 'Immediate' }),
    });
    expect(() =>
      chooseApplyTime(
        { writePath: '/x', applyTimes: ['AtMaintenanceWindowStart'] },
        { applyTime: 'Immediate' },
      ),
    ).toThrow(/not supported by \/x, nor a fallback/);
  });

  it('a BMC that lists none: nothing is sent, and a request other than OnReset is reported', () => {
    expect(chooseApplyTime({ writePath: '/x' }, { applyTime: 'OnReset' })).toEqual({});
    expect(chooseApplyTime({ writePath: '/x' }, { applyTime: 'Immediate' }).fallback?.reason).toMatch(
      /lists no SupportedApplyTimes: sent none, so the values apply at the next reset/,
    );
  });
});

describe('a 2xx is not proof', () => {
  it('InsertMedia answered 204 but nothing inserted: NOT_APPLIED after the caller’s timeout', async () => {
    const n = idx('generic', 2);
    const bmc = await openSimBmc(sim, n);
    sim.bmc(n).faults.add({ kind: 'ignore', method: 'POST', path: 'InsertMedia', times: 1 });
    await expect(insertMedia(bmc, IMAGE, { timeoutMs: 200, pollMs: 40 })).rejects.toMatchObject({
      code: RedfishErrorCode.NotApplied,
      message: expect.stringContaining('still shows Inserted false, Image null after 200 ms'),
    });
    expect(sim.bmc(n).counters.mediaInserts).toBe(0);
    await bmc.close();
  });

  it('a BIOS PATCH answered 204 that the settings object does not show: NOT_APPLIED', async () => {
    const n = idx('generic', 3);
    const bmc = await openSimBmc(sim, n);
    sim.bmc(n).faults.add({ kind: 'ignore', method: 'PATCH', path: 'Bios/Settings', times: 1 });
    await expect(
      setBiosAttributes(bmc, { ProcTurboMode: 'Disabled' }, { confirm: { timeoutMs: 150, pollMs: 30 } }),
    ).rejects.toMatchObject({ code: RedfishErrorCode.NotApplied });
    // Sent again, it shows, and is confirmed.
    const res = await setBiosAttributes(bmc, { ProcTurboMode: 'Disabled' });
    expect(res.confirmed).toBe(true);
    expect((await readBios(bmc)).pending).toEqual({ ProcTurboMode: 'Disabled' });
    await bmc.close();
  });
});

describe('InsertMedia @Redfish.ActionInfo', () => {
  it('sends the parameters the ActionInfo requires from the first try', async () => {
    const n = idx('ami', 1);
    // Without the vendor profile the ladder would start bare and be refused once.
    const bmc = await openSimBmc(sim, n, { vendor: 'generic' });
    expect(await insertMedia(bmc, IMAGE)).toMatchObject({ changed: true, rung: 0 });
    expect(sim.bmc(n).counters.mediaInsertRejects).toBe(0);
    await bmc.close();
  });

  it('refuses a transfer protocol the ActionInfo does not allow, before sending anything', async () => {
    const n = idx('ami', 2);
    const bmc = await openSimBmc(sim, n);
    await expect(insertMedia(bmc, 'ftp://127.0.0.1/x.iso')).rejects.toMatchObject({
      code: RedfishErrorCode.Unsupported,
      message: expect.stringContaining('TransferProtocolType FTP (allowed: HTTP, HTTPS, NFS)'),
    });
    expect(sim.bmc(n).counters.mediaInsertRejects).toBe(0);
    await bmc.close();
  });
});

describe('service root, Manager attributes, waits', () => {
  it('reads the task service link under its schema name, Tasks', async () => {
    const bmc = await openSimBmc(sim, idx('generic', 4));
    expect(bmc.root.Tasks?.['@odata.id']).toMatch(/\/TaskService$/);
    expect((bmc.root as Record<string, unknown>).TaskService).toBeUndefined();
    await bmc.close();
  });

  it('HPE: a Manager without attributes is a coded refusal that says where the settings live', async () => {
    const n = idx('hpe', 0);
    const bmc = await openSimBmc(sim, n);
    await expect(setManagerAttributes(bmc, { 'NTP.1.Server': 'ntp.example' })).rejects.toMatchObject({
      code: RedfishErrorCode.Unsupported,
      details: { reason: 'no-manager-attributes', vendor: 'hpe' },
      message: expect.stringContaining('NetworkProtocol'),
    });
    expect(sim.bmc(n).counters.managerPatches).toBe(0);
    await bmc.close();
  });

  it('unknown and read-only BIOS attributes are refused up front, each named', async () => {
    const n = idx('generic', 5);
    const bmc = await openSimBmc(sim, n);
    await expect(
      setBiosAttributes(bmc, { SerialNumber: 'x', Bogus: 1, AdminPhone: 'ok' }, { registry: 'fetch' }),
    ).rejects.toMatchObject({
      code: RedfishErrorCode.Invalid,
      details: { attributes: ['SerialNumber', 'Bogus'] },
    });
    expect(sim.bmc(n).counters.biosPatches).toBe(0);
    await bmc.close();
  });

  it('a monitor unreachable until the deadline ends in TIMEOUT with the whole timeout', async () => {
    const n = idx('generic', 5);
    const bmc = await openSimBmc(sim, n, { readAttempts: 1 });
    const task = await simpleUpdate(bmc, { imageUri: 'http://127.0.0.1:8099/fw/bios-stall.bin' });
    sim.bmc(n).faults.add({ kind: 'reset', path: '/TaskService/TaskMonitors/' });
    await expect(waitForTask(bmc.client, task!, { timeoutMs: 300, pollMs: 40 })).rejects.toMatchObject({
      code: RedfishErrorCode.Timeout,
      message: expect.stringMatching(/not finished after 300 ms .*the monitor is unreachable/),
    });
    sim.bmc(n).faults.clear();
    await bmc.close();
  });
});

describe('the whole timeout', () => {
  it('setPower Off reports its whole timeout when neither the graceful nor the forced attempt lands', async () => {
    const slow = await startBmcSimulator({
      tls: testTls(),
      timing: { ...FAST_TIMING, gracefulShutdownMs: 60_000, forceOffMs: 60_000 },
    });
    try {
      const bmc = await openSimBmc(slow, 0);
      const { setPower } = await import('./power.js');
      await expect(setPower(bmc, 'Off', { timeoutMs: 400, graceMs: 150, pollMs: 30 })).rejects.toMatchObject({
        code: RedfishErrorCode.Timeout,
        message: expect.stringContaining('did not become Off within 400 ms'),
        details: { timeoutMs: 400 },
      });
      expect(slow.bmc(0).counters.resets).toEqual({ GracefulShutdown: 1, ForceOff: 1 });
      await bmc.close();
    } finally {
      await slow.close();
    }
  });
});
