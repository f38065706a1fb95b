// Power and boot override against the simulator, across vendor profiles.
import { startBmcSimulator, type BmcSimulator } from '../../e2e/sim/bmc/server.js';
import type { SimProfileName } from '../../e2e/sim/bmc/profiles.js';
import { FAST_TIMING, FAST_WAIT, openSimBmc, testTls } from '../../e2e/sim/bmc/testing.js';
import { getBootOverride, restoreBootOverride, setBootOverride } from './boot.js';
import { isRedfishError, RedfishErrorCode } from './errors.js';
import { powerState, reset, restart, setPower, waitForPowerState } from './power.js';

const PROFILES: SimProfileName[] = ['generic', 'dell', 'hpe', 'lenovo', 'supermicro', 'ami'];
let sim: BmcSimulator;

beforeAll(async () => {
  // Two BMCs of each profile: index = 2 * profile + k.
  sim = await startBmcSimulator({
    count: PROFILES.length * 2 + 4,
    tls: testTls(),
    timing: FAST_TIMING,
    profile: (i) => PROFILES[Math.floor(i / 2)] ?? 'generic',
  });
});
afterAll(() => sim.close());

const idx = (p: SimProfileName, k = 0): number => PROFILES.indexOf(p) * 2 + k;
const SPARE = PROFILES.length * 2;

describe('power', () => {
  it('powers off and on, polling PowerState, and does nothing when already there', async () => {
    const bmc = await openSimBmc(sim, SPARE);
    expect(await setPower(bmc, 'On', FAST_WAIT)).toEqual({ changed: false });
    expect(await setPower(bmc, 'Off', FAST_WAIT)).toEqual({ changed: true });
    expect(await powerState(bmc)).toBe('Off');
    expect(await setPower(bmc, 'On', FAST_WAIT)).toEqual({ changed: true });
    const c = sim.bmc(SPARE).counters;
    expect(c.resets).toEqual({ GracefulShutdown: 1, On: 1 });
    expect(c.boots).toBe(1);
    await bmc.close();
  });

  it('forces off when a graceful shutdown does not finish in its grace period', async () => {
    const slow = await startBmcSimulator({
      tls: testTls(),
      timing: { ...FAST_TIMING, gracefulShutdownMs: 5_000 },
    });
    const bmc = await openSimBmc(slow, 0);
    const started = Date.now();
    expect(await setPower(bmc, 'Off', { ...FAST_WAIT, graceMs: 150 })).toEqual({ changed: true });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await powerState(bmc)).toBe('Off');
    expect(slow.bmc(0).counters.resets).toEqual({ GracefulShutdown: 1, ForceOff: 1 });
    await bmc.close();
    await slow.close();
  });

  it('refuses a ResetType the BMC does not list, before sending anything', async () => {
    const bmc = await openSimBmc(sim, SPARE + 2);
    await expect(reset(bmc, 'FullPowerCycle')).rejects.toMatchObject({ code: RedfishErrorCode.Unsupported });
    expect(sim.bmc(SPARE + 2).counters.resets).toEqual({});
    await bmc.close();
  });

  it('times out waiting for a state that never comes, with the last state in the error', async () => {
    const bmc = await openSimBmc(sim, SPARE + 3);
    const started = Date.now();
    const e: unknown = await waitForPowerState(bmc, 'Off', { timeoutMs: 200, pollMs: 20 }).catch(
      (x: unknown) => x,
    );
    expect(isRedfishError(e, RedfishErrorCode.Timeout)).toBe(true);
    expect((e as Error).message).toContain('last On');
    expect(Date.now() - started).toBeLessThan(1_000);
    await bmc.close();
  });
});

