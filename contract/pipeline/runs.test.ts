import fc from 'fast-check';
import { admitRuns, boundedName, groupByBMC, runPhase, serversToHold } from './runs.js';
import { cellKey } from './stages.js';
import { IEP_STAGES, SERVERS } from './testing/fixtures.js';
import type { CellRecord } from './plan.js';

describe('groupByBMC', () => {
  it('makes one run per BMC and sets apart servers without one', () => {
    const { groups, noBMC } = groupByBMC([
      { name: 's3', bmc: 'b2' },
      { name: 's1', bmc: 'b1' },
      { name: 's2', bmc: 'b1' },
      { name: 's4' },
    ]);
    expect(groups).toEqual([
      { bmc: 'b1', servers: ['s1', 's2'] },
      { bmc: 'b2', servers: ['s3'] },
    ]);
    expect(noBMC).toEqual(['s4']);
  });
});

describe('boundedName', () => {
  it('is stable, at most 63 characters, and distinct for distinct long inputs', () => {
    const long = 'p'.repeat(60);
    expect(boundedName('a', 'b')).toBe('a-b');
    expect(boundedName(long, 'bmc-1')).toHaveLength(63);
    expect(boundedName(long, 'bmc-1')).toBe(boundedName(long, 'bmc-1'));
    expect(boundedName(long, 'bmc-1')).not.toBe(boundedName(long, 'bmc-2'));
  });
});

describe('admitRuns', () => {
  it('caps runs in progress at maxConcurrent, keeps active runs, fills by age', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ active: fc.boolean(), wantsWork: fc.boolean(), age: fc.nat(100) }), {
          maxLength: 20,
        }),
        fc.integer({ min: 1, max: 5 }),
        (specs, max) => {
          const runs = specs.map((r, i) => ({
            name: `r${i}`,
            active: r.active,
            wantsWork: r.wantsWork,
            createdAt: String(r.age).padStart(3, '0'),
          }));
          const admitted = admitRuns(runs, max);
          const active = runs.filter((r) => r.active);
          for (const r of active) expect(admitted.has(r.name)).toBe(true);
          expect(admitted.size).toBe(
            Math.max(
              active.length,
              Math.min(max, active.length + runs.filter((r) => !r.active && r.wantsWork).length),
            ),
          );
          const newly = runs.filter((r) => !r.active && admitted.has(r.name));
          const passed = runs.filter((r) => !r.active && r.wantsWork && !admitted.has(r.name));
          for (const n of newly) for (const p of passed) expect(n.createdAt <= p.createdAt).toBe(true);
        },
      ),
    );
  });
});

describe('serversToHold', () => {
  const cells = (phase: CellRecord['phase'], except?: string) =>
    new Map<string, CellRecord>(
      IEP_STAGES.flatMap((s) =>
        s.kind.startsWith('BMC') ? [cellKey(s.name)] : SERVERS.map((srv) => cellKey(s.name, srv)),
      ).map((k) => [k, { phase: k === except ? 'Pending' : phase, child: true }]),
    );
  it('holds every server while a BMC stage is open, only the unfinished ones after', () => {
    expect(serversToHold(IEP_STAGES, SERVERS, { cells: cells('Pending'), progressing: true })).toEqual(
      new Set(SERVERS),
    );
    const one = cells('Completed', cellKey('bios-fw-v250', 'server-b'));
    expect(serversToHold(IEP_STAGES, SERVERS, { cells: one, progressing: true })).toEqual(
      new Set(['server-b']),
    );
    expect(serversToHold(IEP_STAGES, SERVERS, { cells: cells('Pending'), progressing: false }).size).toBe(0);
  });
});

describe('runPhase', () => {
  it('is Pending until admitted, InProgress while it progresses, then its outcome', () => {
    expect(runPhase(false, { stagePhases: ['Pending'], progressing: true }, false)).toBe('Pending');
    expect(runPhase(true, { stagePhases: ['InProgress'], progressing: true }, false)).toBe('InProgress');
    expect(runPhase(true, { stagePhases: ['Failed', 'Pending'], progressing: true }, false)).toBe(
      'InProgress',
    );
    expect(runPhase(true, { stagePhases: ['Failed', 'Pending'], progressing: false }, false)).toBe('Failed');
    expect(runPhase(true, { stagePhases: ['Completed'], progressing: false }, false)).toBe('Completed');
    expect(runPhase(true, { stagePhases: ['InProgress'], progressing: true }, true)).toBe('Stopping');
  });
});
