// A MaintenancePipelineRun's children (docs/pipeline.md, "What the firmware controller must do"):
// the run's maintenances are used, never requested or released by the child; a failed child does
// not retry on its own; Suspend is not reconciled; Observe reads the hardware only and turns a
// difference into Pending (drift) without a maintenance or a write.
import { describe, expect, it } from '@jest/globals';
import type { BIOSSettings, BIOSVersion } from './model.js';
import { ConditionTypes as C } from './model.js';
import { FakeBmc } from './testing/fake-bmc.js';
import { FakeCluster, server } from './testing/fake-cluster.js';

function biosVersion(spec: Partial<BIOSVersion['spec']> = {}): BIOSVersion {
  return {
    apiVersion: 'system.metal.ironcore.dev/v1alpha1',
    kind: 'BIOSVersion',
    metadata: { name: 'run-srv-1-bios', labels: { 'maintenance.metal.ironcore.dev/pipeline-run': 'run' } },
    spec: {
      serverRef: { name: 'srv-1' },
      version: '2.0.0',
      image: { URI: 'https://images.test/bios/2.0.0' },
      ...spec,
    },
  };
}

function biosSettings(): BIOSSettings {
  return {
    apiVersion: 'system.metal.ironcore.dev/v1alpha1',
    kind: 'BIOSSettings',
    metadata: { name: 'run-srv-1-tune' },
    spec: {
      serverRef: { name: 'srv-1' },
      version: '1.0.0',
      settingsFlow: [{ name: 'boot', priority: 1, settings: { BootMode: 'Uefi' } }],
    },
  };
}

const creates = (c: FakeCluster) => c.log.filter((l) => l.startsWith('create') || l.startsWith('delete'));

describe('a run-held child', () => {
  it("waits for the run's maintenance, flashes inside it, and leaves it to the run", async () => {
    const c = new FakeCluster('BIOSVersion', biosVersion(), [server('srv-1')]);
    c.holdForRun('Announced');
    const bmc = new FakeBmc({ bios: '1.0.0' });
    await c.settle(bmc);
    expect(c.condition(C.Progressing)?.reason).toBe('WaitingForMaintenance');
    expect(bmc.counters.updates).toBe(0);
    c.admitAll();
    for (let i = 0; i < 20 && c.state !== 'Completed'; i++) {
      await c.settle(bmc);
      c.advance(3_000);
    }
    expect(c.state).toBe('Completed');
    expect(bmc.counters.updates).toBe(1);
    expect(creates(c)).toEqual([]);
    expect(c.maintenances.has('run-srv-1')).toBe(true);
    expect((c.obj.spec as { serverMaintenanceRef?: { name: string } }).serverMaintenanceRef?.name).toBe(
      'run-srv-1',
    );
    expect(c.obj.status?.observedGeneration).toBe(c.obj.metadata.generation);
  });

  it('starts at once when the run already holds the server InMaintenance', async () => {
    const c = new FakeCluster('BIOSVersion', biosVersion(), [server('srv-1')]);
    c.holdForRun('InMaintenance');
    const bmc = new FakeBmc({ bios: '1.0.0' });
    for (let i = 0; i < 20 && c.state !== 'Completed'; i++) {
      await c.settle(bmc);
      c.advance(3_000);
    }
    expect(c.state).toBe('Completed');
    expect(bmc.counters.updates).toBe(1);
    expect(creates(c)).toEqual([]);
  });

  it('fails when the run lost its maintenance and does not retry by itself', async () => {
    const c = new FakeCluster('BIOSVersion', biosVersion(), [server('srv-1')]);
    c.holdForRun('InMaintenance');
    c.maintenances.clear();
    const bmc = new FakeBmc({ bios: '1.0.0' });
    await c.settle(bmc);
    expect(c.state).toBe('Failed');
    expect(c.condition(C.Failed)?.reason).toBe('MaintenanceLost');
    c.advance(24 * 3600_000);
    const d = await c.settle(bmc);
    expect(c.state).toBe('Failed');
    expect(d.requeueAfterMs).toBeUndefined();
    expect(creates(c)).toEqual([]);
    expect(bmc.counters.updates).toBe(0);
  });
});

