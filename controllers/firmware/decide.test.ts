// The firmware decision against an in-memory cluster and BMC (testing/): versions and settings
// end to end, the maintenance gate (all or none behind a BMC), timeouts, retries, refusals, and
// exactly-once when the process dies between an action and its status write.
import { describe, expect, it } from '@jest/globals';
import type { BIOSVersion, BMCVersion, BIOSSettings, BMCSettings } from './model.js';
import { requestMaintenance } from './maintenance.js';
import { ConditionTypes as C, OPERATION_ANNOTATION, OWNER_LABEL } from './model.js';
import { compareVersions } from './version.js';
import { FakeBmc } from './testing/fake-bmc.js';
import { FakeCluster, server } from './testing/fake-cluster.js';

const IMAGE = 'https://images.test/bios/2.0.0';

function biosVersion(spec: Partial<BIOSVersion['spec']> = {}): BIOSVersion {
  return {
    apiVersion: 'system.metal.ironcore.dev/v1alpha1',
    kind: 'BIOSVersion',
    metadata: { name: 'srv-1-bios' },
    spec: { serverRef: { name: 'srv-1' }, version: '2.0.0', image: { URI: IMAGE }, ...spec },
  };
}

function bmcVersion(): BMCVersion {
  return {
    apiVersion: 'baseboard.metal.ironcore.dev/v1alpha1',
    kind: 'BMCVersion',
    metadata: { name: 'bmc-1-fw' },
    spec: { bmcRef: { name: 'bmc-1' }, version: '6.0.0', image: { URI: 'https://images.test/bmc/6.0.0' } },
  };
}

function biosSettings(
  flow: { name: string; priority: number; settings: Record<string, string> }[],
): BIOSSettings {
  return {
    apiVersion: 'system.metal.ironcore.dev/v1alpha1',
    kind: 'BIOSSettings',
    metadata: { name: 'srv-1-settings' },
    spec: { serverRef: { name: 'srv-1' }, version: '1.0.0', settingsFlow: flow },
  };
}

async function toInMaintenance(c: FakeCluster, bmc: FakeBmc): Promise<void> {
  await c.settle(bmc);
  expect(c.state).toBe('InProgress');
  expect(c.condition(C.Progressing)?.reason).toBe('WaitingForMaintenance');
  c.admitAll();
}

describe('compareVersions', () => {
  it('orders numeric segments numerically', () => {
    expect(compareVersions('1.10.0', '1.9.2')).toBeGreaterThan(0);
    expect(compareVersions('1.2', '1.2.0')).toBeLessThan(0);
    expect(compareVersions('2.0.0', '2.0.0')).toBe(0);
  });
});

