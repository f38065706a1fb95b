import { DecisionLog, lineSampler, parseLogSampling } from './log-sampling.js';

/** A sampler on a clock the test moves, and what it answered for each line, in order. */
function sampled(initial: number, thereafter: number) {
  let t = 0;
  const sample = lineSampler({ initial, thereafter }, () => t);
  return {
    lines: (key: string, n: number) => Array.from({ length: n }, () => sample(key)),
    at: (ms: number) => (t = ms),
  };
}

describe('lineSampler', () => {
  it('writes the first lines of a window, then every thereafter-th, counting those left out', () => {
    const s = sampled(2, 3);
    // 1 and 2 written; 3, 4 out; 5 written (2 left out before it); 6, 7 out; 8 written; 9 out.
    expect(s.lines('A', 9)).toEqual([0, 0, undefined, undefined, 2, undefined, undefined, 2, undefined]);
  });

  it('starts each one-second window afresh, and reports the lines left out at the end of the last', () => {
    const s = sampled(1, 10);
    expect(s.lines('A', 3)).toEqual([0, undefined, undefined]);
    s.at(999);
    expect(s.lines('A', 1)).toEqual([undefined]);
    s.at(1000);
    expect(s.lines('A', 2)).toEqual([3, undefined]);
  });

  it('keeps a window per key: a storm of one code leaves the lines of another alone', () => {
    const s = sampled(1, 100);
    expect(s.lines('A', 50).filter((x) => x !== undefined)).toEqual([0]);
    expect(s.lines('B', 1)).toEqual([0]);
  });

  it('with thereafter 1, writes every line', () => {
    expect(sampled(1, 1).lines('A', 5)).toEqual([0, 0, 0, 0, 0]);
  });
});

describe('parseLogSampling', () => {
  it.each([
    ['100:100', { initial: 100, thereafter: 100 }],
    ['1:1', { initial: 1, thereafter: 1 }],
    ['off', false],
  ])('reads %s', (text, expected) => {
    expect(parseLogSampling(text)).toEqual(expected);
  });

  it.each(['', '100', '0:100', '100:0', '-1:5', '1.5:2', '100:100:1', 'on', '99999999999999999:1'])(
    'refuses %j, saying what would be valid',
    (text) => {
      expect(() => parseLogSampling(text)).toThrow(
        `expected INITIAL:THEREAFTER with integers >= 1 (e.g. 100:100: per rule and denial code, the first ` +
          `100 lines a second, then every 100th) or "off", got ${JSON.stringify(text)}`,
      );
    },
  );
});

describe('DecisionLog', () => {
  const lines: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
  const log = {
    info: (fields: Record<string, unknown>, msg: string) => lines.push({ level: 'info', fields, msg }),
    warn: (fields: Record<string, unknown>, msg: string) => lines.push({ level: 'warn', fields, msg }),
  };

  it('writes the first lines of a decision in a second, then every n-th, saying how many it left out', () => {
    lines.length = 0;
    let t = 0;
    const d = new DecisionLog(log, { initial: 2, thereafter: 3 }, () => t);
    for (let i = 0; i < 8; i++)
      d.info('BudgetExhausted', { maintenance: `ops/m${i}` }, 'maintenance waiting for budget');
    d.warn('Failed', { maintenance: 'ops/x' }, 'maintenance failed: ParkTimeout');
    expect(lines.map((l) => [l.level, l.fields.maintenance, l.fields.unlogged])).toEqual([
      ['info', 'ops/m0', undefined],
      ['info', 'ops/m1', undefined],
      ['info', 'ops/m4', 2],
      ['info', 'ops/m7', 2],
      ['warn', 'ops/x', undefined],
    ]);
    expect(lines[0]!.fields.decision).toBe('BudgetExhausted');
    t = 1000;
    d.info('BudgetExhausted', { maintenance: 'ops/next' }, 'maintenance waiting for budget');
    expect(lines.at(-1)!.fields.maintenance).toBe('ops/next');
  });

  it('writes every line with sampling off', () => {
    lines.length = 0;
    const d = new DecisionLog(log, false);
    for (let i = 0; i < 300; i++) d.info('Admitted', {}, 'maintenance admitted: InMaintenance');
    expect(lines).toHaveLength(300);
  });
});