describe('spec.driftPolicy', () => {
  it('Suspend: nothing is read, written or recorded', async () => {
    const c = new FakeCluster('BIOSVersion', biosVersion({ driftPolicy: 'Suspend' }), [server('srv-1')]);
    const bmc = new FakeBmc({ bios: '1.0.0' });
    const d = await c.reconcile(bmc);
    expect(d.status).toBeUndefined();
    expect(d.actions).toEqual([]);
    expect(c.state).toBeUndefined();
    expect(bmc.counters.updates).toBe(0);
  });

  it('Observe: a matching BMC stays Applied; a changed attribute is drift, Pending, with no write', async () => {
    const c = new FakeCluster('BIOSSettings', biosSettings(), [server('srv-1')]);
    c.obj.spec.driftPolicy = 'Observe';
    c.obj.status = { state: 'Applied' };
    const bmc = new FakeBmc({ attributes: { BootMode: 'Uefi' } });
    const d = await c.reconcile(bmc);
    expect(c.state).toBe('Applied');
    expect(d.requeueAfterMs).toBeGreaterThan(0);
    bmc.attributes.BootMode = 'Legacy';
    await c.reconcile(bmc);
    expect(c.state).toBe('Pending');
    expect(c.condition(C.Progressing)).toMatchObject({ status: 'False', reason: 'DriftDetected' });
    expect(c.obj.status?.observedGeneration).toBe(c.obj.metadata.generation);
    expect(c.events.some((e) => e.startsWith('Warning DriftDetected'))).toBe(true);
    expect(bmc.counters.writes).toBe(0);
    expect(creates(c)).toEqual([]);
  });

  it('Observe on a version hop: older is drift, newer (a later hop) is not', async () => {
    const c = new FakeCluster('BIOSVersion', biosVersion({ driftPolicy: 'Observe' }), [server('srv-1')]);
    c.obj.status = { state: 'Completed' };
    const bmc = new FakeBmc({ bios: '3.0.0' });
    await c.reconcile(bmc);
    expect(c.state).toBe('Completed');
    bmc.versions.BIOS = '1.0.0';
    await c.reconcile(bmc);
    expect(c.state).toBe('Pending');
    expect(bmc.counters.updates).toBe(0);
  });
});

describe('drift repaired: a settings child re-activated after its hardware changed', () => {
  /** Runs the child until it settles (at most `rounds` reconciles, 3 s apart). */
  async function untilSettled(c: FakeCluster, bmc: FakeBmc, rounds = 30): Promise<void> {
    for (let i = 0; i < rounds; i++) {
      await c.settle(bmc);
      if (c.state === 'Applied' || c.state === 'Failed') return;
      c.advance(3_000);
    }
  }

  /** Plays the run: settle the child to Observe, or re-activate it (driftPolicy cleared). */
  function setDriftPolicy(c: FakeCluster, policy: 'Observe' | undefined): void {
    const spec = c.obj.spec as { driftPolicy?: string };
    if (policy) spec.driftPolicy = policy;
    else delete spec.driftPolicy;
    c.obj.metadata.generation = (c.obj.metadata.generation ?? 0) + 1;
  }

  for (const kind of ['BIOSSettings', 'BMCSettings'] as const) {
    it(`${kind}: writes the changed attribute again instead of settling Applied from the last attempt's record`, async () => {
      const obj =
        kind === 'BIOSSettings'
          ? biosSettings()
          : ({
              apiVersion: 'baseboard.metal.ironcore.dev/v1alpha1',
              kind: 'BMCSettings',
              metadata: { name: 'run-bmc-tune' },
              spec: {
                bmcRef: { name: 'bmc-1' },
                version: '5.0.0',
                settingsFlow: [{ name: 'boot', priority: 1, settings: { BootMode: 'Uefi' } }],
              },
            } as unknown as BIOSSettings);
      const c = new FakeCluster(kind, obj, [server('srv-1')]);
      c.holdForRun('InMaintenance');
      const bmc = new FakeBmc({ attributes: { BootMode: 'Legacy' } });
      await untilSettled(c, bmc);
      expect(c.state).toBe('Applied');
      expect(bmc.counters.writes).toBe(1);
      // The run settles it; a factory reset puts the old value back; Observe sees the drift.
      setDriftPolicy(c, 'Observe');
      await c.reconcile(bmc);
      expect(c.state).toBe('Applied');
      bmc.attributes.BootMode = 'Legacy';
      await c.reconcile(bmc);
      expect(c.state).toBe('Pending');
      // The run re-activates it inside a new hold: the value is written again and read back.
      setDriftPolicy(c, undefined);
      await untilSettled(c, bmc);
      expect(c.state).toBe('Applied');
      expect(bmc.counters.writes).toBe(2);
      expect(bmc.attributes.BootMode).toBe('Uefi');
      // Settled again, it finds nothing to report: the loop is closed.
      setDriftPolicy(c, 'Observe');
      await c.reconcile(bmc);
      expect(c.state).toBe('Applied');
      expect(creates(c)).toEqual([]);
    });
  }
});