describe('boot override', () => {
  it.each(PROFILES)('%s: a Once override is consumed by exactly the next boot', async (profile) => {
    const n = idx(profile);
    const bmc = await openSimBmc(sim, n);
    const result = await setBootOverride(bmc, { target: 'Pxe', mode: 'UEFI' });
    expect(result.changed).toBe(true);
    expect(result.previous).toMatchObject({ enabled: 'Disabled', target: 'None' });
    expect(await getBootOverride(bmc)).toMatchObject({ enabled: 'Once', target: 'Pxe', mode: 'UEFI' });
    await restart(bmc, FAST_WAIT);
    await restart(bmc, FAST_WAIT);
    const log = sim.bmc(n).counters.bootLog.map((b) => b.device);
    expect(log).toEqual(['Pxe', 'Hdd']);
    expect(await getBootOverride(bmc)).toMatchObject({ enabled: 'Disabled' });
    expect(sim.bmc(n).counters.bootPatches).toBe(1);
    await bmc.close();
  });

  it('a reboot the BMC starts by itself consumes the override too (metal-operator #938)', async () => {
    const n = idx('generic', 1);
    const bmc = await openSimBmc(sim, n);
    await setBootOverride(bmc, { target: 'Cd' });
    sim.bmc(n).bmcInitiatedReboot();
    await new Promise((r) => setTimeout(r, 80));
    expect(sim.bmc(n).counters.bootLog).toEqual([expect.objectContaining({ device: 'Cd', cause: 'bmc' })]);
    expect((await getBootOverride(bmc)).enabled).toBe('Disabled');
    await bmc.close();
  });

  it('sets UEFI HTTP boot with its URI and clears the URI when switching away', async () => {
    const n = idx('dell', 1);
    const bmc = await openSimBmc(sim, n);
    const uri = 'http://127.0.0.1:8080/maint.efi';
    await setBootOverride(bmc, { target: 'UefiHttp', httpBootUri: uri, enabled: 'Continuous' });
    expect(await getBootOverride(bmc)).toMatchObject({
      target: 'UefiHttp',
      httpBootUri: uri,
      enabled: 'Continuous',
    });
    await restart(bmc, FAST_WAIT);
    expect(sim.bmc(n).counters.bootLog[0]).toMatchObject({ device: 'UefiHttp', httpBootUri: uri });
    await setBootOverride(bmc, { target: 'Pxe' });
    expect((await getBootOverride(bmc)).httpBootUri).toBeNull();
    await expect(setBootOverride(bmc, { target: 'UefiHttp' })).rejects.toMatchObject({
      code: RedfishErrorCode.Invalid,
    });
    await bmc.close();
  });

  it('restores the override it replaced', async () => {
    const n = idx('hpe', 1);
    const bmc = await openSimBmc(sim, n);
    await setBootOverride(bmc, { target: 'Hdd', enabled: 'Continuous' });
    const { previous } = await setBootOverride(bmc, { target: 'Pxe' });
    expect(previous).toMatchObject({ target: 'Hdd', enabled: 'Continuous' });
    await restoreBootOverride(bmc, previous);
    expect(await getBootOverride(bmc)).toMatchObject({ target: 'Hdd', enabled: 'Continuous' });
    await bmc.close();
  });

  it('does not PATCH again when the same override is already set', async () => {
    const n = idx('supermicro', 1);
    const bmc = await openSimBmc(sim, n);
    expect((await setBootOverride(bmc, { target: 'Pxe', mode: 'UEFI' })).changed).toBe(true);
    expect((await setBootOverride(bmc, { target: 'Pxe', mode: 'UEFI' })).changed).toBe(false);
    expect(sim.bmc(n).counters.bootPatches).toBe(1);
    await bmc.close();
  });

  it('Supermicro: Cd becomes UsbCd, Enabled is always sent, and the mode stays UEFI', async () => {
    const n = idx('supermicro', 1);
    const bmc = await openSimBmc(sim, n);
    await setBootOverride(bmc, { target: 'Cd', enabled: 'Once' });
    expect(await getBootOverride(bmc)).toMatchObject({ target: 'UsbCd', enabled: 'Once', mode: 'UEFI' });
    await bmc.close();
  });

  it('Lenovo: writes go to the System settings object and Continuous falls back to Once', async () => {
    const n = idx('lenovo', 1);
    const bmc = await openSimBmc(sim, n);
    const res = await setBootOverride(bmc, { target: 'Pxe', enabled: 'Continuous' });
    expect(res.applied.enabled).toBe('Once');
    expect(await getBootOverride(bmc)).toMatchObject({ target: 'Pxe', enabled: 'Once' });
    // ETags are required there: the client sent If-Match from the first PATCH on.
    expect(sim.bmc(n).counters.preconditionRequired).toBe(0);
    await bmc.close();
  });

  it('AMI: PATCHes the write-only SD object with the ETag of the System it applies to', async () => {
    const n = idx('ami', 1);
    const bmc = await openSimBmc(sim, n);
    await setBootOverride(bmc, { target: 'Hdd', enabled: 'Continuous' });
    expect(await getBootOverride(bmc)).toMatchObject({ target: 'Hdd', enabled: 'Continuous' });
    const c = sim.bmc(n).counters;
    expect([c.preconditionFailed, c.preconditionRequired, c.bootPatches]).toEqual([0, 0, 1]);
    await bmc.close();
  });

  it('rejects a target the BMC does not offer without writing', async () => {
    const bmc = await openSimBmc(sim, SPARE + 3);
    await expect(setBootOverride(bmc, { target: 'Floppy' })).rejects.toMatchObject({
      code: RedfishErrorCode.Unsupported,
    });
    expect(sim.bmc(SPARE + 3).counters.bootPatches).toBe(0);
    await bmc.close();
  });
});
