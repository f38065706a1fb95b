// The boot decision without I/O: every phase, the maintenance gate, timeouts, pinning with
// re-arm, restore, failure undo and deletion, driven against a fake BMC.
import { decide, onActionError } from './decide.js';
import { goDurationMs } from './draft.js';
import type { BootWorld, ServerBoot } from './model.js';
import {
  FakeBmc,
  IMAGE,
  T0,
  ctxAt,
  drive,
  makeBoot,
  makeMaintenance,
  makeServer,
  makeWorld,
  step,
} from './testing/boot.js';

const cond = (b: ServerBoot, type: string) => b.status?.conditions?.find((c) => c.type === type);
const phase = (p: string) => (b: ServerBoot) => b.status?.phase === p;
const reasons = (steps: { decision: { events: { reason: string }[] } }[]) =>
  steps.flatMap((s) => s.decision.events.map((e) => e.reason));

/** A boot driven to Running on `bmc` (VirtualMedia unless `spec` says otherwise). */
function toRunning(bmc: FakeBmc, spec: Partial<ServerBoot['spec']> = {}, world = makeWorld()) {
  return drive(makeBoot(spec), world, bmc, T0, phase('Running'));
}

describe('the maintenance gate', () => {
  test('a claimed server without a maintenance reference holds in Pending, once announced', () => {
    const world = makeWorld({ server: makeServer(true) });
    const first = step(makeBoot(), world, new FakeBmc(), T0);
    expect(first.observed).toBe(false);
    expect(first.decision.actions).toEqual([]);
    expect(first.boot.status?.phase).toBe('Pending');
    expect(cond(first.boot, 'Admitted')).toMatchObject({
      status: 'False',
      reason: 'ClaimedWithoutMaintenance',
    });
    expect(reasons([first])).toEqual(['Held']);
    // Asked again: still held, no second Event.
    expect(reasons([step(first.boot, world, new FakeBmc(), T0 + 1000)])).toEqual([]);
  });

  test('a referenced maintenance that is not InMaintenance holds; InMaintenance lets the boot start', () => {
    const spec = { maintenanceRef: { name: 'sm1' } };
    const approved = step(
      makeBoot(spec),
      makeWorld({ server: makeServer(true), maintenance: makeMaintenance('Approved') }),
      new FakeBmc(),
      T0,
    );
    expect(cond(approved.boot, 'Admitted')).toMatchObject({
      status: 'False',
      reason: 'WaitingForMaintenance',
    });
    const missing = step(makeBoot(spec), makeWorld({ server: makeServer(true) }), new FakeBmc(), T0);
    expect(cond(missing.boot, 'Admitted')?.reason).toBe('MaintenanceNotFound');
    const other = makeMaintenance('InMaintenance');
    other.spec.serverRef.name = 'srv9';
    const mismatch = step(
      makeBoot(spec),
      makeWorld({ server: makeServer(true), maintenance: other }),
      new FakeBmc(),
      T0,
    );
    expect(cond(mismatch.boot, 'Admitted')?.reason).toBe('MaintenanceMismatch');
    const open = step(
      approved.boot,
      makeWorld({ server: makeServer(true), maintenance: makeMaintenance('InMaintenance') }),
      new FakeBmc(),
      T0,
    );
    expect(open.boot.status?.phase).toBe('PreparingMedia');
    expect(cond(open.boot, 'Admitted')).toMatchObject({ status: 'True', reason: 'Admitted' });
  });

  test('a maintenance that ended before the boot started completes it without touching the BMC', () => {
    const s = step(
      makeBoot({ maintenanceRef: { name: 'sm1' } }),
      makeWorld({ maintenance: makeMaintenance('Completed') }),
      new FakeBmc(),
      T0,
    );
    expect(s.observed).toBe(false);
    expect(s.boot.status?.phase).toBe('Completed');
    expect(cond(s.boot, 'Restored')?.reason).toBe('NothingChanged');
  });

  test('a missing server or missing BMC credentials hold the boot in Pending', () => {
    const noServer = step(makeBoot(), makeWorld({ server: undefined }), new FakeBmc(), T0);
    expect(noServer.boot.status?.phase).toBe('Pending');
    expect(cond(noServer.boot, 'Admitted')?.reason).toBe('ServerNotFound');
    const noSecret = step(
      makeBoot(),
      makeWorld({ access: { ok: false, reason: 'SecretNotFound', message: 'BMCSecret s does not exist' } }),
      new FakeBmc(),
      T0,
    );
    expect(noSecret.boot.status?.phase).toBe('Pending');
    expect(cond(noSecret.boot, 'BMCReady')).toMatchObject({ status: 'False', reason: 'SecretNotFound' });
    expect(noSecret.decision.requeueAfterMs).toBe(10_000);
  });

  test('an image that is not an http(s) URL fails at once, with nothing to undo', () => {
    const s = step(makeBoot({ image: 'ftp://x/y.iso' }), makeWorld(), new FakeBmc(), T0);
    expect(s.boot.status).toMatchObject({ phase: 'Failed', failedPhase: 'Pending' });
    expect(cond(s.boot, 'Failed')?.reason).toBe('InvalidSpec');
    expect(cond(s.boot, 'Restored')?.status).toBe('True');
  });
});

