// Drift after completion: a factory reset of one server, of the BMC, under Reconcile and Observe.
import { applyDrift, driftDetected } from './drift.js';
import { cellKey } from './stages.js';
import { RunSim } from './testing/run-sim.js';
import { IEP_STAGES, OLD_VERSIONS, SERVERS } from './testing/fixtures.js';

function completed() {
  const sim = new RunSim(IEP_STAGES, SERVERS, OLD_VERSIONS);
  sim.runToEnd();
  sim.stamps.clear();
  return sim;
}

describe('drift', () => {
  it('Reconcile: a factory-reset server re-runs from its earliest dirty stage, alone, reusing its children', () => {
    const sim = completed();
    sim.factoryReset({ server: 'server-a' }, OLD_VERSIONS);
    const end = sim.runToEnd();
    expect(end.stagePhases.every((p) => p === 'Completed')).toBe(true);
    expect(sim.stamps.size).toBe(0);
    expect([...sim.activations.keys()].sort()).toEqual(
      ['bios-fw-v250', 'bios-post-upgrade', 'bios-pre-upgrade'].map((s) => cellKey(s, 'server-a')).sort(),
    );
    expect(sim.serverVersions['server-a']).toBe('U54 v2.50');
    // re-hydrated from the reset hardware
    const act = sim.history
      .flatMap((p) => p.actions)
      .find((a) => a.type === 'activate' && a.stage === 'bios-pre-upgrade');
    expect(act).toMatchObject({ type: 'activate', server: 'server-a', version: 'U54 v2.10' });
  });

  it('Reconcile: a BMC reset re-runs every stage from the earliest dirty BMC stage, for all servers', () => {
    const sim = completed();
    sim.factoryReset({ bmc: true }, OLD_VERSIONS);
    const first = sim.reconcile();
    // bmc-baseline drifted (Observe); the hops were Suspend/Observe: the earliest dirty is stage 0.
    expect(first.actions).toEqual([{ type: 'activate', stage: 'bmc-baseline', version: 'iLO 6 v1.50' }]);
    sim.tick();
    const end = sim.runToEnd();
    expect(end.stagePhases.every((p) => p === 'Completed')).toBe(true);
    expect(sim.stamps.size).toBe(0);
    expect(sim.activations.get(cellKey('bmc-fw-v160'))).toBe(1);
    expect(SERVERS.every((s) => sim.activations.get(cellKey('bios-pre-upgrade', s)) === 1)).toBe(true);
  });

  it('Observe: reports the drifted children and changes nothing', () => {
    const sim = completed();
    sim.factoryReset({ server: 'server-b' }, OLD_VERSIONS);
    const result = applyDrift(IEP_STAGES, sim.recorded, sim.world(), 'Observe');
    expect(result.drifted.sort()).toEqual(
      ['bios-fw-v250', 'bios-post-upgrade', 'bios-pre-upgrade'].map((s) => cellKey(s, 'server-b')).sort(),
    );
    expect(result.actions).toEqual([]);
    expect(result.recorded).toEqual(sim.recorded);
    const plan = sim.reconcile({}, 'Observe');
    expect(plan.actions).toEqual([]);
  });

  it('halts an in-flight child among the reset cells', () => {
    const sim = completed();
    // server-c is mid-way through a re-run of bios-post-upgrade when its BIOS settings drift again.
    sim.factoryReset({ server: 'server-c' }, { ...OLD_VERSIONS, bios: 'U54 v2.50' });
    sim.recorded.set(cellKey('bios-post-upgrade', 'server-c'), { phase: 'InProgress', child: true });
    const c = sim.children.get(cellKey('bios-post-upgrade', 'server-c'))!;
    Object.assign(c, { driftPolicy: undefined, phase: 'InProgress', current: true });
    const result = applyDrift(IEP_STAGES, sim.recorded, sim.world(), 'Reconcile');
    expect(result.actions).toEqual([
      { type: 'settle', stage: 'bios-post-upgrade', server: 'server-c', driftPolicy: 'Observe' },
    ]);
  });

  it('keeps DriftDetected until the run completed again under Reconcile', () => {
    expect(driftDetected(false, 1, 'Reconcile', false)).toBe(true);
    expect(driftDetected(true, 0, 'Reconcile', false)).toBe(true);
    expect(driftDetected(true, 0, 'Reconcile', true)).toBe(false);
    expect(driftDetected(true, 0, 'Observe', false)).toBe(false);
  });
});