describe('BIOSVersion', () => {
  it('at the target already: Completed with no maintenance', async () => {
    const c = new FakeCluster('BIOSVersion', biosVersion({ version: '1.0.0' }), [server('srv-1')]);
    const bmc = new FakeBmc({ bios: '1.0.0' });
    await c.settle(bmc);
    expect(c.state).toBe('Completed');
    expect(c.log).toEqual([]);
    expect(bmc.counters.updates).toBe(0);
  });

  it('requests a maintenance, waits for InMaintenance, flashes once, verifies, releases', async () => {
    const c = new FakeCluster('BIOSVersion', biosVersion({ serverMaintenancePolicy: 'Enforced' }), [
      server('srv-1'),
    ]);
    const bmc = new FakeBmc({ bios: '1.0.0' });
    await c.settle(bmc);
    const [m] = [...c.maintenances.values()];
    expect(m?.spec).toMatchObject({
      serverRef: { name: 'srv-1' },
      reason: 'FirmwareUpdate',
      class: 'Planned',
      approval: { required: false },
    });
    expect(m?.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'BIOSVersion', name: 'srv-1-bios' });
    expect((c.obj as BIOSVersion).spec.serverMaintenanceRef?.name).toBe(m?.metadata.name);
    // Waiting: nothing touches the BMC, and no requeue timer (the maintenance's events wake it).
    const waiting = await c.reconcile(bmc);
    expect(waiting.requeueAfterMs).toBeUndefined();
    expect(bmc.counters.updates).toBe(0);
    c.admitAll('Approved');
    await c.settle(bmc);
    expect(bmc.counters.updates).toBe(0);
    c.admitAll();
    for (let i = 0; i < 10 && c.state === 'InProgress'; i++) await c.settle(bmc);
    expect(c.state).toBe('Completed');
    expect(bmc.counters.updates).toBe(1);
    expect(bmc.versions.BIOS).toBe('2.0.0');
    expect(c.maintenances.size).toBe(0);
    expect(c.condition(C.VersionUpgradeCompleted)?.status).toBe('True');
    expect((c.obj as BIOSVersion).status?.upgradeTask).toMatchObject({
      state: 'Completed',
      percentageComplete: 100,
    });
  });

  it('pins the policy boot image on the maintenance it requests (a BMC-initiated reboot comes back into it)', async () => {
    const c = new FakeCluster('BIOSVersion', biosVersion(), [server('srv-1')]);
    c.policy = { ...c.policy, boot: { image: 'https://images.test/maint.iso', method: 'VirtualMedia' } };
    await c.settle(new FakeBmc({ bios: '1.0.0' }));
    expect([...c.maintenances.values()][0]?.spec.boot).toEqual({
      image: 'https://images.test/maint.iso',
      method: 'VirtualMedia',
    });
    expect([...c.maintenances.values()][0]?.spec.approval).toBeUndefined();
  });

  it('resets when the new version is only active after a reset, and waits out the outage', async () => {
    const c = new FakeCluster('BIOSVersion', biosVersion(), [server('srv-1')]);
    const bmc = new FakeBmc({ bios: '1.0.0', activateOnReset: true, outageObservations: 2 });
    await toInMaintenance(c, bmc);
    for (let i = 0; i < 10 && c.state === 'InProgress'; i++) await c.settle(bmc);
    expect(c.state).toBe('Completed');
    expect(bmc.counters.resets).toBe(1);
    expect(bmc.counters.updates).toBe(1);
  });

  it('refuses a downgrade without updatePolicy Force, before any maintenance', async () => {
    const c = new FakeCluster('BIOSVersion', biosVersion({ version: '0.9.0' }), [server('srv-1')]);
    await c.settle(new FakeBmc({ bios: '1.0.0' }));
    expect(c.state).toBe('Failed');
    expect(c.condition(C.Failed)).toMatchObject({ reason: 'DowngradeRefused' });
    expect(c.condition(C.Failed)?.message).toContain('updatePolicy: Force');
    expect(c.maintenances.size).toBe(0);
  });

  it('a downgrade with Force goes ahead', async () => {
    const c = new FakeCluster(
      'BIOSVersion',
      biosVersion({ version: '0.9.0', updatePolicy: 'Force', image: { URI: 'https://i/0.9.0' } }),
      [server('srv-1')],
    );
    const bmc = new FakeBmc({ bios: '1.0.0' });
    await toInMaintenance(c, bmc);
    for (let i = 0; i < 10 && c.state === 'InProgress'; i++) await c.settle(bmc);
    expect(c.state).toBe('Completed');
  });

  it('a failed task: Failed naming the phase and the BMC answer, maintenance released, Event', async () => {
    const c = new FakeCluster('BIOSVersion', biosVersion(), [server('srv-1')]);
    const bmc = new FakeBmc({ bios: '1.0.0', taskOutcome: 'failure' });
    await toInMaintenance(c, bmc);
    for (let i = 0; i < 10 && c.state === 'InProgress'; i++) await c.settle(bmc);
    expect(c.state).toBe('Failed');
    expect(c.condition(C.Failed)).toMatchObject({ reason: 'UpgradeTaskFailed' });
    expect(c.condition(C.Failed)?.message).toMatch(
      /^Flashing: task .* Exception 99%: Applying the image failed/,
    );
    expect(c.maintenances.size).toBe(0);
    expect(c.events.some((e) => e.startsWith('Warning UpgradeTaskFailed'))).toBe(true);
  });

  it('a stalled task fails at the task timeout, with the requeue never past the deadline', async () => {
    const c = new FakeCluster('BIOSVersion', biosVersion(), [server('srv-1')]);
    const bmc = new FakeBmc({ bios: '1.0.0', taskOutcome: 'stuck' });
    await toInMaintenance(c, bmc);
    let d = await c.settle(bmc);
    expect(c.condition(C.Progressing)?.reason).toBe('Flashing');
    let waited = 0;
    while (c.state === 'InProgress' && waited < 2 * c.policy.timeouts.task) {
      const delay = d.requeueAfterMs ?? 0;
      expect(delay).toBeGreaterThan(0);
      expect(delay).toBeLessThanOrEqual(2_000);
      c.advance(delay);
      waited += delay;
      d = await c.reconcile(bmc);
    }
    expect(c.state).toBe('Failed');
    expect(waited).toBeLessThanOrEqual(c.policy.timeouts.task + 2_000);
    expect(c.condition(C.Failed)).toMatchObject({ reason: 'PhaseTimeout' });
    expect(c.condition(C.Failed)?.message).toMatch(
      /^Flashing: no result within 10m; last BMC answer: task .* Running 50%/,
    );
    // Released by the next reconcile, which the failing one asked for at once.
    expect(d.requeueAfterMs).toBe(0);
    await c.reconcile(bmc);
    expect(c.maintenances.size).toBe(0);
    expect(bmc.counters.updates).toBe(1);
  });

  it('retries automatically after the backoff with a new maintenance, up to maxAttempts', async () => {
    const c = new FakeCluster('BIOSVersion', biosVersion({ retryPolicy: { maxAttempts: 1 } }), [
      server('srv-1'),
    ]);
    const bmc = new FakeBmc({ bios: '1.0.0', taskOutcome: 'failure' });
    await toInMaintenance(c, bmc);
    for (let i = 0; i < 10 && c.state === 'InProgress'; i++) await c.settle(bmc);
    expect(c.state).toBe('Failed');
    const early = await c.reconcile(bmc);
    expect(c.state).toBe('Failed');
    expect(early.requeueAfterMs).toBeGreaterThan(50_000);
    c.advance(60_000);
    bmc.taskOutcome = 'success';
    await toInMaintenance(c, bmc);
    const names = [...c.maintenances.keys()];
    expect(names).toEqual(['biosv-srv-1-bios-uidobj-1']);
    for (let i = 0; i < 10 && c.state === 'InProgress'; i++) await c.settle(bmc);
    expect(c.state).toBe('Completed');
    expect(c.obj.status?.failedAttempts).toBe(1);
  });

  it('no retries left: stays Failed until the operation: retry annotation', async () => {
    const c = new FakeCluster('BIOSVersion', biosVersion({ retryPolicy: { maxAttempts: 0 } }), [
      server('srv-1'),
    ]);
    const bmc = new FakeBmc({ bios: '1.0.0', taskOutcome: 'failure' });
    await toInMaintenance(c, bmc);
    for (let i = 0; i < 10 && c.state === 'InProgress'; i++) await c.settle(bmc);
    c.advance(3_600_000);
    const d = await c.reconcile(bmc);
    expect(c.state).toBe('Failed');
    expect(d.requeueAfterMs).toBeUndefined();
    c.obj.metadata.annotations = { ...c.obj.metadata.annotations, [OPERATION_ANNOTATION]: 'retry' };
    bmc.taskOutcome = 'success';
    await toInMaintenance(c, bmc);
    expect(c.obj.metadata.annotations?.[OPERATION_ANNOTATION]).toBeUndefined();
    for (let i = 0; i < 10 && c.state === 'InProgress'; i++) await c.settle(bmc);
    expect(c.state).toBe('Completed');
  });

  it('a maintenance that fails underneath: Failed (MaintenanceLost), nothing flashed', async () => {
    const c = new FakeCluster('BIOSVersion', biosVersion(), [server('srv-1')]);
    const bmc = new FakeBmc({ bios: '1.0.0' });
    await c.settle(bmc);
    c.admitAll('Failed');
    await c.settle(bmc);
    expect(c.state).toBe('Failed');
    expect(c.condition(C.Failed)?.reason).toBe('MaintenanceLost');
    expect(bmc.counters.updates).toBe(0);
  });

  it("a child re-created under the same name while the old one's maintenance is still terminating: one attempt, its own maintenance", async () => {
    const c = new FakeCluster('BIOSVersion', biosVersion(), [server('srv-1')]);
    c.obj.metadata.uid = 'b7c1d2e3-new';
    // The deleted child's attempt 0, held up by the maintenance controller's finalizer.
    const old = {
      ...requestMaintenance(
        'BIOSVersion',
        { ...c.obj, metadata: { ...c.obj.metadata, uid: 'a0f9e8d7-old' } },
        'srv-1',
        0,
        c.ctx(),
      ),
    };
    old.metadata = { ...old.metadata, uid: 'm-old', deletionTimestamp: '2026-12-01T09:59:59Z' };
    old.status = { state: 'InMaintenance' };
    c.maintenances.set(old.metadata.name ?? '', old);
    const bmc = new FakeBmc({ bios: '1.0.0' });
    await c.settle(bmc);
    expect(c.state).toBe('InProgress');
    expect(c.condition(C.Progressing)?.reason).toBe('WaitingForMaintenance');
    const mine = [...c.maintenances.values()].filter(
      (m) => m.metadata.labels?.[OWNER_LABEL] === c.obj.metadata.uid,
    );
    expect(mine).toHaveLength(1);
    expect(mine[0]!.metadata.name).not.toBe(old.metadata.name);
    c.admit('srv-1');
    c.maintenances.delete(old.metadata.name ?? '');
    for (let i = 0; i < 10 && c.state === 'InProgress'; i++) {
      await c.settle(bmc);
      c.advance(3_000);
    }
    expect(c.state).toBe('Completed');
    expect(c.obj.status?.failedAttempts ?? 0).toBe(0);
    expect(bmc.counters.updates).toBe(1);
  });

  it('exactly once: a crash after every action never posts SimpleUpdate twice', async () => {
    const c = new FakeCluster('BIOSVersion', biosVersion(), [server('srv-1')]);
    const bmc = new FakeBmc({ bios: '1.0.0', activateOnReset: true });
    for (let i = 0; i < 40 && c.state !== 'Completed'; i++) {
      c.admitAll();
      const d = await c.reconcile(bmc, { crash: true });
      // The crash lost the status write; the actions happened. Reconcile again from the old status.
      if (d.actions.length > 0) await c.reconcile(bmc);
      else await c.reconcile(bmc);
    }
    expect(c.state).toBe('Completed');
    await c.settle(bmc);
    expect(bmc.counters.updates).toBe(1);
    expect(c.maintenances.size).toBe(0);
  });
});

