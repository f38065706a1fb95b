// The one room formula (PodDisruptionBudget arithmetic) that the webhook, the budget controller and the
// maintenance controller's hold-back all count with.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { maxAllowedUnavailable, roomIn } from './budget-room.js';

describe('room (PodDisruptionBudget arithmetic)', () => {
  it.each<[number | string, number, number]>([
    [1, 10, 1],
    [0, 10, 0],
    [5, 3, 5],
    ['10%', 5, 1],
    ['10%', 10, 1],
    ['10%', 11, 2],
    ['0%', 50, 0],
    ['100%', 7, 7],
    ['33%', 3, 1],
    ['abc', 10, 0],
    [-1, 10, 0],
    [1.5, 10, 0],
  ])('maxUnavailable %j of %d allows %d', (max, expected, allowed) => {
    expect(maxAllowedUnavailable(max, expected)).toBe(allowed);
  });

  it('rounds percentages up, never below the exact share (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 100000 }), (pct, n) => {
        const allowed = maxAllowedUnavailable(`${pct}%`, n);
        expect(allowed).toBeGreaterThanOrEqual((pct * n) / 100);
        expect(allowed - 1).toBeLessThan((pct * n) / 100);
      }),
    );
  });

  it('room left is what is allowed less what is in use, and takes one more exactly while it is 1 or more', () => {
    expect(roomIn('10%', 20, 1)).toEqual({ allowed: 2, inUse: 1, left: 1 });
    expect(roomIn(2, 20, 2)).toEqual({ allowed: 2, inUse: 2, left: 0 });
    expect(roomIn(1, 20, 3)).toEqual({ allowed: 1, inUse: 3, left: -2 });
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 50 }),
        fc.integer({ min: 0, max: 500 }),
        fc.integer({ min: 0, max: 500 }),
        (max, n, used) => {
          const room = roomIn(max, n, used);
          expect(room.left >= 1).toBe(used + 1 <= maxAllowedUnavailable(max, n));
        },
      ),
    );
  });
});
