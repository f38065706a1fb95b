// Conformance of the Redfish client against metal-operator's Go Redfish mock (bmc/mock/server).
import { jest } from '@jest/globals';
import { connectBmc, type Bmc } from '../../lib/redfish/bmc.js';
import { readBios, setBiosAttributes } from '../../lib/redfish/bios.js';
import { RedfishErrorCode, isRedfishError } from '../../lib/redfish/errors.js';
import { readManagerAttributes, resetManager, setManagerAttributes } from '../../lib/redfish/manager.js';
import { powerState, reset, restart } from '../../lib/redfish/power.js';
import { getBootOverride, setBootOverride } from '../../lib/redfish/boot.js';
import { waitForTask } from '../../lib/redfish/tasks.js';
import type { ComputerSystem } from '../../lib/redfish/types.js';
import { biosVersion, bmcVersion, firmwareInventory, simpleUpdate } from '../../lib/redfish/update.js';
import { startMetalMock, type MetalMockPeer } from './metal-mock.js';

jest.setTimeout(30_000);

let mock: MetalMockPeer;
let bmc: Bmc;

beforeAll(async () => {
  mock = await startMetalMock();
}, 300_000);
afterAll(() => mock?.stop());
beforeEach(async () => {
  await mock.reset();
  bmc = await connectBmc({
    endpoint: mock.endpoint,
    credentials: mock.credentials,
    timeoutMs: 5_000,
    retryDelayMs: 20,
  });
});
afterEach(() => bmc.close());

async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 3_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('metal-operator mock: auth', () => {
  it('falls back to Basic when the session collection itself wants Basic', () => {
    expect(bmc.client.authKind).toBe('basic');
    expect(bmc.systemPath).toBe('/redfish/v1/Systems/437XR1138R2');
  });

  it('reports wrong credentials as AUTH without the password', async () => {
    const password = 'wrong-Mock-pass-9';
    const e: unknown = await connectBmc({
      endpoint: mock.endpoint,
      credentials: { username: 'admin', password },
    }).catch((x: unknown) => x);
    expect(isRedfishError(e, RedfishErrorCode.Auth)).toBe(true);
    expect(JSON.stringify({ m: (e as Error).message, d: (e as { details: unknown }).details })).not.toContain(
      password,
    );
  });
});

describe('metal-operator mock: settings', () => {
  it('keeps reboot-requiring BIOS settings pending until a reset, applies the others at once', async () => {
    const res = await setBiosAttributes(bmc, { ProcTurboMode: 'Disabled', AdminPhone: '555-0199' });
    expect(res.changed).toEqual({ ProcTurboMode: 'Disabled', AdminPhone: '555-0199' });
    const staged = await readBios(bmc);
    expect(staged.current.AdminPhone).toBe('555-0199');
    expect(staged.current.ProcTurboMode).toBe('Enabled');
    expect(staged.pending).toEqual({ ProcTurboMode: 'Disabled' });
    // The read-back after the PATCH showed both (one current, one pending).
    expect(res.confirmed).toBe(true);
    // A retried reconcile sends nothing new.
    expect((await setBiosAttributes(bmc, { ProcTurboMode: 'Disabled' })).changed).toEqual({});
    await restart(bmc, { timeoutMs: 5_000, pollMs: 25, force: true });
    const applied = await eventually(
      () => readBios(bmc),
      (b) => b.current.ProcTurboMode === 'Disabled',
    );
    expect(applied.current.ProcTurboMode).toBe('Disabled');
    expect(applied.pending).toEqual({});
  });

  it('refuses attributes its BiosAttributeRegistry does not know, naming them, before writing', async () => {
    const e: unknown = await setBiosAttributes(bmc, { NoSuchKnob: 1 }, { registry: 'fetch' }).catch(
      (x: unknown) => x,
    );
    expect(e).toMatchObject({ code: RedfishErrorCode.Invalid, details: { attributes: ['NoSuchKnob'] } });
    expect((await readBios(bmc)).pending).toEqual({});
  });

  it('keeps BMC settings pending until Manager.Reset', async () => {
    await setManagerAttributes(bmc, { fooreboot: 456 });
    const [before] = await readManagerAttributes(bmc);
    expect(before?.current.fooreboot).toBe(123);
    expect(before?.pending).toEqual({ fooreboot: 456 });
    await resetManager(bmc, 'ForceRestart');
    const after = await eventually(
      async () => (await readManagerAttributes(bmc))[0],
      (s) => s?.current.fooreboot === 456,
    );
    expect(after?.current.fooreboot).toBe(456);
  });

  it('sets the PXE-once override metal-operator itself uses', async () => {
    await setBootOverride(bmc, { target: 'Hdd', enabled: 'Continuous' });
    await setBootOverride(bmc, { target: 'Pxe', enabled: 'Once' });
    expect(await getBootOverride(bmc)).toMatchObject({ target: 'Pxe', enabled: 'Once' });
  });
});

