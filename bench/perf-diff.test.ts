import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compare, parsePerfReport } from './perf-diff.js';

// Shaped like `perf report --stdio --sort dso,sym` output, with made-up figures: headers, JIT rows with
// and without a name, a kernel row.
const fixture = (name: string) => readFileSync(join(import.meta.dirname, 'testdata', name), 'utf8');

describe('parsePerfReport', () => {
  it('reads each row: group by dso, symbol, share; headers and blank lines are skipped', () => {
    const rows = parsePerfReport(fixture('perf-report-webhook.txt'));
    expect(rows).toEqual([
      {
        group: 'V8 and Node native (builtins, runtime, OpenSSL)',
        symbol: 'v8::internal::JsonParser<unsigned char>::ScanJsonString',
        percent: 6.2,
      },
      {
        group: 'V8 and Node native (builtins, runtime, OpenSSL)',
        symbol: 'Builtins_FindOrderedHashMapEntry',
        percent: 2.5,
      },
      { group: 'JavaScript (JIT)', symbol: '(unnamed)', percent: 1.5 },
      { group: 'JavaScript (JIT)', symbol: '(unnamed)', percent: 0.5 },
      { group: 'kernel', symbol: '_raw_spin_unlock_irqrestore', percent: 2.5 },
      { group: 'libc', symbol: '_int_malloc', percent: 1 },
      {
        group: 'JavaScript (JIT)',
        symbol: 'JS:*reservations file:///repo/webhook/rules/eviction.ts:1:9644',
        percent: 0.8,
      },
    ]);
  });
});

describe('compare', () => {
  const limit = { rows: parsePerfReport(fixture('perf-report-limit.txt')), cpuUs: 50 };
  const webhook = { rows: parsePerfReport(fixture('perf-report-webhook.txt')), cpuUs: 80 };

  it('turns shares into µs per request with each side its own CPU, largest difference first', () => {
    const bySymbol = compare(limit, webhook, (s) => s.symbol);
    // ScanJsonString: 8 % of 50 µs against 6.2 % of 80 µs.
    const parse = bySymbol.find((d) => d.key.endsWith('ScanJsonString'))!;
    expect(parse.limit).toBeCloseTo(4.0);
    expect(parse.webhook).toBeCloseTo(4.96);
    // Only in the webhook's profile: the limit side is 0.
    const lookups = bySymbol.find((d) => d.key === 'Builtins_FindOrderedHashMapEntry')!;
    expect(lookups).toMatchObject({ limit: 0, webhook: 2 });
    expect(bySymbol.map((d) => d.delta)).toEqual([...bySymbol.map((d) => d.delta)].sort((a, b) => b - a));
  });

  it('sums rows under one key (two unnamed JIT rows are one group)', () => {
    const byGroup = compare(limit, webhook, (s) => s.group);
    const jit = byGroup.find((d) => d.key === 'JavaScript (JIT)')!;
    expect(jit.webhook).toBeCloseTo(((1.5 + 0.5 + 0.8) / 100) * 80);
    expect(jit.limit).toBeCloseTo((3 / 100) * 50);
  });
});
