// decideRun over a run in memory (testing/fake-world.ts), the maintenance and firmware controllers
// played by hand: one maintenance per server for the whole run, taints on for the run and off at
// its end, stages strictly in order, a failed lane given back, a lost hold never replaced, a
// deleted pipeline stopping at a safe point, a restart finding its maintenances, drift repaired in
// place.
import { describe, expect, it } from '@jest/globals';
import type { PipelineStage } from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import { PIPELINE_TAINT_KEY } from '../../contract/names.js';
import { childName } from '../../contract/pipeline/status.js';
import { FakeRunWorld, pipelineOf } from './testing/fake-world.js';

const STAGES: PipelineStage[] = [
  {
    name: 'bmc-fw',
    kind: 'BMCVersion',
    template: { version: '2.0.0', image: { URI: 'https://img/bmc-2.0.0' } },
  },
  {
    name: 'bios-tune',
    kind: 'BIOSSettings',
    template: {
      version: '1.0.0',
      settingsFlow: [{ name: 'boot', priority: 1, settings: { BootMode: 'Uefi' } }],
    },
  },
  {
    name: 'bios-fw',
    kind: 'BIOSVersion',
    template: { version: '3.0.0', image: { URI: 'https://img/bios-3.0.0' } },
  },
];
const RUN = 'fleet-bmc-1';
const child = (stage: string, server?: string) => childName(RUN, stage, server);
const world = (stages = STAGES, servers = ['s1', 's2']) => new FakeRunWorld(pipelineOf(stages), servers);

/** Drive the run: admit, let every active child finish, until it settles in a terminal phase. */
function runToEnd(w: FakeRunWorld, rounds = 12): void {
  for (let i = 0; i < rounds; i++) {
    w.settle();
    w.admitAll();
    w.settle();
    w.finish();
    const phase = w.settle().status.phase;
    if (phase === 'Completed' || phase === 'Failed') return;
  }
}

describe('decideRun: the run holds its servers', () => {
  it('takes one maintenance and the taint per server first, and stamps nothing before they are InMaintenance', () => {
    const w = world();
    const d = w.settle();
    expect(w.created).toEqual(['fleet-bmc-1-s1', 'fleet-bmc-1-s2']);
    expect(w.taintsOn('s1')).toEqual([`${PIPELINE_TAINT_KEY}=${RUN}:NoBind`]);
    expect(w.children.size).toBe(0);
    expect(d.status.phase).toBe('InProgress');
    expect(d.status.conditions?.find((c) => c.type === 'Progressing')?.reason).toBe('WaitingForMaintenance');
    const m = w.maintenances.get('fleet-bmc-1-s1')!;
    expect(m.spec.reason).toBe('FirmwareUpdate');
    expect(m.metadata.labels?.['maintenance.metal.ironcore.dev/pipeline-run']).toBe(RUN);
    // A BMC stage: the run's servers are one gang, admitted together.
    expect(m.spec.gang?.size).toBe(2);
    expect(w.maintenances.get('fleet-bmc-1-s2')!.spec.gang).toEqual(m.spec.gang);
  });

  it('runs every stage in order inside those two maintenances, then gives both back and removes the taints', () => {
    const w = world();
    w.settle();
    w.admitAll();
    w.settle();
    // The BMC stage first, for both servers, referencing the run's maintenances.
    expect([...w.children.keys()]).toEqual([child('bmc-fw')]);
    expect(w.children.get(child('bmc-fw'))!.spec.serverMaintenanceRefs).toEqual([
      { namespace: 'metal-maintenance-system', name: 'fleet-bmc-1-s1' },
      { namespace: 'metal-maintenance-system', name: 'fleet-bmc-1-s2' },
    ]);
    w.finish();
    w.settle();
    expect(w.children.get(child('bmc-fw'))!.spec.driftPolicy).toBe('Observe');
    expect([...w.children.keys()].sort()).toEqual(
      [child('bmc-fw'), child('bios-tune', 's1'), child('bios-tune', 's2')].sort(),
    );
    expect(w.children.get(child('bios-tune', 's1'))!.spec.serverMaintenanceRef).toEqual({
      namespace: 'metal-maintenance-system',
      name: 'fleet-bmc-1-s1',
    });
    // Each server advances on its own: s1 goes on to the hop while s2 still tunes.
    w.finish('Applied', (n) => n === child('bios-tune', 's1'));
    w.settle();
    expect(w.children.has(child('bios-fw', 's1'))).toBe(true);
    expect(w.children.has(child('bios-fw', 's2'))).toBe(false);
    runToEnd(w);
    expect(w.run.status?.phase).toBe('Completed');
    expect(w.run.status?.completedStages).toBe(3);
    expect(w.created).toEqual(['fleet-bmc-1-s1', 'fleet-bmc-1-s2']);
    expect(w.maintenances.size).toBe(0);
    expect(w.taintsOn('s1')).toEqual([]);
    expect(w.taintsOn('s2')).toEqual([]);
    expect(w.run.status?.servers).toEqual([
      { server: 's1', tainted: false },
      { server: 's2', tainted: false },
    ]);
  });

  it('Evict maps onto upstream Evict', () => {
    const w = new FakeRunWorld(pipelineOf(STAGES, { maintenanceTaintEffect: 'Evict' }), ['s1']);
    w.settle();
    expect(w.taintsOn('s1')).toEqual([`${PIPELINE_TAINT_KEY}=${RUN}:Evict`]);
    expect(w.maintenances.get('fleet-bmc-1-s1')!.spec.approval).toEqual({ required: true });
  });

  it('waits without a slot: no maintenance, no taint, Pending', () => {
    const w = world();
    w.admitted = false;
    const d = w.settle();
    expect(w.created).toEqual([]);
    expect(d.status.phase).toBe('Pending');
    expect(d.progressing).toBe(true);
    expect(d.status.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'WaitingForSlot',
    });
  });

  it('finds the maintenances it made after a restart lost its status, and makes no second one', () => {
    const w = world();
    w.settle();
    w.run = { ...w.run, status: undefined };
    w.admitAll();
    w.settle();
    expect(w.created).toEqual(['fleet-bmc-1-s1', 'fleet-bmc-1-s2']);
    expect(w.children.has(child('bmc-fw'))).toBe(true);
  });
});

