// The end of a boot without I/O: restore, failure undo, deletion and action failures, driven against
// a fake BMC.
import { decide, onActionError } from './decide.js';
import type { BootWorld, ServerBoot } from './model.js';
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