describe('virtual media boot', () => {
  test('walks every phase to Running, saving the previous settings before changing anything', () => {
    const bmc = new FakeBmc();
    bmc.override = { enabled: 'Once', target: 'Pxe', mode: 'UEFI' };
    bmc.media = { device: '/cd', image: 'https://other/old.iso', inserted: true };
    const { boot, steps } = toRunning(bmc);
    // The first write (before any action) saves what was there.
    const firstAction = steps.findIndex((s) => s.decision.actions.length > 0);
    const saved = steps.slice(0, firstAction).find((s) => s.boot.status?.previousBoot);
    expect(saved?.boot.status?.previousBoot).toEqual({
      overrideEnabled: 'Once',
      overrideTarget: 'Pxe',
      overrideMode: 'UEFI',
      mediaImage: 'https://other/old.iso',
    });
    expect(bmc.applied.map((a) => a.kind)).toEqual(['insertMedia', 'setOverride', 'reset']);
    expect(bmc.applied[1]).toEqual({
      kind: 'setOverride',
      request: { target: 'Cd', enabled: 'Continuous', mode: 'UEFI' },
    });
    expect(bmc.boots).toEqual([expect.objectContaining({ device: 'Cd', media: IMAGE })]);
    expect(boot.status).toMatchObject({
      phase: 'Running',
      bootCount: 1,
      appliedBoot: { overrideEnabled: 'Continuous', overrideTarget: 'Cd' },
      powerState: 'On',
    });
    for (const t of ['Admitted', 'BMCReady', 'MediaReady', 'OverrideSet', 'Booted', 'Pinned']) {
      expect(cond(boot, t)?.status).toBe('True');
    }
    expect(reasons(steps)).toEqual([
      'PreparingMedia',
      'SettingOverride',
      'Resetting',
      'WaitingForPower',
      'Running',
    ]);
  });

  test('a BMC without a virtual CD fails in PreparingMedia', () => {
    const bmc = new FakeBmc();
    bmc.media = null;
    const { boot } = drive(makeBoot(), makeWorld(), bmc, T0, phase('Failed'));
    expect(boot.status).toMatchObject({ failedPhase: 'PreparingMedia' });
    expect(cond(boot, 'Failed')).toMatchObject({ reason: 'NoVirtualMedia' });
  });

  test('vendor aliases count as the target (Supermicro UsbCd)', () => {
    const bmc = new FakeBmc();
    bmc.aliases = { Cd: ['UsbCd', 'Cd'] };
    const { boot } = toRunning(bmc);
    expect(boot.status?.appliedBoot?.overrideTarget).toBe('UsbCd');
    expect(bmc.applied.filter((a) => a.kind === 'setOverride')).toHaveLength(1);
  });

  test('a powered-off server is powered on, not restarted; a running transition is waited for', () => {
    const bmc = new FakeBmc();
    bmc.power = 'Off';
    toRunning(bmc);
    expect(bmc.applied.find((a) => a.kind === 'reset')).toEqual({ kind: 'reset', resetType: 'On' });
    const busy = makeBoot(
      {},
      {
        phase: 'Resetting',
        phaseSince: new Date(T0).toISOString(),
        previousBoot: { overrideEnabled: 'Disabled' },
      },
    );
    const b2 = new FakeBmc();
    b2.override = { enabled: 'Continuous', target: 'Cd' };
    b2.power = 'PoweringOn';
    const s = step(busy, makeWorld(), b2, T0);
    expect(s.decision.actions).toEqual([]);
    expect(s.boot.status?.phase).toBe('WaitingForPower');
  });

  test('WaitingForPower needs evidence of a boot: a power cycle, a consumed override, or the settle time', () => {
    const base = {
      phase: 'WaitingForPower',
      phaseSince: new Date(T0).toISOString(),
      powerState: 'On',
      appliedBoot: { overrideEnabled: 'Continuous', overrideTarget: 'Cd' },
    };
    const bmc = new FakeBmc();
    bmc.override = { enabled: 'Continuous', target: 'Cd' };
    // Reads On right after the reset (the BMC has not started it yet): keep waiting.
    const early = step(makeBoot({}, base), makeWorld(), bmc, T0 + 100);
    expect(early.boot.status?.phase).toBe('WaitingForPower');
    // After the settle time without seeing a cycle, On counts.
    const late = step(makeBoot({}, base), makeWorld(), bmc, T0 + 30_000);
    expect(late.boot.status?.phase).toBe('Running');
    expect(cond(late.boot, 'Booted')?.message).toMatch(/assuming the reset took effect/);
    // A BMC that does not answer while the host cycles: wait, within the timeout.
    const down = decide(
      makeBoot({}, base),
      {
        ...makeWorld(),
        bmc: { ok: false, error: { code: 'METAL_ERR_REDFISH_CONNECTION', message: 'refused' } },
      },
      ctxAt(T0 + 500),
    );
    expect(down).toMatchObject({ kind: 'act', actions: [], requeueAfterMs: 1_000 });
  });
});

