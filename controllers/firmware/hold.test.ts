// A child held by its Set: requests nothing while held, withdraws a maintenance it is still
// waiting for (settling first, releasing next), is not retried while Failed, and ignores the hold
// once past its maintenance gate (it finishes: nothing half-applied).
import { describe, expect, it } from '@jest/globals';
import type { BIOSVersion } from './model.js';
import { ConditionTypes as C } from './model.js';
import { HELD_REASON } from './hold.js';
import { HOLD_ANNOTATION } from './sets/model.js';
import { FakeBmc } from './testing/fake-bmc.js';
import { FakeCluster, server } from './testing/fake-cluster.js';

function child(hold?: string): BIOSVersion {
  return {
    apiVersion: 'system.metal.ironcore.dev/v1alpha1',
    kind: 'BIOSVersion',
    metadata: { name: 'fleet-srv-1', ...(hold ? { annotations: { [HOLD_ANNOTATION]: hold } } : {}) },
    spec: {
      serverRef: { name: 'srv-1' },
      version: '2.0.0',
      serverMaintenancePolicy: 'Enforced',
      image: { URI: 'https://images.test/bios/2.0.0' },
    },
  };
}

/** Settles an admitted child until it leaves InProgress (each settle covers one BMC wait). */
async function finish(c: FakeCluster, bmc: FakeBmc): Promise<void> {
  for (let i = 0; i < 10 && c.state === 'InProgress'; i++) await c.settle(bmc);
}

const setHold = (c: FakeCluster, hold: string | undefined) => {
  const a = { ...c.obj.metadata.annotations };
  if (hold) a[HOLD_ANNOTATION] = hold;
  else delete a[HOLD_ANNOTATION];
  c.obj.metadata.annotations = a;
};

describe('a child held by its Set', () => {
  it('requests no maintenance and touches no BMC while held; runs once released', async () => {
    const c = new FakeCluster('BIOSVersion', child('Queued'), [server('srv-1')]);
    const bmc = new FakeBmc({ bios: '1.0.0' });
    await c.settle(bmc);
    expect(c.state).toBe('Pending');
    expect(c.condition(C.Progressing)).toMatchObject({ status: 'False', reason: HELD_REASON });
    expect(c.maintenances.size).toBe(0);
    expect(bmc.counters.updates).toBe(0);
    setHold(c, undefined);
    await c.settle(bmc);
    c.admitAll();
    await finish(c, bmc);
    expect(c.state).toBe('Completed');
    expect(bmc.counters.updates).toBe(1);
  });

  it('withdraws a maintenance it waits for: Pending first, released next, even across a crash', async () => {
    const c = new FakeCluster('BIOSVersion', child(), [server('srv-1')]);
    const bmc = new FakeBmc({ bios: '1.0.0' });
    await c.settle(bmc);
    expect(c.condition(C.Progressing)?.reason).toBe('WaitingForMaintenance');
    expect(c.maintenances.size).toBe(1);
    setHold(c, 'ShortCircuited');
    const settle = await c.reconcile(bmc);
    expect(settle.actions).toEqual([]);
    expect(c.state).toBe('Pending');
    expect(c.maintenances.size).toBe(1);
    // The hold is lifted before the release ran (a crash, or a quick resume): the old maintenance
    // is still released before a new attempt starts, so no grant is left behind.
    setHold(c, undefined);
    const release = await c.reconcile(bmc, { crash: true });
    expect(release.actions.map((a) => a.kind)).toEqual(['deleteMaintenance']);
    expect(c.maintenances.size).toBe(0);
    await c.settle(bmc);
    expect(c.condition(C.Progressing)?.reason).toBe('WaitingForMaintenance');
    const names = [...c.maintenances.keys()];
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(/-1$/); // a new attempt, not the withdrawn one
    c.admitAll();
    await finish(c, bmc);
    expect(c.state).toBe('Completed');
    expect(bmc.counters.updates).toBe(1);
    expect(c.maintenances.size).toBe(0);
  });

  it('ignores the hold once past its gate and finishes', async () => {
    const c = new FakeCluster('BIOSVersion', child(), [server('srv-1')]);
    const bmc = new FakeBmc({ bios: '1.0.0' });
    await c.settle(bmc);
    c.admitAll();
    await c.reconcile(bmc);
    await c.reconcile(bmc);
    expect(['Issuing', 'Flashing']).toContain(c.condition(C.Progressing)?.reason);
    setHold(c, 'Paused');
    await finish(c, bmc);
    expect(c.state).toBe('Completed');
    expect(bmc.counters.updates).toBe(1);
  });

  it('a held Completed child whose spec changed waits instead of starting a new attempt', async () => {
    const c = new FakeCluster('BIOSVersion', child(), [server('srv-1')]);
    const bmc = new FakeBmc({ bios: '1.0.0' });
    await c.settle(bmc);
    c.admitAll();
    await finish(c, bmc);
    expect(c.state).toBe('Completed');
    c.obj.spec = { ...c.obj.spec, version: '3.0.0' };
    c.obj.metadata.generation = (c.obj.metadata.generation ?? 0) + 1;
    setHold(c, 'Queued');
    await c.settle(bmc);
    expect(c.state).toBe('Pending');
    expect(c.condition(C.Progressing)?.reason).toBe(HELD_REASON);
    expect(c.maintenances.size).toBe(0);
    setHold(c, undefined);
    await c.settle(bmc);
    expect(c.condition(C.Progressing)?.reason).toBe('WaitingForMaintenance');
  });

  it('a held Failed child is not retried', async () => {
    const c = new FakeCluster('BIOSVersion', child(), [server('srv-1')]);
    c.policy = { ...c.policy, defaultMaxAttempts: 3, retryBackoffMs: 1_000 };
    const bmc = new FakeBmc({ bios: '1.0.0' });
    await c.settle(bmc);
    c.admitAll('Failed');
    await c.settle(bmc);
    expect(c.state).toBe('Failed');
    setHold(c, 'ShortCircuited');
    c.advance(600_000);
    await c.settle(bmc);
    expect(c.state).toBe('Failed');
    expect(c.maintenances.size).toBe(0);
    setHold(c, undefined);
    await c.settle(bmc);
    expect(c.state).toBe('InProgress');
  });
});