describe('BMCVersion: one BMC, many servers', () => {
  const servers = [server('srv-1'), server('srv-2'), server('srv-3')];

  it('flashes once only when every server behind the BMC is InMaintenance', async () => {
    const c = new FakeCluster('BMCVersion', bmcVersion(), servers);
    const bmc = new FakeBmc({ bmc: '5.0.0' });
    await c.settle(bmc);
    expect(c.maintenances.size).toBe(3);
    expect((c.obj as BMCVersion).spec.serverMaintenanceRefs).toHaveLength(3);
    // One gang: the webhook admits the BMC's servers together or not at all.
    const gangs = [...c.maintenances.values()].map((m) => m.spec.gang);
    expect(new Set(gangs.map((g) => g?.name)).size).toBe(1);
    expect(gangs.every((g) => g?.size === 3 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(g.name))).toBe(true);
    c.admit('srv-1');
    c.admit('srv-2');
    const d = await c.settle(bmc);
    expect(bmc.counters.updates).toBe(0);
    expect(d.requeueAfterMs).toBeGreaterThan(0);
    expect(c.condition(C.ServerMaintenanceWaiting)?.message).toContain('2/3');
    c.admit('srv-3');
    for (let i = 0; i < 10 && c.state === 'InProgress'; i++) await c.settle(bmc);
    expect(c.state).toBe('Completed');
    expect(bmc.counters.updates).toBe(1);
    expect(c.maintenances.size).toBe(0);
  });

  it('servers never all admitted: all released after the admission timeout (BudgetTooSmall)', async () => {
    const c = new FakeCluster('BMCVersion', bmcVersion(), servers);
    const bmc = new FakeBmc({ bmc: '5.0.0' });
    await c.settle(bmc);
    c.admit('srv-1');
    await c.settle(bmc);
    c.advance(c.policy.timeouts.admission);
    await c.settle(bmc);
    expect(c.state).toBe('Failed');
    expect(c.condition(C.Failed)?.reason).toBe('BudgetTooSmall');
    expect(c.maintenances.size).toBe(0);
    expect(bmc.counters.updates).toBe(0);
  });
});