describe('UEFI HTTP and PXE boots', () => {
  test('UEFI HTTP needs no media: the override carries the URI', () => {
    const bmc = new FakeBmc();
    const { boot } = toRunning(bmc, { method: 'UefiHttp', image: 'https://images/diag.efi' });
    expect(bmc.applied.map((a) => a.kind)).toEqual(['setOverride', 'reset']);
    expect(bmc.boots[0]?.device).toBe('UefiHttp');
    expect(cond(boot, 'MediaReady')?.reason).toBe('ServedByURL');
    expect(bmc.override.httpBootUri).toBe('https://images/diag.efi');
  });

  test('PXE creates an owned ServerBootConfiguration, waits for Ready, then sets PXE', () => {
    const bmc = new FakeBmc();
    const boot = makeBoot({ method: 'Pxe', image: 'ghcr.io/ironcore-dev/maintenance:1' });
    let s = drive(
      boot,
      makeWorld(),
      bmc,
      T0,
      (b) => cond(b, 'MediaReady')?.reason === 'CreatingBootConfiguration',
    );
    const create = s.steps.at(-1)!.decision.actions[0];
    expect(create).toMatchObject({
      kind: 'createSbc',
      sbc: {
        metadata: {
          name: 'srv1-boot',
          namespace: 'ops',
          ownerReferences: [{ kind: 'ServerBoot', uid: 'boot-uid', controller: true }],
        },
        spec: { serverRef: { name: 'srv1' }, image: 'ghcr.io/ironcore-dev/maintenance:1' },
      },
    });
    const sbc = (create as { sbc: NonNullable<BootWorld['sbc']> }).sbc;
    const pending = step(s.boot, makeWorld({ sbc: { ...sbc, status: { state: 'Pending' } } }), bmc, s.now);
    expect(cond(pending.boot, 'MediaReady')?.reason).toBe('WaitingForBootConfiguration');
    s = drive(
      pending.boot,
      makeWorld({ sbc: { ...sbc, status: { state: 'Ready' } } }),
      bmc,
      s.now,
      phase('Running'),
    );
    expect(bmc.boots[0]?.device).toBe('Pxe');
    const errored = step(
      pending.boot,
      makeWorld({ sbc: { ...sbc, status: { state: 'Error' } } }),
      bmc,
      s.now,
    );
    expect(cond(errored.boot, 'Failed')?.reason).toBe('BootConfigurationError');
    const foreign = { ...sbc, metadata: { ...sbc.metadata, ownerReferences: [] } };
    expect(cond(step(pending.boot, makeWorld({ sbc: foreign }), bmc, s.now).boot, 'Failed')?.reason).toBe(
      'BootConfigurationConflict',
    );
  });
});

