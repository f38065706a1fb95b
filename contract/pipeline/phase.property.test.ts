// Issue 26 point 3: the aggregate stage phase over every mix of server phases, against the four
// definitions stated independently (not by reusing the precedence list).
import fc from 'fast-check';
import type { StagePhase } from '../../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import { aggregatePhase, stageCounters } from './phase.js';

const PHASES: StagePhase[] = ['Pending', 'InProgress', 'Completed', 'Failed'];
const phase = fc.constantFrom(...PHASES);

/** The definitions, each on its own. */
function byDefinition(phases: StagePhase[]): StagePhase {
  if (phases.some((p) => p === 'Failed')) return 'Failed';
  if (phases.some((p) => p === 'InProgress')) return 'InProgress';
  if (phases.length > 0 && phases.every((p) => p === 'Completed')) return 'Completed';
  return 'Pending';
}

describe('aggregatePhase', () => {
  it('follows the definitions over every set of phases present (all 15 mixes, 1 to 3 servers each)', () => {
    for (let mask = 1; mask < 16; mask++) {
      const present = PHASES.filter((_, i) => mask & (1 << i));
      for (let copies = 1; copies <= 3; copies++) {
        const servers = present.flatMap((p) => Array<StagePhase>(copies).fill(p));
        expect([present, aggregatePhase(servers)]).toEqual([present, byDefinition(servers)]);
      }
    }
  });

  it('names the four single-phase stages as themselves', () => {
    for (const p of PHASES) expect(aggregatePhase([p, p, p])).toBe(p);
  });

  it('orders mixed states Failed > InProgress > Pending > Completed', () => {
    expect(aggregatePhase(['Completed', 'Failed', 'InProgress', 'Pending'])).toBe('Failed');
    expect(aggregatePhase(['Completed', 'InProgress', 'Pending'])).toBe('InProgress');
    expect(aggregatePhase(['Completed', 'Pending'])).toBe('Pending');
    expect(aggregatePhase(['Completed', 'Completed'])).toBe('Completed');
  });

  it('is Pending for a stage no server has reached', () => {
    expect(aggregatePhase([])).toBe('Pending');
  });

  it('matches the definitions for any list, in any order', () => {
    fc.assert(
      fc.property(fc.array(phase, { maxLength: 64 }), (servers) => {
        expect(aggregatePhase(servers)).toBe(byDefinition(servers));
        expect(aggregatePhase([...servers].reverse())).toBe(aggregatePhase(servers));
      }),
    );
  });

  it('a failed server is never hidden, whatever the others do', () => {
    fc.assert(
      fc.property(fc.array(phase), fc.array(phase), (before, after) => {
        expect(aggregatePhase([...before, 'Failed', ...after])).toBe('Failed');
      }),
    );
  });

  it('Completed only when every server completed', () => {
    fc.assert(
      fc.property(fc.array(phase, { minLength: 1 }), (servers) => {
        expect(aggregatePhase(servers) === 'Completed').toBe(servers.every((p) => p === 'Completed'));
      }),
    );
  });
});

describe('stageCounters', () => {
  it('counts every stage once', () => {
    fc.assert(
      fc.property(fc.array(phase, { maxLength: 32 }), (stages) => {
        const c = stageCounters(stages);
        expect(c.pendingStages + c.activeStages + c.completedStages + c.failedStages).toBe(c.totalStages);
        expect(c.totalStages).toBe(stages.length);
        expect(c.failedStages).toBe(stages.filter((p) => p === 'Failed').length);
      }),
    );
  });
});
