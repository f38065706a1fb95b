import { isMetalError } from '../../lib/errors.js';
import { idealSchedule, type IdealInput } from './ideal.js';

/** `n` servers in racks of `rackSize`, behind BMCs serving `perBmc` each, in order. */
function fleet(n: number, rackSize: number, perBmc: number): Pick<IdealInput, 'racks' | 'bmcs'> {
  return {
    racks: Array.from({ length: n }, (_, s) => `r${Math.floor(s / rackSize)}`),
    bmcs: Array.from({ length: n }, (_, s) => Math.floor(s / perBmc)),
  };
}

describe('idealSchedule', () => {
  test('BIOS only, no rack limit: ceil(N/K) rounds of T', () => {
    const s = idealSchedule({ ...fleet(10, 10, 1), bios: true, bmc: false, budget: 3, flashMs: 1000 });
    expect(s).toEqual({ rounds: 4, lowerBoundRounds: 4, exact: true, makespanMs: 4000, work: 10 });
  });

  test('BIOS and BMC: every server works twice, never twice in one round', () => {
    // 6 servers behind 2 BMCs of 3; K=6 would take both BMC gangs in round 1, all BIOS in round 2.
    const s = idealSchedule({ ...fleet(6, 6, 3), bios: true, bmc: true, budget: 6, flashMs: 10 });
    expect(s).toMatchObject({ rounds: 2, lowerBoundRounds: 2, exact: true, work: 12 });
    // K larger than the fleet still cannot put a server's two jobs in one round.
    const wide = idealSchedule({ ...fleet(6, 6, 3), bios: true, bmc: true, budget: 100, flashMs: 10 });
    expect(wide.rounds).toBe(2);
  });

  test('a per-rack budget below K binds', () => {
    // 2 racks of 10, R=2: each rack needs 5 rounds although K=10 would allow 2.
    const s = idealSchedule({
      ...fleet(20, 10, 1),
      bios: true,
      bmc: false,
      budget: 10,
      rackBudget: 2,
      flashMs: 1,
    });
    expect(s).toMatchObject({ rounds: 5, lowerBoundRounds: 5, exact: true });
  });

  test('the issue shape (1,000 behind 400, K=50, racks of 50 with R=5) reaches the work bound', () => {
    const base = Math.floor(1000 / 400);
    const bmcs: number[] = [];
    for (let b = 0; b < 400; b++) for (let k = 0; k < base + (b < 1000 % 400 ? 1 : 0); k++) bmcs.push(b);
    const racks = bmcs.map((_, s) => `r${Math.floor(s / 50)}`);
    const s = idealSchedule({ racks, bmcs, bios: true, bmc: true, budget: 50, rackBudget: 5, flashMs: 1 });
    expect(s).toMatchObject({ work: 2000, lowerBoundRounds: 40, rounds: 40, exact: true });
  });

  test('gangs that leave gaps: the greedy result is reported with the bound beside it', () => {
    // Two BMCs of 2 under K=3: one gang per round, the bound (4 work / 3) says 2.
    const s = idealSchedule({ ...fleet(4, 4, 2), bios: false, bmc: true, budget: 3, flashMs: 5 });
    expect(s).toMatchObject({ rounds: 2, lowerBoundRounds: 2, exact: true });
    const odd = idealSchedule({ ...fleet(6, 6, 2), bios: false, bmc: true, budget: 3, flashMs: 5 });
    expect(odd).toMatchObject({ rounds: 3, lowerBoundRounds: 2, exact: false, makespanMs: 15 });
  });

  test('a gang larger than a budget is refused with a code', () => {
    const run = () => idealSchedule({ ...fleet(6, 6, 3), bios: false, bmc: true, budget: 2, flashMs: 1 });
    expect(run).toThrow(/never fits/);
    try {
      run();
    } catch (e) {
      expect(isMetalError(e, 'METAL_ERR_BENCH_INPUT')).toBe(true);
    }
  });
});
