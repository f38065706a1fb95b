// Virtual media, BIOS and BMC settings, firmware update and BMC reset against the simulator.
import type { BmcSimulator } from '../../e2e/sim/bmc/server.js';
import type { SimProfileName } from '../../e2e/sim/bmc/profiles.js';
import { FAST_WAIT, openSimBmc, startProfileSim } from '../../e2e/sim/bmc/testing.js';
import { readBios, setBiosAttributes } from './bios.js';
import { fetchRegistry, readOnlyAmong } from './registry.js';
import { RedfishErrorCode } from './errors.js';
import { readManagerAttributes, resetManager, setManagerAttributes, waitForManager } from './manager.js';
import { powerState, restart } from './power.js';
import { waitForTask } from './tasks.js';
import { bmcVersion, firmwareInventory, simpleUpdate } from './update.js';
import { ejectMedia, insertMedia } from './virtual-media.js';

const PROFILES: SimProfileName[] = ['generic', 'dell', 'hpe', 'lenovo', 'supermicro', 'ami'];
let sim: BmcSimulator;
const PER = 4;

let idx: (p: SimProfileName, k: number) => number;
beforeAll(async () => {
  ({ sim, idx } = await startProfileSim(PROFILES, PER));
});
afterAll(() => sim.close());

const IMAGE = 'http://127.0.0.1:8099/images/maintenance.iso';

describe('virtual media', () => {
  it.each(PROFILES)('%s: inserts once, is idempotent, ejects', async (profile) => {
    const n = idx(profile, 0);
    const bmc = await openSimBmc(sim, n);
    const first = await insertMedia(bmc, IMAGE);
    expect(first.changed).toBe(true);
    expect(first.path).toContain(
      profile === 'generic' || profile === 'lenovo' || profile === 'ami' ? '/Systems/' : '/Managers/',
    );
    expect((await insertMedia(bmc, IMAGE)).changed).toBe(false);
    await restart(bmc, FAST_WAIT);
    expect(sim.bmc(n).counters.bootLog[0]?.media).toBe(IMAGE);
    expect((await ejectMedia(bmc)).changed).toBe(true);
    expect((await ejectMedia(bmc)).changed).toBe(false);
    const c = sim.bmc(n).counters;
    expect([c.mediaInserts, c.mediaEjects]).toEqual([1, 1]);
    await bmc.close();
  });

  it('Supermicro: climbs the retry ladder until the picky BMC accepts', async () => {
    const n = idx('supermicro', 1);
    // Start the ladder at the bottom, as a client without the vendor profile would.
    const bmc = await openSimBmc(sim, n, { vendor: 'generic' });
    const res = await insertMedia(bmc, IMAGE);
    expect(res.changed).toBe(true);
    expect(res.rung).toBe(1);
    expect(sim.bmc(n).counters.mediaInsertRejects).toBe(1);
    await bmc.close();
    // With the profile it omits the flags and sends TransferProtocolType from the start.
    const tuned = await openSimBmc(sim, idx('supermicro', 2));
    await insertMedia(tuned, IMAGE);
    expect(sim.bmc(idx('supermicro', 2)).counters.mediaInsertRejects).toBe(0);
    await tuned.close();
  });

  it('HPE: eject is retried with an empty JSON object', async () => {
    const n = idx('hpe', 1);
    const bmc = await openSimBmc(sim, n, { vendor: 'generic' });
    await insertMedia(bmc, IMAGE);
    expect((await ejectMedia(bmc)).changed).toBe(true);
    expect(sim.bmc(n).media[0]!.inserted).toBe(false);
    await bmc.close();
  });

  it('replaces a different image by ejecting it first', async () => {
    const n = idx('generic', 1);
    const bmc = await openSimBmc(sim, n);
    await insertMedia(bmc, IMAGE);
    await insertMedia(bmc, `${IMAGE}.v2`);
    expect(sim.bmc(n).media[0]!.image).toBe(`${IMAGE}.v2`);
    expect([sim.bmc(n).counters.mediaInserts, sim.bmc(n).counters.mediaEjects]).toEqual([2, 1]);
    await bmc.close();
  });
});