describe('phase timeouts', () => {
  test.each(['PreparingMedia', 'SettingOverride', 'Resetting', 'WaitingForPower', 'Restoring'])(
    '%s past its timeout fails, naming the phase, and lists what is to be undone',
    (p) => {
      const boot = makeBoot(
        { phaseTimeout: '90s' },
        {
          phase: p,
          phaseSince: new Date(T0).toISOString(),
          message: 'waiting for the host to come back on (PowerState Off)',
          previousBoot: { overrideEnabled: 'Disabled', overrideTarget: 'None' },
        },
      );
      const before = decide(boot, makeWorld(), ctxAt(T0 + 89_000));
      expect(before.kind).toBe('observe');
      const d = decide(boot, makeWorld(), ctxAt(T0 + 90_000));
      expect(d.kind).toBe('act');
      if (d.kind !== 'act') return;
      expect(d.actions).toEqual([]);
      expect(d.status).toMatchObject({ phase: 'Failed', failedPhase: p });
      const failed = d.status!.conditions!.find((c) => c.type === 'Failed')!;
      expect(failed.reason).toBe('PhaseTimeout');
      expect(failed.message).toBe(
        `${p}: did not finish within 90s (last: waiting for the host to come back on (PowerState Off))`,
      );
      expect(d.status!.notRestored!.some((i) => i.startsWith('virtual media'))).toBe(true);
      expect(d.events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'Failed' })]);
      expect(d.requeueAfterMs).toBe(0);
    },
  );

  test('the timeout comes from spec.phaseTimeout, else the context (policy) default; requeues never overshoot it', () => {
    const since = { phase: 'WaitingForPower', phaseSince: new Date(T0).toISOString(), powerState: 'Off' };
    const own = decide(
      makeBoot({ phaseTimeout: '2s' }, since),
      { ...makeWorld(), bmc: { ok: true, observation: { ...new FakeBmc().observe(T0), powerState: 'Off' } } },
      ctxAt(T0 + 1_500),
    );
    expect(own).toMatchObject({ kind: 'act', requeueAfterMs: 525 });
    const policy = decide(
      makeBoot({}, since),
      makeWorld(),
      ctxAt(T0 + 45_000, { defaultPhaseTimeoutMs: 45_000 }),
    );
    expect(policy).toMatchObject({ kind: 'act', status: { phase: 'Failed' } });
  });

  test('Go durations as the CRD admits them', () => {
    expect(goDurationMs('10m')).toBe(600_000);
    expect(goDurationMs('1h30m')).toBe(5_400_000);
    expect(goDurationMs('1.5s')).toBe(1_500);
    expect(goDurationMs('500ms')).toBe(500);
    expect(goDurationMs('2000000us')).toBe(2_000);
    expect(goDurationMs('ten')).toBeUndefined();
  });
});

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

