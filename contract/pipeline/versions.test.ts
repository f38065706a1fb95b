import fc from 'fast-check';
import { compareVersions, hopReached } from './versions.js';

describe('compareVersions', () => {
  it.each([
    ['iLO 6 v1.60', 'iLO 6 v1.80', -1],
    ['iLO 6 v1.80', 'iLO 6 v1.60', 1],
    ['iLO 6 v1.80', 'iLO 6 v1.80', 0],
    ['U54 v2.10', 'U54 v2.50', -1],
    ['7.10.50.00', '7.10.9.00', 1],
    ['1.60', '1.60.1', -1],
    ['1.60', '1.60.0', 0],
    ['2.50', 'U54 v2.50', undefined],
    ['U54 v2.50', 'U55 v2.50', undefined],
    ['U54 v2.50', 'A54 v2.50', undefined],
    ['1.46.455b66-rev1', '1.46.455b66-rev2', -1],
    ['', '1.0', undefined],
  ] as const)('%s vs %s is %s', (a, b, want) => {
    expect(compareVersions(a, b)).toBe(want);
  });

  it('is antisymmetric over dotted numeric versions', () => {
    const v = fc.array(fc.nat(999), { minLength: 1, maxLength: 4 }).map((n) => n.join('.'));
    fc.assert(
      fc.property(v, v, (a, b) => {
        const ab = compareVersions(a, b);
        const ba = compareVersions(b, a);
        expect(ab === undefined ? undefined : -ab || 0).toBe(ba === undefined ? undefined : ba || 0);
      }),
    );
  });
});

describe('hopReached', () => {
  it('completes a hop at or past its target', () => {
    expect(hopReached('iLO 6 v1.80', 'iLO 6 v1.60')).toBe(true);
    expect(hopReached('iLO 6 v1.60', 'iLO 6 v1.60')).toBe(true);
  });
  it('runs a hop below its target, or when the versions do not compare', () => {
    expect(hopReached('iLO 6 v1.50', 'iLO 6 v1.60')).toBe(false);
    expect(hopReached('2.50', 'U54 v2.50')).toBe(false);
    expect(hopReached(undefined, 'U54 v2.50')).toBe(false);
  });
});