describe('metal-operator mock: firmware update', () => {
  it('runs SimpleUpdate to Completed and the version follows the image', async () => {
    const bios = (await firmwareInventory(bmc)).find((f) => f.id === 'BIOS')!;
    const task = await simpleUpdate(bmc, {
      imageUri: 'http://images.invalid/bios-P80.bin',
      targets: [bios.path],
    });
    expect(task?.monitor).toBe('/redfish/v1/TaskService/Tasks/upgrade');
    const result = await waitForTask(bmc.client, task!, { timeoutMs: 5_000, pollMs: 10 });
    expect(result.state).toBe('Completed');
    const system = await eventually(
      () => bmc.client.get<ComputerSystem>(bmc.systemPath),
      (s) => s.BiosVersion === 'http://images.invalid/bios-P80.bin',
    );
    expect(system.BiosVersion).toBe('http://images.invalid/bios-P80.bin');
  });

  it('reads the running BIOS and BMC versions through the firmware API, before and after', async () => {
    const before = await biosVersion(bmc);
    expect(before.source).toBe('System.BiosVersion');
    const bmcItem = (await firmwareInventory(bmc)).find((f) => f.relatedItems.includes(bmc.requireManager()));
    expect((await bmcVersion(bmc)).version).toBeTruthy();
    const bios = (await firmwareInventory(bmc)).find((f) => f.id === 'BIOS')!;
    const task = await simpleUpdate(bmc, {
      imageUri: 'http://images.invalid/bios-P81.bin',
      targets: [bios.path],
    });
    const result = await waitForTask(bmc.client, task!, { timeoutMs: 5_000, pollMs: 10 });
    expect(result).toMatchObject({ state: 'Completed', status: 'OK' });
    const after = await eventually(
      () => biosVersion(bmc),
      (v) => v.version === 'http://images.invalid/bios-P81.bin',
    );
    expect(after).toEqual({ version: 'http://images.invalid/bios-P81.bin', source: 'System.BiosVersion' });
    expect(bmcItem).toBeDefined();
    if (bmcItem) {
      const bmcTask = await simpleUpdate(bmc, {
        imageUri: 'http://images.invalid/bmc-2.bin',
        targets: [bmcItem.path],
      });
      await waitForTask(bmc.client, bmcTask!, { timeoutMs: 5_000, pollMs: 10 });
      const v = await eventually(
        () => bmcVersion(bmc),
        (x) => x.version === 'http://images.invalid/bmc-2.bin',
      );
      expect(v.version).toBe('http://images.invalid/bmc-2.bin');
    }
  });

  it('reports a failed update task as TASK_FAILED', async () => {
    const task = await simpleUpdate(bmc, { imageUri: 'http://images.invalid/fail.bin' });
    const e: unknown = await waitForTask(bmc.client, task!, { timeoutMs: 5_000, pollMs: 10 }).catch(
      (x: unknown) => x,
    );
    expect(e).toMatchObject({ code: RedfishErrorCode.TaskFailed, details: { taskState: 'Exception' } });
  });

  it('answers 412 to If-Match on the action, which the client never sends', async () => {
    const target = '/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate';
    const raw: unknown = await bmc.client
      .request(
        'POST',
        target,
        { ImageURI: 'http://images.invalid/x.bin' },
        { headers: { 'if-match': '"x"' } },
      )
      .catch((x: unknown) => x);
    expect(raw).toMatchObject({ details: { status: 412 } });
    // The action helper strips a caller's If-Match.
    const res = await bmc.client.post(
      target,
      { ImageURI: 'http://images.invalid/x.bin' },
      { headers: { 'If-Match': '"x"' } },
    );
    expect(res.status).toBe(202);
  });
});

describe('metal-operator mock: conflicts and outages', () => {
  it('surfaces 409 for a reset while the previous one still holds the lock', async () => {
    await reset(bmc, 'ForceRestart');
    const e: unknown = await reset(bmc, 'ForceRestart').catch((x: unknown) => x);
    expect(e).toMatchObject({ code: RedfishErrorCode.Http, details: { status: 409 } });
  });

  it('retries reads through 503 and reports it when it lasts', async () => {
    await mock.setUnavailable(true);
    try {
      const e: unknown = await powerState(bmc).catch((x: unknown) => x);
      expect(e).toMatchObject({ code: RedfishErrorCode.Http, details: { status: 503 } });
    } finally {
      await mock.setUnavailable(false);
    }
    // Readable again (the power state depends on the restarts of earlier tests).
    expect(['On', 'Off']).toContain(await powerState(bmc));
  });
});