describe('ending, restoring and failing', () => {
  function endedWorld(): BootWorld {
    return makeWorld({ server: makeServer(true), maintenance: makeMaintenance('Completed') });
  }

  test('the maintenance ending restores the override and the media that were there before', () => {
    const bmc = new FakeBmc();
    bmc.override = { enabled: 'Once', target: 'Pxe', mode: 'UEFI' };
    bmc.media = { device: '/cd', image: 'https://other/old.iso', inserted: true };
    const open = makeWorld({ server: makeServer(true), maintenance: makeMaintenance('InMaintenance') });
    const { boot, now } = drive(
      makeBoot({ maintenanceRef: { name: 'sm1' } }),
      open,
      bmc,
      T0,
      phase('Running'),
    );
    const { boot: done, steps } = drive(boot, endedWorld(), bmc, now, phase('Completed'));
    expect(reasons(steps)).toEqual(['Restoring', 'Completed']);
    expect(bmc.override).toMatchObject({ enabled: 'Once', target: 'Pxe' });
    expect(bmc.media).toMatchObject({ image: 'https://other/old.iso', inserted: true });
    expect(cond(done, 'Restored')?.status).toBe('True');
    expect(done.status?.notRestored).toBeUndefined();
    expect(cond(done, 'Pinned')).toMatchObject({ status: 'False', reason: 'Ended' });
  });

  test('a maintenance being deleted, or a server claimed under a boot without maintenance, end it too', () => {
    const bmc = new FakeBmc();
    const { boot, now } = toRunning(
      bmc,
      { maintenanceRef: { name: 'sm1' } },
      makeWorld({ maintenance: makeMaintenance('InMaintenance') }),
    );
    const deleting = makeMaintenance('InMaintenance', { deletionTimestamp: '2026-08-20T23:00:00Z' });
    expect(step(boot, makeWorld({ maintenance: deleting }), bmc, now).boot.status?.phase).toBe('Restoring');
    const b2 = new FakeBmc();
    const r = toRunning(b2);
    const claimed = step(r.boot, makeWorld({ server: makeServer(true) }), b2, r.now);
    expect(claimed.boot.status?.phase).toBe('Restoring');
    expect(cond(claimed.boot, 'Admitted')?.reason).toBe('ServerClaimed');
  });

  test('spec.restore false keeps the changes at the end, but a deletion still restores them', () => {
    const bmc = new FakeBmc();
    const open = makeWorld({ maintenance: makeMaintenance('InMaintenance') });
    const r = drive(
      makeBoot({ maintenanceRef: { name: 'sm1' }, restore: false }),
      open,
      bmc,
      T0,
      phase('Running'),
    );
    const { boot, now } = drive(r.boot, endedWorld(), bmc, r.now, phase('Completed'));
    expect(cond(boot, 'Restored')).toMatchObject({ status: 'False', reason: 'KeptBySpec' });
    expect(bmc.override).toMatchObject({ enabled: 'Continuous', target: 'Cd' });
    const deleted = { ...boot, metadata: { ...boot.metadata, deletionTimestamp: '2026-08-20T23:00:00Z' } };
    const first = step(deleted, endedWorld(), bmc, now);
    expect(first.decision.actions.map((a) => a.kind)).toEqual(['restoreOverride', 'ejectMedia']);
    const second = step(first.boot, endedWorld(), bmc, now + 1);
    expect(second.decision.releaseFinalizer).toBe(true);
    expect(bmc.override.enabled).toBe('Disabled');
    expect(bmc.media?.inserted).toBe(false);
  });

  test('a failed boot undoes what it did; while the BMC is down it says what it could not undo', () => {
    const bmc = new FakeBmc();
    const r = drive(makeBoot({ phaseTimeout: '30s' }), makeWorld(), bmc, T0, phase('WaitingForPower'));
    const stuck = {
      ...r.boot,
      status: { ...r.boot.status!, phaseSince: new Date(r.now - 31_000).toISOString() },
    };
    const failed = step(stuck, makeWorld(), bmc, r.now);
    expect(failed.boot.status).toMatchObject({ phase: 'Failed', failedPhase: 'WaitingForPower' });
    // The BMC does not answer: the unconfirmed changes stay listed, with why.
    const down = decide(
      failed.boot,
      {
        ...makeWorld(),
        bmc: {
          ok: false,
          error: { code: 'METAL_ERR_REDFISH_CONNECTION', message: 'METAL_ERR_REDFISH_CONNECTION: refused' },
        },
      },
      ctxAt(r.now + 1),
    );
    expect(down).toMatchObject({ kind: 'act', actions: [], requeueAfterMs: 10_000 });
    if (down.kind !== 'act') return;
    expect(down.status?.notRestored).toEqual([
      'boot override not confirmed restored to no override (BMC: METAL_ERR_REDFISH_CONNECTION)',
      `virtual media ${IMAGE} not confirmed ejected (BMC: METAL_ERR_REDFISH_CONNECTION)`,
    ]);
    expect(down.status?.conditions?.find((c) => c.type === 'Restored')).toMatchObject({
      status: 'False',
      reason: 'BMCUnavailable',
    });
    // Back: it restores and clears the list.
    const undo = step(failed.boot, makeWorld(), bmc, r.now + 2);
    expect(undo.decision.actions.map((a) => a.kind)).toEqual(['restoreOverride', 'ejectMedia']);
    expect(undo.boot.status?.notRestored).toEqual([
      'boot override is Continuous Cd, was no override',
      `virtual media ${IMAGE} is inserted`,
    ]);
    const clean = step(undo.boot, makeWorld(), bmc, r.now + 3);
    expect(clean.boot.status?.notRestored).toBeUndefined();
    expect(cond(clean.boot, 'Restored')?.status).toBe('True');
    expect(clean.boot.status?.phase).toBe('Failed');
    expect(bmc.override.enabled).toBe('Disabled');
    expect(bmc.media?.inserted).toBe(false);
    // Settled: nothing more to do, no more BMC calls.
    expect(step(clean.boot, makeWorld(), bmc, r.now + 4).observed).toBe(false);
  });

  test('an override someone else set after the boot is left alone on restore', () => {
    const bmc = new FakeBmc();
    const open = makeWorld({ maintenance: makeMaintenance('InMaintenance') });
    const r = drive(makeBoot({ maintenanceRef: { name: 'sm1' } }), open, bmc, T0, phase('Running'));
    const restoring = step(r.boot, endedWorld(), bmc, r.now).boot;
    bmc.override = { enabled: 'Once', target: 'Pxe' }; // metal-operator arms PXE for the claim
    const s = step(restoring, endedWorld(), bmc, r.now + 1);
    expect(s.decision.actions.map((a) => a.kind)).toEqual(['ejectMedia']);
    expect(s.decision.events.map((e) => e.reason)).toContain('LeftAsIs');
  });
});

