// The planner over random pipelines, fleets, versions and failures: every run ends, no child is
// stamped twice, nothing starts before what it depends on, and a run without failures completes.
import fc from 'fast-check';
import type { PipelineStage, StageKind } from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import { cellKey, scopeOf } from './stages.js';
import { RunSim } from './testing/run-sim.js';

const KINDS: StageKind[] = ['BMCSettings', 'BMCVersion', 'BIOSSettings', 'BIOSVersion'];

const stagesArb = fc.array(fc.constantFrom(...KINDS), { minLength: 1, maxLength: 7 }).map((kinds) =>
  kinds.map((kind, i): PipelineStage => {
    const name = `s${i}-${kind.toLowerCase()}`;
    const family = kind.startsWith('BMC') ? 'iLO 6 v1.' : 'U54 v2.';
    return kind.endsWith('Version')
      ? {
          name,
          kind,
          template: { version: `${family}${10 * (i + 1)}`, image: { URI: `http://repo/${name}` } },
        }
      : { name, kind, template: { settingsFlow: [{ name: 'x', priority: 1, settings: { A: String(i) } }] } };
  }),
);

const scenario = fc.record({
  stages: stagesArb,
  servers: fc.integer({ min: 1, max: 4 }).map((n) => Array.from({ length: n }, (_, i) => `srv-${i}`)),
  bmcStart: fc.integer({ min: 0, max: 80 }),
  biosStart: fc.integer({ min: 0, max: 80 }),
  failures: fc.array(fc.tuple(fc.nat(6), fc.nat(3)), { maxLength: 3 }),
});

describe('planRun over random runs', () => {
  it('ends, stamps each cell at most once, keeps order, and completes when nothing fails', () => {
    fc.assert(
      fc.property(scenario, ({ stages, servers, bmcStart, biosStart, failures }) => {
        const sim = new RunSim(stages, servers, { bmc: `iLO 6 v1.${bmcStart}`, bios: `U54 v2.${biosStart}` });
        for (const [si, sv] of failures) {
          const stage = stages[si % stages.length]!;
          sim.failNext.add(
            cellKey(stage.name, scopeOf(stage.kind) === 'BMC' ? undefined : servers[sv % servers.length]),
          );
        }
        const end = sim.runToEnd(); // throws on a second stamp of one cell, or if it never ends
        expect([...sim.stamps.values()].every((n) => n === 1)).toBe(true);
        const index = new Map(stages.map((s, i) => [s.name, i]));
        for (const plan of sim.history) {
          for (const a of plan.actions.filter((x) => x.type === 'stamp')) {
            for (const [key, rec] of plan.cells) {
              const [stage, server] = key.split('/');
              const dependsOn =
                index.get(stage!)! < index.get(a.stage)! && (!a.server || !server || server === a.server);
              if (dependsOn) expect(rec.phase).toBe('Completed');
            }
          }
        }
        const failed = [...sim.children.values()].some((c) => c.phase === 'Failed');
        if (!failed) expect(end.stagePhases.every((p) => p === 'Completed')).toBe(true);
        else expect(end.stagePhases).toContain('Failed');
        expect(end.progressing).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('never stamps a hop the hardware already reached', () => {
    fc.assert(
      fc.property(scenario, ({ stages, servers }) => {
        const sim = new RunSim(stages, servers, { bmc: 'iLO 6 v1.99', bios: 'U54 v2.99' });
        sim.runToEnd();
        const hops = [...sim.stamps.keys()].filter((k) => k.includes('version'));
        expect(hops).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });
});