describe('decideRun: failures', () => {
  it('gives back a server whose lane failed at once, finishes the other, and ends Failed', () => {
    const w = world();
    w.settle();
    w.admitAll();
    w.settle();
    w.finish();
    w.settle();
    w.finish('Failed', (n) => n === child('bios-tune', 's1'));
    w.settle();
    expect([...w.maintenances.keys()]).toEqual(['fleet-bmc-1-s2']);
    expect(w.taintsOn('s1')).toEqual([]);
    expect(w.run.status?.phase).toBe('InProgress');
    runToEnd(w);
    expect(w.children.has(child('bios-fw', 's1'))).toBe(false);
    expect(w.children.get(child('bios-fw', 's2'))?.status?.state).toBe('Completed');
    expect(w.run.status?.phase).toBe('Failed');
    expect(w.maintenances.size).toBe(0);
    expect(w.created).toEqual(['fleet-bmc-1-s1', 'fleet-bmc-1-s2']);
  });

  it('a maintenance that ends under the run is lost, not replaced: its stages fail and the run gives back', () => {
    const w = world();
    w.settle();
    w.maintenances.delete('fleet-bmc-1-s2');
    w.admitAll();
    const d = w.settle();
    expect(d.events.some((e) => e.reason === 'MaintenanceLost') || w.run.status?.phase === 'Failed').toBe(
      true,
    );
    expect(w.children.size).toBe(0);
    expect(w.run.status?.phase).toBe('Failed');
    expect(w.created).toEqual(['fleet-bmc-1-s1', 'fleet-bmc-1-s2']);
    expect(w.maintenances.size).toBe(0);
    expect(w.taintsOn('s1')).toEqual([]);
  });
});

describe('decideRun: stopping', () => {
  it('starts nothing once deleted, lets the stage in flight finish, then releases and drops its finalizer', () => {
    const w = world();
    w.settle();
    w.admitAll();
    w.settle();
    w.run = { ...w.run, metadata: { ...w.run.metadata, deletionTimestamp: '2026-12-03T10:05:00Z' } };
    w.pipeline = undefined;
    let d = w.settle();
    expect(d.status.phase).toBe('Stopping');
    expect(w.maintenances.size).toBe(2);
    expect(w.run.metadata.finalizers).toEqual(['maintenance.metal.ironcore.dev/pipeline-run']);
    w.finish();
    d = w.settle();
    expect(w.children.has(child('bios-tune', 's1'))).toBe(false);
    expect(w.maintenances.size).toBe(0);
    expect(w.taintsOn('s1')).toEqual([]);
    expect(w.run.metadata.finalizers).toEqual([]);
    expect(d.status.phase).toBe('Failed');
  });
});

