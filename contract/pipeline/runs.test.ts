import fc from 'fast-check';
import type { PipelineStage } from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import { admitRuns, boundedName, groupByBMC, runPhase, serversNeeded } from './runs.js';
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

describe('serversNeeded over the IEP example', () => {
  const cells = (phase: CellRecord['phase'], except?: string) =>
    new Map<string, CellRecord>(
      IEP_STAGES.flatMap((s) =>
        s.kind.startsWith('BMC') ? [cellKey(s.name)] : SERVERS.map((srv) => cellKey(s.name, srv)),
      ).map((k) => [k, { phase: k === except ? 'Pending' : phase, child: true }]),
    );
  it('holds every server while a BMC stage is open, only the unfinished ones after', () => {
    expect(serversNeeded(IEP_STAGES, SERVERS, cells('Pending'), false)).toEqual(new Set(SERVERS));
    const one = cells('Completed', cellKey('bios-fw-v250', 'server-b'));
    expect(serversNeeded(IEP_STAGES, SERVERS, one, false)).toEqual(new Set(['server-b']));
    expect(serversNeeded(IEP_STAGES, SERVERS, cells('Completed'), false).size).toBe(0);
    expect(serversNeeded(IEP_STAGES, SERVERS, cells('Pending'), true).size).toBe(0);
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

describe('serversNeeded', () => {
  const st = (name: string, kind: PipelineStage['kind']): PipelineStage => ({
    name,
    kind,
    template: kind.endsWith('Version') ? { version: '2', image: { URI: 'http://x/y' } } : {},
  });
  const stages = [st('bmc-fw', 'BMCVersion'), st('bios', 'BIOSSettings'), st('bmc-post', 'BMCSettings')];
  const servers = ['a', 'b'];
  const cells = (m: Record<string, string>) => new Map(Object.entries(m).map(([k, phase]) => [k, { phase }]));

  it('holds every server while a BMC stage is in flight or can still come', () => {
    expect(serversNeeded(stages, servers, cells({ 'bmc-fw': 'InProgress' }), false)).toEqual(
      new Set(servers),
    );
    const midway = cells({ 'bmc-fw': 'Completed', 'bios/a': 'Completed', 'bios/b': 'InProgress' });
    expect(serversNeeded(stages, servers, midway, false)).toEqual(new Set(servers));
  });

  it('gives back a failed lane, and everyone once a failure blocks the last BMC stage', () => {
    const failed = cells({ 'bmc-fw': 'Completed', 'bios/a': 'Failed', 'bios/b': 'InProgress' });
    expect(serversNeeded(stages, servers, failed, false)).toEqual(new Set(['b']));
    const over = cells({ 'bmc-fw': 'Completed', 'bios/a': 'Failed', 'bios/b': 'Completed' });
    expect(serversNeeded(stages, servers, over, false)).toEqual(new Set());
  });

  it('stopping: only what is in flight', () => {
    expect(serversNeeded(stages, servers, cells({}), true)).toEqual(new Set());
    const flying = cells({ 'bmc-fw': 'Completed', 'bios/a': 'InProgress' });
    expect(serversNeeded(stages, servers, flying, true)).toEqual(new Set(['a']));
  });
});