describe('BIOS settings', () => {
  it.each(['generic', 'hpe', 'lenovo', 'ami'] as const)(
    '%s: pending until the next reset, applied exactly once',
    async (profile) => {
      const n = idx(profile, 2);
      const bmc = await openSimBmc(sim, n);
      const res = await setBiosAttributes(
        bmc,
        { ProcTurboMode: 'Disabled', NumaNodes: 4 },
        { applyTime: 'OnReset' },
      );
      expect(res.changed).toEqual({ ProcTurboMode: 'Disabled', NumaNodes: 4 });
      const before = await readBios(bmc);
      expect(before.current.ProcTurboMode).toBe('Enabled');
      if (profile !== 'ami') expect(before.pending).toEqual({ ProcTurboMode: 'Disabled', NumaNodes: 4 });
      // A retried reconcile sends nothing new.
      const again = await setBiosAttributes(
        bmc,
        { ProcTurboMode: 'Disabled', NumaNodes: 4 },
        { applyTime: 'OnReset' },
      );
      if (profile !== 'ami') expect(again.changed).toEqual({});
      await restart(bmc, FAST_WAIT);
      await restart(bmc, FAST_WAIT);
      expect((await readBios(bmc)).current).toMatchObject({ ProcTurboMode: 'Disabled', NumaNodes: 4 });
      expect(sim.bmc(n).counters.biosApplied).toEqual([{ ProcTurboMode: 'Disabled', NumaNodes: 4 }]);
      expect(sim.bmc(n).counters.preconditionFailed).toBe(0);
      await bmc.close();
    },
  );

  it('Dell: sends an apply time so a job is scheduled, and the job completes at reset', async () => {
    const n = idx('dell', 2);
    const bmc = await openSimBmc(sim, n);
    const res = await setBiosAttributes(bmc, { SriovGlobalEnable: 'Enabled' });
    expect(res.applyTime).toBe('OnReset');
    expect(res.task?.monitor).toMatch(/\/Jobs\/JID_/);
    await restart(bmc, FAST_WAIT);
    expect(await waitForTask(bmc.client, res.task!, { timeoutMs: 1_000, pollMs: 20 })).toMatchObject({
      state: 'Completed',
    });
    expect(sim.bmc(n).counters.biosApplied).toEqual([{ SriovGlobalEnable: 'Enabled' }]);
    await bmc.close();
  });

  it('validates against the attribute registry before writing', async () => {
    const n = idx('generic', 3);
    const bmc = await openSimBmc(sim, n);
    const registry = await fetchRegistry(bmc, 'BiosAttributeRegistry.v1_0_0');
    expect(registry?.RegistryEntries?.Attributes?.length).toBeGreaterThan(3);
    await expect(
      setBiosAttributes(
        bmc,
        { NumaNodes: 99, ProcTurboMode: 'Maybe', SerialNumber: 'x', Bogus: 1 },
        { registry },
      ),
    ).rejects.toThrow(
      /NumaNodes is above 8.*ProcTurboMode.*SerialNumber is read-only.*Bogus is not in the registry/,
    );
    expect(sim.bmc(n).counters.biosPatches).toBe(0);
    // Immediate is not offered by this Bios: the documented fallback (OnReset) is used and said.
    const res = await setBiosAttributes(bmc, { NumaNodes: 1 }, { registry, applyTime: 'Immediate' });
    expect(res).toMatchObject({
      applyTime: 'OnReset',
      confirmed: true,
      applyTimeFallback: {
        requested: 'Immediate',
        used: 'OnReset',
        supported: ['OnReset', 'AtMaintenanceWindowStart'],
      },
    });
    await bmc.close();
  });

  it('re-reads and retries when the ETag went stale (412)', async () => {
    const n = idx('lenovo', 3);
    const bmc = await openSimBmc(sim, n);
    const stale = await readBios(bmc);
    sim.bmc(n).bump('biosSettings');
    const { applySettings } = await import('./settings.js');
    await applySettings(bmc.client, stale, { AdminPhone: '555-0100' });
    const c = sim.bmc(n).counters;
    expect([c.preconditionFailed, c.biosPatches]).toEqual([1, 1]);
    await bmc.close();
  });
});