describe('decideRun: drift', () => {
  it('re-holds only the drifted server and re-activates its existing child in place', () => {
    const w = world();
    runToEnd(w);
    expect(w.run.status?.phase).toBe('Completed');
    const stamped = w.children.size;
    w.observe(child('bios-tune', 's1'), 'Pending');
    w.settle();
    expect(w.run.status?.conditions?.find((c) => c.type === 'DriftDetected')?.status).toBe('True');
    expect([...w.maintenances.keys()]).toEqual(['fleet-bmc-1-s1']);
    // The drift pass takes one server: a gang of one, which the webhook can complete (sized for the
    // run's two servers, it would wait for a member never requested).
    expect(w.maintenances.get('fleet-bmc-1-s1')!.spec.gang?.size).toBe(1);
    w.admitAll();
    w.settle();
    expect(w.children.get(child('bios-tune', 's1'))!.spec.driftPolicy).toBeUndefined();
    expect(w.children.size).toBe(stamped);
    runToEnd(w);
    expect(w.run.status?.phase).toBe('Completed');
    expect(w.run.status?.conditions?.find((c) => c.type === 'DriftDetected')?.status).toBe('False');
    expect(w.maintenances.size).toBe(0);
    expect(w.created).toEqual(['fleet-bmc-1-s1', 'fleet-bmc-1-s2', 'fleet-bmc-1-s1']);
  });

  it("waits for the last hold's maintenance to be gone before taking the next, and does not read it as lost", () => {
    const w = world();
    w.lingering = true;
    runToEnd(w);
    expect(w.run.status?.phase).toBe('Completed');
    expect(w.maintenances.get('fleet-bmc-1-s1')?.metadata.deletionTimestamp).toBeDefined();
    w.observe(child('bios-tune', 's1'), 'Pending');
    w.settle();
    expect(w.run.status?.phase).not.toBe('Failed');
    expect(w.run.status?.servers?.find((s) => s.server === 's1')?.maintenanceRef).toBeUndefined();
    w.finalize();
    w.settle();
    expect(w.created).toEqual(['fleet-bmc-1-s1', 'fleet-bmc-1-s2', 'fleet-bmc-1-s1']);
    w.lingering = false;
    runToEnd(w);
    expect(w.run.status?.phase).toBe('Completed');
    expect(w.maintenances.size).toBe(0);
  });
});

describe('decideRun: an edit of the stages', () => {
  it("finishes the flash in flight, then deletes the changed stage's child and stamps a fresh one, never re-activating the old", () => {
    const w = world();
    w.childrenLinger = true;
    w.settle();
    w.admitAll();
    w.settle();
    expect([...w.children.keys()]).toEqual([child('bmc-fw')]);
    // The BMC hop's target changes while its flash is in flight.
    const edited = STAGES.map((st) =>
      st.name === 'bmc-fw' ? { ...st, template: { ...st.template, version: '2.1.0' } } : st,
    );
    w.pipeline = { ...pipelineOf(edited), metadata: { ...pipelineOf(edited).metadata, generation: 2 } };
    w.settle();
    expect(w.run.status?.observedPipelineGeneration).toBe(1);
    expect(w.children.get(child('bmc-fw'))!.metadata.deletionTimestamp).toBeUndefined();
    // The flash finishes: the edit is adopted, the old child deleted and not patched back to life.
    w.finish();
    // The pass that records the flash as finished, then the one that adopts the edit.
    let adopted = w.step();
    for (let i = 0; i < 3 && adopted.status.observedPipelineGeneration !== 2; i++) adopted = w.step();
    expect(adopted.status.observedPipelineGeneration).toBe(2);
    expect(adopted.actions.filter((a) => a.kind === 'deleteChild').map((a) => a.name)).toEqual([
      child('bmc-fw'),
    ]);
    expect(adopted.actions.filter((a) => a.kind === 'patchChild')).toEqual([]);
    // While the old child terminates, its name is taken; once it is gone the fresh one is stamped.
    w.settle();
    w.finalizeChildren();
    w.settle();
    expect(w.children.get(child('bmc-fw'))!.spec.version).toBe('2.1.0');
    runToEnd(w);
    expect(w.run.status?.phase).toBe('Completed');
    expect(w.run.status?.stages?.map((st) => st.phase)).toEqual(['Completed', 'Completed', 'Completed']);
    expect(w.maintenances.size).toBe(0);
    expect(w.created).toEqual(['fleet-bmc-1-s1', 'fleet-bmc-1-s2']);
  });
});
