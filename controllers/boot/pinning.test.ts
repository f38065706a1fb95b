// Boot pinning without I/O: the one-time boot override set, re-armed after a BMC-initiated reboot,
// and never left behind, driven against a fake BMC.
import { decide } from './decide.js';
import type { ServerBoot } from './model.js';
import {
  FakeBmc,
  IMAGE,
  T0,
  cond,
  ctxAt,
  drive,
  makeBoot,
  makeWorld,
  phase,
  reasons,
  step,
  toRunning,
} from './testing/boot.js';

describe('boot pinning', () => {
  test('Continuous where the vendor allows it: a BMC-initiated reboot comes back into the image, no re-arm needed', () => {
    const bmc = new FakeBmc();
    const { boot: running, now } = toRunning(bmc);
    bmc.reboot(now);
    const mid = step(running, makeWorld(), bmc, now + 1_000);
    expect(mid.decision.actions).toEqual([]);
    const { boot } = drive(mid.boot, makeWorld(), bmc, now + 5_000, (b) => b.status?.bootCount === 2);
    expect(bmc.boots.map((b) => b.device)).toEqual(['Cd', 'Cd']);
    expect(boot.status?.rearms ?? 0).toBe(0);
  });

  test('Once where Continuous is refused: every consumed override is re-armed, so BMC reboots keep coming back into the image', () => {
    const bmc = new FakeBmc();
    bmc.continuous = false;
    const first = toRunning(bmc);
    let { boot, now } = first;
    const { steps } = first;
    // The first boot consumed the override; it was re-armed in the same step that saw Running.
    expect(bmc.override).toMatchObject({ enabled: 'Once', target: 'Cd' });
    expect(reasons(steps)).toContain('Rearmed');
    for (let i = 0; i < 3; i++) {
      bmc.reboot(now);
      now += bmc.restartMs + 1;
      bmc.advance(now);
      const s = step(boot, makeWorld(), bmc, now);
      expect(s.decision.actions).toEqual([
        { kind: 'setOverride', request: { target: 'Cd', enabled: 'Once', mode: 'UEFI' } },
      ]);
      expect(s.decision.events[0]).toMatchObject({ reason: 'Rearmed' });
      boot = s.boot;
    }
    expect(bmc.boots.map((b) => b.device)).toEqual(['Cd', 'Cd', 'Cd', 'Cd']);
    expect(boot.status).toMatchObject({ bootCount: 4, rearms: 4 });
    expect(cond(boot, 'Pinned')).toMatchObject({ status: 'True', reason: 'Rearmed' });
  });

  test('without the pin a BMC reboot goes to the disk (upstream #938), and nothing polls the BMC while Running', () => {
    const bmc = new FakeBmc();
    bmc.continuous = false;
    const { boot, now } = toRunning(bmc, { pin: false });
    expect(bmc.applied.find((a) => a.kind === 'setOverride')).toMatchObject({ request: { enabled: 'Once' } });
    expect(cond(boot, 'Pinned')).toBeUndefined();
    bmc.reboot(now);
    bmc.advance(now + bmc.restartMs);
    const s = step(boot, makeWorld(), bmc, now + bmc.restartMs);
    expect(s.observed).toBe(false);
    expect(bmc.boots.map((b) => b.device)).toEqual(['Cd', 'Hdd']);
  });

  test('an override found unarmed while the host reboots is re-armed before it comes back', () => {
    const bmc = new FakeBmc();
    bmc.continuous = false;
    const { boot, now } = toRunning(bmc);
    bmc.override = { enabled: 'Disabled', target: 'None' }; // cleared by a firmware update
    bmc.reboot(now);
    const s = step(boot, makeWorld(), bmc, now + 500);
    expect(s.decision.actions[0]).toMatchObject({ kind: 'setOverride' });
    expect(s.decision.events[0]?.note).toMatch(/re-armed before it comes back/);
    drive(s.boot, makeWorld(), bmc, now + bmc.restartMs + 1, (b) => (b.status?.bootCount ?? 0) >= 2);
    expect(bmc.boots.at(-1)?.device).toBe('Cd');
  });

  test('a host that came back while the override could not be re-armed is reset back into the image', () => {
    const running = makeBoot(
      {},
      {
        phase: 'Running',
        phaseSince: new Date(T0).toISOString(),
        powerState: 'PoweringOn',
        appliedBoot: { overrideEnabled: 'Once', overrideTarget: 'Cd' },
        previousBoot: { overrideEnabled: 'Disabled', overrideTarget: 'None' },
        conditions: [
          {
            type: 'Pinned',
            status: 'False',
            reason: 'RearmFailed',
            message: 'x',
            lastTransitionTime: '2026-08-20T22:00:00Z',
          },
        ],
      },
    );
    const bmc = new FakeBmc();
    bmc.continuous = false;
    const s = step(running, makeWorld(), bmc, T0 + 10_000);
    expect(s.boot.status?.phase).toBe('SettingOverride');
    expect(cond(s.boot, 'Booted')).toMatchObject({ status: 'False', reason: 'BootedOutsideImage' });
    expect(s.decision.events.map((e) => e.reason)).toContain('BootedOutsideImage');
    const back = drive(s.boot, makeWorld(), bmc, T0 + 10_001, phase('Running'));
    expect(bmc.boots.at(-1)?.device).toBe('Cd');
    expect(back.boot.status?.bootCount).toBe(1);
  });

  test('virtual media ejected under a pinned boot (a BMC reset) is inserted again, before the override', () => {
    const bmc = new FakeBmc();
    bmc.continuous = false;
    const { boot, now } = toRunning(bmc);
    bmc.media = { device: '/cd', image: null, inserted: false };
    bmc.override = { enabled: 'Disabled', target: 'None' };
    const s = step(boot, makeWorld(), bmc, now);
    expect(s.decision.actions.map((a) => a.kind)).toEqual(['insertMedia', 'setOverride']);
    expect(s.decision.events.map((e) => e.reason)).toEqual(['MediaReinserted', 'Rearmed']);
    expect(cond(s.boot, 'MediaReady')).toMatchObject({ status: 'True', reason: 'Reinserted' });
    bmc.reboot(now + 1);
    drive(s.boot, makeWorld(), bmc, now + bmc.restartMs + 2, (b) => (b.status?.bootCount ?? 0) >= 2);
    expect(bmc.boots.at(-1)).toMatchObject({ device: 'Cd', media: IMAGE });
  });

  test('a BMC that reports no PowerState is restarted, and booted once the override is consumed', () => {
    const bmc = new FakeBmc();
    bmc.continuous = false;
    const world = makeWorld();
    const noPower = (b: ServerBoot, now: number) => {
      const c = ctxAt(now);
      const d = decide(
        b,
        { ...world, bmc: { ok: true, observation: { ...bmc.observe(now), powerState: undefined } } },
        c,
      );
      if (d.kind !== 'act') throw new Error('observe');
      for (const a of d.actions) bmc.apply(a, now);
      return { ...b, status: d.status ?? b.status };
    };
    let b = drive(makeBoot(), world, bmc, T0, phase('Resetting')).boot;
    b = noPower(b, T0 + 10);
    expect(bmc.applied.at(-1)).toEqual({ kind: 'reset', resetType: 'ForceRestart' });
    b = noPower(b, T0 + 20);
    expect(b.status?.phase).toBe('WaitingForPower');
    b = noPower(b, T0 + 20 + bmc.restartMs);
    expect(b.status?.phase).toBe('Running');
    expect(cond(b, 'Booted')?.message).toMatch(/one-time override was consumed/);
  });

  test('an override someone else changed is taken back, with a Warning', () => {
    const bmc = new FakeBmc();
    const { boot, now } = toRunning(bmc);
    bmc.override = { enabled: 'Once', target: 'Pxe' };
    const s = step(boot, makeWorld(), bmc, now);
    expect(s.decision.events.map((e) => [e.type, e.reason])).toEqual([
      ['Warning', 'OverrideChanged'],
      ['Normal', 'Rearmed'],
    ]);
    expect(bmc.override).toMatchObject({ enabled: 'Continuous', target: 'Cd' });
  });
});
