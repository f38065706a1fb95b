// The run planner over whole runs in a fake world (testing/run-sim.ts): order, the BMC 1:N gate,
// reached hops, hydration, failure, holds, stopping, and the drift policy children settle into.
import { cellKey } from './stages.js';
import { planRun, type CellRecord } from './plan.js';
import { RunSim } from './testing/run-sim.js';
import { BIOS_FIRST_STAGES, IEP_STAGES, OLD_VERSIONS, SERVERS } from './testing/fixtures.js';

const BMC_STAGES = IEP_STAGES.filter((s) => s.kind.startsWith('BMC')).map((s) => s.name);
const SERVER_STAGES = IEP_STAGES.filter((s) => s.kind.startsWith('BIOS')).map((s) => s.name);

describe('planRun', () => {
  it('runs the seven IEP stages to completion, each child stamped once, BMC stages once per BMC', () => {
    const sim = new RunSim(IEP_STAGES, SERVERS, OLD_VERSIONS);
    const end = sim.runToEnd();
    expect(end.stagePhases).toEqual(IEP_STAGES.map(() => 'Completed'));
    const expected = [
      ...BMC_STAGES.map((s) => cellKey(s)),
      ...SERVER_STAGES.flatMap((s) => SERVERS.map((srv) => cellKey(s, srv))),
    ].sort();
    expect([...sim.stamps.keys()].sort()).toEqual(expected);
    expect([...sim.stamps.values()].every((n) => n === 1)).toBe(true);
    expect(sim.bmcVersion).toBe('iLO 6 v1.80');
    expect(Object.values(sim.serverVersions)).toEqual(['U54 v2.50', 'U54 v2.50', 'U54 v2.50']);
  });

  it('never starts a cell before every cell it depends on completed', () => {
    const sim = new RunSim(BIOS_FIRST_STAGES, SERVERS, OLD_VERSIONS);
    sim.runToEnd();
    const index = new Map(BIOS_FIRST_STAGES.map((s, i) => [s.name, i]));
    for (const plan of sim.history) {
      for (const a of plan.actions.filter((x) => x.type === 'stamp' || x.type === 'activate')) {
        for (const [key, rec] of plan.cells) {
          const [stage, server] = key.split('/');
          const before = index.get(stage!)! < index.get(a.stage)!;
          const sameLane = a.server === undefined || server === undefined || server === a.server;
          if (before && sameLane) expect([a, key, rec.phase]).toEqual([a, key, 'Completed']);
        }
      }
    }
  });

  it('stamps a server stage for every server at once, and lets each server advance on its own', () => {
    const sim = new RunSim(IEP_STAGES, SERVERS, OLD_VERSIONS);
    let firstServerStamps: string[] = [];
    for (let i = 0; i < 100 && firstServerStamps.length === 0; i++) {
      const plan = sim.reconcile();
      firstServerStamps = plan.actions.filter((a) => a.stage === 'bios-pre-upgrade').map((a) => a.server!);
      sim.tick();
    }
    expect(firstServerStamps).toEqual(SERVERS);
    // server-b is slow: the others go on to the BIOS hop without it.
    sim.children.get(cellKey('bios-pre-upgrade', 'server-b'))!.remaining = 50;
    for (let i = 0; i < 6; i++) {
      sim.reconcile();
      sim.tick();
    }
    expect(sim.stamps.has(cellKey('bios-fw-v250', 'server-a'))).toBe(true);
    expect(sim.stamps.has(cellKey('bios-fw-v250', 'server-b'))).toBe(false);
    expect(sim.reconcile().stagePhases[4]).toBe('InProgress');
  });

  it('completes a hop already reached or passed at once, without a child', () => {
    const sim = new RunSim(IEP_STAGES, SERVERS, { bmc: 'iLO 6 v1.70', bios: 'U54 v2.50' });
    sim.runToEnd();
    expect(sim.stamps.has(cellKey('bmc-fw-v160'))).toBe(false);
    expect(sim.recorded.get(cellKey('bmc-fw-v160'))).toEqual({
      phase: 'Completed',
      child: false,
      reached: true,
    });
    expect(sim.stamps.has(cellKey('bmc-fw-v180'))).toBe(true);
    expect(SERVERS.some((s) => sim.stamps.has(cellKey('bios-fw-v250', s)))).toBe(false);
  });

  it('hydrates a version-agnostic settings stage from the hardware when it is stamped', () => {
    const sim = new RunSim(IEP_STAGES, SERVERS, OLD_VERSIONS);
    sim.runToEnd();
    const stamps = sim.history.flatMap((p) => p.actions).filter((a) => a.type === 'stamp');
    // bmc-baseline before the hops, bmc-post-upgrade after them; bios-pre-upgrade before the BIOS hop.
    expect(stamps.find((a) => a.stage === 'bmc-baseline')?.version).toBe('iLO 6 v1.50');
    expect(stamps.find((a) => a.stage === 'bmc-post-upgrade')?.version).toBe('iLO 6 v1.80');
    expect(stamps.find((a) => a.stage === 'bios-pre-upgrade')?.version).toBe('U54 v2.10');
    // A settings stage with its own version keeps it.
    expect(stamps.find((a) => a.stage === 'bios-post-upgrade')?.version).toBeUndefined();
  });

  it('waits for an unknown version rather than stamping a settings child without one', () => {
    const sim = new RunSim(IEP_STAGES, SERVERS, OLD_VERSIONS);
    (sim as { bmcVersion: string | undefined }).bmcVersion = undefined;
    const plan = sim.reconcile();
    expect(plan.actions).toEqual([]);
    expect(plan.waiting).toEqual([{ stage: 'bmc-baseline', why: 'version-unknown' }]);
    expect(plan.progressing).toBe(true);
  });

  it('starts a BMC stage only when every server of the run is held, a server stage when its server is', () => {
    const sim = new RunSim(IEP_STAGES, SERVERS, OLD_VERSIONS);
    sim.held.delete('server-c');
    const plan = sim.reconcile();
    expect(plan.actions).toEqual([]);
    expect(plan.wantsHold).toEqual(['server-c']);
    sim.held.add('server-c');
    expect(sim.reconcile().actions.map((a) => a.type)).toEqual(['stamp']);
  });

  it('a failed server stops its own lane; the others finish theirs; the run then stops progressing', () => {
    const sim = new RunSim(IEP_STAGES, SERVERS, OLD_VERSIONS);
    sim.failNext.add(cellKey('bios-fw-v250', 'server-b'));
    const end = sim.runToEnd();
    expect(end.stagePhases.slice(5)).toEqual(['Failed', 'Pending']);
    expect(sim.phaseOf('bios-post-upgrade', 'server-a')).toBe('Completed');
    expect(sim.phaseOf('bios-post-upgrade', 'server-b')).toBe('Pending');
    expect(end.progressing).toBe(false);
  });

  it('a BMC stage after a failed server does not start', () => {
    const sim = new RunSim(BIOS_FIRST_STAGES, SERVERS, OLD_VERSIONS);
    sim.failNext.add(cellKey('bios-fw-v240', 'server-a'));
    const end = sim.runToEnd();
    expect(sim.stamps.has(cellKey('bmc-fw-v180'))).toBe(false);
    expect(end.stagePhases).toEqual(['Failed', 'Pending', 'Pending']);
  });

  it('stopping starts nothing and lets what is in flight finish', () => {
    const sim = new RunSim(IEP_STAGES, SERVERS, OLD_VERSIONS);
    sim.reconcile();
    sim.tick();
    const end = sim.runToEnd({ stopping: true });
    expect([...sim.stamps.keys()]).toEqual([cellKey('bmc-baseline')]);
    expect(sim.phaseOf('bmc-baseline')).toBe('Completed');
    expect(end.progressing).toBe(false);
    expect(end.waiting).toEqual([{ stage: 'bmc-fw-v160', why: 'stopping' }]);
  });

  it('settles settings children in Observe, superseded hops in Suspend, the last hop in Observe', () => {
    const sim = new RunSim(IEP_STAGES, SERVERS, OLD_VERSIONS);
    sim.runToEnd();
    const policy = (stage: string, server?: string) => sim.children.get(cellKey(stage, server))?.driftPolicy;
    expect(policy('bmc-baseline')).toBe('Observe');
    expect(policy('bmc-fw-v160')).toBe('Suspend');
    expect(policy('bmc-fw-v180')).toBe('Observe');
    expect(policy('bios-fw-v250', 'server-a')).toBe('Observe');
    expect(policy('bios-post-upgrade', 'server-c')).toBe('Observe');
  });

  it('reads a child that has not seen its spec yet as in progress, whatever its old state says', () => {
    const recorded = new Map<string, CellRecord>([
      [cellKey('bmc-baseline'), { phase: 'Pending', child: true }],
    ]);
    const world = {
      servers: SERVERS,
      children: new Map([[cellKey('bmc-baseline'), { phase: 'Completed' as const, current: false }]]),
      bmcVersion: 'iLO 6 v1.50',
      serverVersions: {},
      held: new Set(SERVERS),
    };
    const plan = planRun(IEP_STAGES, recorded, world);
    expect(plan.cells.get(cellKey('bmc-baseline'))?.phase).toBe('InProgress');
    expect(plan.actions).toEqual([]);
  });

  it('stamps again a cell recorded in progress whose child is gone, under the same name', () => {
    const recorded = new Map<string, CellRecord>([
      [cellKey('bmc-baseline'), { phase: 'InProgress', child: true }],
    ]);
    const world = {
      servers: SERVERS,
      children: new Map(),
      bmcVersion: 'iLO 6 v1.50',
      serverVersions: {},
      held: new Set(SERVERS),
    };
    const plan = planRun(IEP_STAGES, recorded, world);
    // A settings stage: stamped with the version hydrated from the hardware.
    expect(plan.actions).toEqual([{ type: 'stamp', stage: 'bmc-baseline', version: 'iLO 6 v1.50' }]);
    expect(plan.cells.get(cellKey('bmc-baseline'))).toMatchObject({ phase: 'InProgress', child: true });
  });
});