describe('BIOSSettings', () => {
  const attrs = { BootMode: 'Uefi', SriovGlobalEnable: 'Disabled', ProcTurboMode: 'Enabled', AssetTag: 'x' };

  it('all already set: Applied with no maintenance', async () => {
    const c = new FakeCluster(
      'BIOSSettings',
      biosSettings([{ name: 'a', priority: 1, settings: { BootMode: 'Uefi' } }]),
      [server('srv-1')],
    );
    await c.settle(new FakeBmc({ attributes: attrs }));
    expect(c.state).toBe('Applied');
    expect(c.maintenances.size).toBe(0);
  });

  it('refuses unknown and read-only attributes up front, naming them', async () => {
    const c = new FakeCluster(
      'BIOSSettings',
      biosSettings([{ name: 'a', priority: 1, settings: { NoSuchThing: '1', AssetTag: 'y' } }]),
      [server('srv-1')],
    );
    const bmc = new FakeBmc({ attributes: attrs, readOnly: ['AssetTag'] });
    await c.settle(bmc);
    expect(c.state).toBe('Failed');
    expect(c.condition(C.Failed)?.reason).toBe('AttributeRefused');
    expect(c.condition(C.Failed)?.message).toContain('NoSuchThing (not exposed by this BMC)');
    expect(c.condition(C.Failed)?.message).toContain('AssetTag (read-only');
    expect(c.maintenances.size).toBe(0);
    expect(bmc.counters.writes).toBe(0);
  });

  it('items in priority order, only differing attributes written, each verified after a reset', async () => {
    const c = new FakeCluster(
      'BIOSSettings',
      biosSettings([
        { name: 'second', priority: 20, settings: { ProcTurboMode: 'Disabled' } },
        { name: 'first', priority: 10, settings: { BootMode: 'Uefi', SriovGlobalEnable: 'Enabled' } },
      ]),
      [server('srv-1')],
    );
    const bmc = new FakeBmc({ attributes: attrs });
    await toInMaintenance(c, bmc);
    for (let i = 0; i < 10 && c.state === 'InProgress'; i++) await c.settle(bmc);
    expect(c.state).toBe('Applied');
    expect(bmc.counters.written).toEqual([{ SriovGlobalEnable: 'Enabled' }, { ProcTurboMode: 'Disabled' }]);
    expect(bmc.counters.resets).toBe(2);
    const flow = (c.obj as BIOSSettings).status?.flowState ?? [];
    expect(flow.map((f) => [f.name, f.flowState])).toEqual([
      ['first', 'Applied'],
      ['second', 'Applied'],
    ]);
    expect(flow.every((f) => typeof f.lastAppliedTime === 'string')).toBe(true);
    expect(c.maintenances.size).toBe(0);
  });

  it('exactly once: crashes after writes and resets write every attribute once', async () => {
    const c = new FakeCluster(
      'BIOSSettings',
      biosSettings([
        { name: 'first', priority: 1, settings: { SriovGlobalEnable: 'Enabled' } },
        { name: 'second', priority: 2, settings: { ProcTurboMode: 'Disabled' } },
      ]),
      [server('srv-1')],
    );
    const bmc = new FakeBmc({ attributes: attrs });
    for (let i = 0; i < 40 && c.state !== 'Applied'; i++) {
      c.admitAll();
      await c.reconcile(bmc, { crash: true });
      await c.reconcile(bmc);
    }
    expect(c.condition(C.Failed)?.message).toBeUndefined();
    expect(c.state).toBe('Applied');
    expect(bmc.counters.written).toEqual([{ SriovGlobalEnable: 'Enabled' }, { ProcTurboMode: 'Disabled' }]);
  });

  it('a value that never takes: Failed at the reboot timeout naming the attribute', async () => {
    const c = new FakeCluster(
      'BIOSSettings',
      biosSettings([{ name: 'a', priority: 1, settings: { ProcTurboMode: 'Disabled' } }]),
      [server('srv-1')],
    );
    const bmc = new FakeBmc({ attributes: attrs });
    bmc.reset = async () => {
      await Promise.resolve();
      bmc.pending = {};
    };
    await toInMaintenance(c, bmc);
    await c.settle(bmc);
    c.advance(2_000);
    await c.reconcile(bmc);
    c.advance(c.policy.timeouts.reboot);
    await c.settle(bmc);
    expect(c.state).toBe('Failed');
    expect(c.condition(C.Failed)?.message).toMatch(
      /^Rebooting: .*ProcTurboMode="Enabled" \(want "Disabled"\)/,
    );
    expect(c.maintenances.size).toBe(0);
  });
});