describe('deletion', () => {
  const deleted = (b: ServerBoot): ServerBoot => ({
    ...b,
    metadata: { ...b.metadata, deletionTimestamp: '2026-08-20T23:00:00Z' },
  });

  test('in the middle of a phase: restore first, then release the finalizer', () => {
    const bmc = new FakeBmc();
    const r = drive(makeBoot(), makeWorld(), bmc, T0, phase('WaitingForPower'));
    const first = step(deleted(r.boot), makeWorld(), bmc, r.now);
    expect(first.boot.status?.phase).toBe('Restoring');
    expect(first.decision.actions.map((a) => a.kind)).toEqual(['restoreOverride', 'ejectMedia']);
    expect(first.decision.releaseFinalizer).toBeUndefined();
    const second = step(first.boot, makeWorld(), bmc, r.now + 1);
    expect(second.decision).toMatchObject({ releaseFinalizer: true, actions: [] });
    expect(second.decision.events).toEqual([expect.objectContaining({ reason: 'FinalizerReleased' })]);
  });

  test('nothing changed yet, or everything already restored: released without asking the BMC', () => {
    const pending = step(deleted(makeBoot()), makeWorld(), new FakeBmc(), T0);
    expect(pending.observed).toBe(false);
    expect(pending.decision.releaseFinalizer).toBe(true);
    const bmc = new FakeBmc();
    const open = makeWorld({ maintenance: makeMaintenance('InMaintenance') });
    const r = drive(makeBoot({ maintenanceRef: { name: 'sm1' } }), open, bmc, T0, phase('Running'));
    const done = drive(
      r.boot,
      makeWorld({ maintenance: makeMaintenance('Completed') }),
      bmc,
      r.now,
      phase('Completed'),
    );
    const s = step(deleted(done.boot), makeWorld(), bmc, done.now);
    expect(s.observed).toBe(false);
    expect(s.decision.releaseFinalizer).toBe(true);
  });

  test('the BMC unreachable holds the finalizer; the skip-restore annotation releases it with a Warning', () => {
    const bmc = new FakeBmc();
    const r = drive(makeBoot(), makeWorld(), bmc, T0, phase('Running'));
    const gone = decide(
      deleted(r.boot),
      {
        ...makeWorld(),
        bmc: { ok: false, error: { code: 'METAL_ERR_REDFISH_TIMEOUT', message: 'no answer' } },
      },
      ctxAt(r.now),
    );
    expect(gone).toMatchObject({ kind: 'act', requeueAfterMs: 10_000 });
    expect((gone as { releaseFinalizer?: boolean }).releaseFinalizer).toBeUndefined();
    const skip = deleted(r.boot);
    skip.metadata.annotations = { 'maintenance.metal.ironcore.dev/skip-restore': 'true' };
    const s = decide(skip, makeWorld(), ctxAt(r.now));
    expect(s).toMatchObject({ kind: 'act', releaseFinalizer: true });
    if (s.kind === 'act') {
      expect(s.events[0]).toMatchObject({ type: 'Warning', reason: 'FinalizerReleased' });
      expect(s.events[0]!.note).toMatch(/boot override not confirmed restored/);
    }
  });
});

