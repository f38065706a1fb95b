import type { Taint, Toleration } from '../api/schema/common.js';
import { matchesSelector } from './selectors.js';
import { hasNoBindTaint, tolerates, untoleratedNoBindTaints } from './taints.js';

describe('toleration matching (upstream metal-operator rules)', () => {
  const taint: Taint = { key: 'k', value: 'v', effect: 'NoBind' };
  it.each<[string, Toleration, boolean]>([
    ['same key, Equal, same value', { key: 'k', operator: 'Equal', value: 'v' }, true],
    ['same key, no operator, same value', { key: 'k', value: 'v' }, true],
    ['same key, Equal, other value', { key: 'k', operator: 'Equal', value: 'w' }, false],
    ['same key, Exists ignores value', { key: 'k', operator: 'Exists' }, true],
    ['other key', { key: 'x', operator: 'Exists' }, false],
    ['matching effect', { key: 'k', operator: 'Exists', effect: 'NoBind' }, true],
    ['other effect', { key: 'k', operator: 'Exists', effect: 'Evict' }, false],
  ])('%s', (_name, toleration, expected) => {
    expect(tolerates(toleration, taint)).toBe(expected);
  });

  it('defaults a taint effect to NoBind and an absent value to empty', () => {
    expect(tolerates({ key: 'k', effect: 'NoBind' }, { key: 'k' })).toBe(true);
    expect(tolerates({ key: 'k', value: '' }, { key: 'k' })).toBe(true);
  });

  it('tells whether any taint is NoBind (a missing effect is NoBind)', () => {
    expect(hasNoBindTaint(undefined)).toBe(false);
    expect(hasNoBindTaint([{ key: 'a', effect: 'Evict' }])).toBe(false);
    expect(hasNoBindTaint([{ key: 'a', effect: 'Evict' }, { key: 'b' }])).toBe(true);
  });

  it('only NoBind taints block binding', () => {
    const taints: Taint[] = [{ key: 'a', effect: 'Evict' }, { key: 'b' }, { key: 'c', effect: 'NoBind' }];
    expect(untoleratedNoBindTaints(taints, [{ key: 'c', operator: 'Exists' }]).map((t) => t.key)).toEqual([
      'b',
    ]);
    expect(untoleratedNoBindTaints(undefined, undefined)).toEqual([]);
  });
});

describe('label selectors', () => {
  const labels = { rack: 'r1', pool: 'a' };
  it.each([
    [undefined, true],
    [{}, true],
    [{ matchLabels: { rack: 'r1' } }, true],
    [{ matchLabels: { rack: 'r2' } }, false],
    [{ matchExpressions: [{ key: 'rack', operator: 'In' as const, values: ['r1', 'r3'] }] }, true],
    [{ matchExpressions: [{ key: 'rack', operator: 'NotIn' as const, values: ['r1'] }] }, false],
    [{ matchExpressions: [{ key: 'gpu', operator: 'NotIn' as const, values: ['x'] }] }, true],
    [{ matchExpressions: [{ key: 'pool', operator: 'Exists' as const }] }, true],
    [{ matchExpressions: [{ key: 'pool', operator: 'DoesNotExist' as const }] }, false],
    [{ matchExpressions: [{ key: 'pool', operator: 'Bogus' as unknown as 'In' }] }, false],
  ])('%j -> %s', (selector, expected) => {
    expect(matchesSelector(selector, labels)).toBe(expected);
  });
});