describe('BIOSSettings that fail with values staged', () => {
  const attrs = { ProcTurboMode: 'Enabled' };
  /** ProcTurboMode=Disabled staged inside the maintenance by a BMC whose resets never apply it. */
  function stagedAndStuck(): { c: FakeCluster; bmc: FakeBmc } {
    const c = new FakeCluster(
      'BIOSSettings',
      biosSettings([{ name: 'a', priority: 1, settings: { ProcTurboMode: 'Disabled' } }]),
      [server('srv-1')],
    );
    const bmc = new FakeBmc({ attributes: attrs });
    bmc.reset = async () => {
      await Promise.resolve();
      bmc.counters.resets++;
    };
    return { c, bmc };
  }
  it('discards what it staged and no reset applied, then releases the maintenance', async () => {
    // The reset never applies what is staged: the value stays pending until the reboot timeout.
    const { c, bmc } = stagedAndStuck();
    let heldAtDiscard: number | undefined;
    const discard = bmc.discardStaged.bind(bmc);
    bmc.discardStaged = async (...args) => {
      heldAtDiscard = c.maintenances.size;
      return discard(...args);
    };
    await toInMaintenance(c, bmc);
    await c.settle(bmc);
    expect(bmc.pending).toEqual({ ProcTurboMode: 'Disabled' });
    c.advance(c.policy.timeouts.reboot);
    await c.settle(bmc);
    expect(c.state).toBe('Failed');
    expect(bmc.counters.discarded).toEqual([['ProcTurboMode']]);
    expect(heldAtDiscard).toBe(1);
    expect(bmc.pending).toEqual({});
    expect(c.condition(C.StagedDiscarded)).toMatchObject({ status: 'True', reason: 'Discarded' });
    expect(c.maintenances.size).toBe(0);
  });

  it('a discard the BMC refuses is not retried: the maintenance is released, the condition says what may remain', async () => {
    const { c, bmc } = stagedAndStuck();
    let tries = 0;
    bmc.discardStaged = async () => {
      await Promise.resolve();
      tries++;
      throw Object.assign(new Error('HTTP 400 SYS011 pending values already committed'), {
        code: 'METAL_ERR_REDFISH_HTTP',
      });
    };
    await toInMaintenance(c, bmc);
    await c.settle(bmc);
    c.advance(c.policy.timeouts.reboot);
    for (let i = 0; i < 5; i++) await c.settle(bmc);
    expect(c.state).toBe('Failed');
    expect(tries).toBe(1);
    expect(c.condition(C.StagedDiscarded)).toMatchObject({ status: 'False', reason: 'DiscardFailed' });
    expect(c.condition(C.StagedDiscarded)?.message).toContain('ProcTurboMode may apply at the next reset');
    expect(c.maintenances.size).toBe(0);
  });
});

describe('BMCSettings', () => {
  it('records what was applied per item and attribute (ETag and value hash)', async () => {
    const obj = {
      apiVersion: 'baseboard.metal.ironcore.dev/v1alpha1',
      kind: 'BMCSettings',
      metadata: { name: 'bmc-1-settings' },
      spec: {
        bmcRef: { name: 'bmc-1' },
        version: '5.0.0',
        settingsFlow: [{ name: 'ntp', priority: 1, settings: { NTPServer: '10.0.0.1' } }],
      },
    } as BMCSettings;
    const c = new FakeCluster('BMCSettings', obj, [server('srv-1'), server('srv-2')]);
    const bmc = new FakeBmc({ attributes: { NTPServer: 'pool.ntp.org' } });
    await toInMaintenance(c, bmc);
    for (let i = 0; i < 10 && c.state === 'InProgress'; i++) await c.settle(bmc);
    expect(c.state).toBe('Applied');
    const tags = (c.obj as BMCSettings).status?.appliedETags ?? {};
    expect(tags['ntp/NTPServer']?.valueHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(tags['ntp/NTPServer']?.etag).toBeDefined();
    expect(JSON.stringify(tags)).not.toContain('10.0.0.1');
  });
});