describe('action failures', () => {
  const err = (code: string) => ({ code, message: `${code}: boom` });

  test('a failed reset stays in Resetting and is retried; nothing claims the reset happened', () => {
    const boot = makeBoot(
      {},
      {
        phase: 'Resetting',
        phaseSince: new Date(T0).toISOString(),
        previousBoot: { overrideEnabled: 'Disabled' },
      },
    );
    const d = onActionError(
      boot,
      makeWorld(),
      { kind: 'reset', resetType: 'ForceRestart' },
      err('METAL_ERR_REDFISH_HTTP'),
      ctxAt(T0),
    );
    expect(d).toMatchObject({ kind: 'act', requeueAfterMs: 10_000, status: { phase: 'Resetting' } });
    if (d.kind === 'act') expect(d.events[0]).toMatchObject({ type: 'Warning', reason: 'ActionFailed' });
  });

  test('a failed re-arm marks the pin as broken; an unsupported target fails the boot', () => {
    const running = makeBoot(
      {},
      {
        phase: 'Running',
        phaseSince: new Date(T0).toISOString(),
        previousBoot: { overrideEnabled: 'Disabled' },
      },
    );
    const rearm = {
      kind: 'setOverride' as const,
      request: { target: 'Cd' as const, enabled: 'Once' as const },
    };
    const d = onActionError(running, makeWorld(), rearm, err('METAL_ERR_REDFISH_CONNECTION'), ctxAt(T0));
    expect(d.kind === 'act' && d.status?.conditions?.find((c) => c.type === 'Pinned')).toMatchObject({
      status: 'False',
      reason: 'RearmFailed',
    });
    const setting = makeBoot(
      {},
      {
        phase: 'SettingOverride',
        phaseSince: new Date(T0).toISOString(),
        previousBoot: { overrideEnabled: 'Disabled' },
      },
    );
    const fatal = onActionError(setting, makeWorld(), rearm, err('METAL_ERR_REDFISH_UNSUPPORTED'), ctxAt(T0));
    expect(fatal).toMatchObject({ kind: 'act', status: { phase: 'Failed', failedPhase: 'SettingOverride' } });
  });
});