describe('BMC settings and Manager.Reset', () => {
  it('generic: pending until Manager.Reset; the client rides out the outage and logs in again', async () => {
    const n = idx('generic', 3);
    const loginsBefore = sim.bmc(n).counters.logins;
    const bmc = await openSimBmc(sim, n);
    await setManagerAttributes(bmc, { 'Syslog.1.Enable': 'Enabled' }, { applyTime: 'OnReset' });
    expect((await readManagerAttributes(bmc))[0]?.pending).toEqual({ 'Syslog.1.Enable': 'Enabled' });
    await resetManager(bmc);
    await expect(powerState(bmc)).rejects.toMatchObject({ code: RedfishErrorCode.Connection });
    const manager = await waitForManager(bmc, { timeoutMs: 3_000, pollMs: 50 });
    expect(manager.Attributes?.['Syslog.1.Enable']).toBe('Enabled');
    const c = sim.bmc(n).counters;
    expect([c.managerResets, c.managerApplied.length, c.logins - loginsBefore]).toEqual([1, 1, 2]);
    await bmc.close();
  });

  it('Dell: attributes live in DellAttributes and apply immediately when asked', async () => {
    const n = idx('dell', 3);
    const bmc = await openSimBmc(sim, n);
    const [res] = await setManagerAttributes(
      bmc,
      { 'NTP.1.Server': 'ntp.example' },
      { applyTime: 'Immediate' },
    );
    expect(res?.changed).toEqual({ 'NTP.1.Server': 'ntp.example' });
    const [state] = await readManagerAttributes(bmc);
    expect(state?.path).toContain('/Oem/Dell/DellAttributes/');
    expect(state?.current['NTP.1.Server']).toBe('ntp.example');
    await expect(setManagerAttributes(bmc, { 'Nope.1.X': 1 })).rejects.toMatchObject({
      code: RedfishErrorCode.Invalid,
    });
    await bmc.close();
  });

  it('Dell: the ManagerAttributeRegistry the DellAttributes name marks read-only attributes; the BMC refuses them', async () => {
    const n = idx('dell', 3);
    const bmc = await openSimBmc(sim, n);
    const patchesBefore = sim.bmc(n).counters.managerPatches;
    const states = await readManagerAttributes(bmc);
    expect(states[0]?.attributeRegistry).toBe('ManagerAttributeRegistry.v1_0_0');
    expect(await readOnlyAmong(bmc, states, ['Info.1.Product', 'NTP.1.Server', 'Not.1.There'])).toEqual([
      'Info.1.Product',
    ]);
    await expect(setManagerAttributes(bmc, { 'Info.1.Product': 'x' })).rejects.toMatchObject({
      code: RedfishErrorCode.Http,
      status: 400,
    });
    expect(sim.bmc(n).counters.managerPatches).toBe(patchesBefore);
    await bmc.close();
  });

  it('a Manager that names no registry marks nothing read-only (generic, the mock-shaped one)', async () => {
    const bmc = await openSimBmc(sim, idx('generic', 3));
    const states = await readManagerAttributes(bmc);
    expect(states[0]?.attributeRegistry).toBeUndefined();
    expect(await readOnlyAmong(bmc, states, ['Info.1.Product'])).toEqual([]);
    await bmc.close();
  });
});

