// The boot decision without I/O: the maintenance gate, each boot method's phases and the phase
// timeouts, driven against a fake BMC (pinning in pinning.test.ts; ending, undo and deletion in
// ending.test.ts).
import { decide } from './decide.js';
import { goDurationMs } from './draft.js';
import type { BootWorld } from './model.js';
import {
  FakeBmc,
  IMAGE,
  T0,
  cond,
  ctxAt,
  drive,
  makeBoot,
  makeMaintenance,
  makeServer,
  makeWorld,
  phase,
  reasons,
  step,
  toRunning,
} from './testing/boot.js';

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