describe('firmware update', () => {
  it.each(['generic', 'dell', 'hpe', 'lenovo'] as const)(
    '%s: SimpleUpdate task succeeds and the version changes exactly once',
    async (profile) => {
      const n = idx(profile, 1);
      const bmc = await openSimBmc(sim, n);
      const bmcItem = (await firmwareInventory(bmc)).find((f) => f.id === 'BMC')!;
      const progress: number[] = [];
      const task = await simpleUpdate(bmc, {
        imageUri: 'http://127.0.0.1:8099/fw/bmc-6.0.0.bin',
        targets: [bmcItem.path],
      });
      const result = await waitForTask(bmc.client, task!, {
        timeoutMs: 3_000,
        pollMs: 20,
        onProgress: (_s, p) => p !== undefined && progress.push(p),
      });
      expect(result.state).toBe('Completed');
      if (profile !== 'hpe') expect(progress.length).toBeGreaterThan(0);
      // The BMC restarts into the new image: it is away for a while, then reports the version.
      await waitForManager(bmc, FAST_WAIT);
      expect((await firmwareInventory(bmc)).find((f) => f.id === 'BMC')?.version).toBe('bmc-6.0.0.bin');
      expect(await bmcVersion(bmc)).toEqual({ version: 'bmc-6.0.0.bin', source: 'Manager.FirmwareVersion' });
      expect(sim.bmc(n).ledger).toMatchObject({ bmcUpdatesStarted: 1, bmcFlashes: 1 });
      expect(sim.bmc(n).counters.updatesApplied).toEqual([
        { target: 'BMC', image: 'http://127.0.0.1:8099/fw/bmc-6.0.0.bin' },
      ]);
      expect(sim.bmc(n).counters.ifMatchOnActions).toBe(0);
      await bmc.close();
    },
  );

  it('a failing task ends in TASK_FAILED with the BMC message', async () => {
    const n = idx('generic', 2);
    const bmc = await openSimBmc(sim, n);
    sim.bmc(n).faults.add({ kind: 'taskFail', times: 1 });
    const task = await simpleUpdate(bmc, { imageUri: 'http://127.0.0.1:8099/fw/bios.bin' });
    await expect(waitForTask(bmc.client, task!, { timeoutMs: 3_000, pollMs: 20 })).rejects.toMatchObject({
      code: RedfishErrorCode.TaskFailed,
      message: expect.stringContaining('Applying http://127.0.0.1:8099/fw/bios.bin failed'),
    });
    expect(sim.bmc(n).counters.updatesApplied).toEqual([]);
    await bmc.close();
  });

  it('a task that never finishes ends in TIMEOUT at the deadline, with its last progress', async () => {
    const n = idx('dell', 1);
    const bmc = await openSimBmc(sim, n);
    sim.bmc(n).faults.add({ kind: 'taskStuck', times: 1 });
    const task = await simpleUpdate(bmc, { imageUri: 'http://127.0.0.1:8099/fw/bios.bin' });
    const started = Date.now();
    await expect(waitForTask(bmc.client, task!, { timeoutMs: 300, pollMs: 20 })).rejects.toMatchObject({
      code: RedfishErrorCode.Timeout,
      details: expect.objectContaining({ taskState: 'Running', percent: 50 }),
    });
    expect(Date.now() - started).toBeLessThan(1_000);
    await bmc.close();
  });

  it('refuses a transfer protocol the BMC does not list', async () => {
    const bmc = await openSimBmc(sim, idx('generic', 0));
    await expect(simpleUpdate(bmc, { imageUri: 'ftp://x/y', transferProtocol: 'FTP' })).rejects.toMatchObject(
      {
        code: RedfishErrorCode.Unsupported,
      },
    );
    await bmc.close();
  });

  it('hides image-server credentials from errors', async () => {
    const n = idx('generic', 0);
    const bmc = await openSimBmc(sim, n);
    sim.bmc(n).faults.add({ kind: 'status', status: 400, echo: true, times: 1, path: 'SimpleUpdate' });
    const password = 'Image-Server-Pa55';
    const e = await simpleUpdate(bmc, {
      imageUri: 'http://127.0.0.1:8099/fw/x.bin',
      credentials: { username: 'fw', password },
    }).then(
      () => new Error('expected a failure'),
      (x: Error) => x,
    );
    expect(e.message).toContain('[redacted]');
    expect(e.message).not.toContain(password);
    await bmc.close();
  });
});
