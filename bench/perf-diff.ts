// Two `perf report --sort dso,sym` profiles side by side, per request: the limit's and the webhook's,
// each taken by scripts/profile-webhook.sh while bench:webhook held that server alone under load.
// A symbol's µs per request = its share of the process's samples × the process's CPU per request.
//
//   tsx bench/perf-diff.ts <limit report> <limit µs/req> <webhook report> <webhook µs/req> [rows]
//
// Prints the totals by group (our JavaScript and fastify's, V8 and Node's native code, libc, the
// kernel), then the symbols whose cost differs most. See docs/webhook.md, "Where the time goes".
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface Sample {
  group: string;
  symbol: string;
  /** Share of the process's samples, in percent. */
  percent: number;
}

/** The dso column's groups: what kind of code a sample ran in. */
function groupOf(dso: string): string {
  if (dso.startsWith('[JIT]')) return 'JavaScript (JIT)';
  if (dso === 'node') return 'V8 and Node native (builtins, runtime, OpenSSL)';
  if (dso === '[kernel.kallsyms]') return 'kernel';
  if (dso.startsWith('libc')) return 'libc';
  return 'other';
}

const LINE = /^\s*([\d.]+)%\s+(\[JIT\] tid \d+|\S+)\s+\[[.k]\]\s+(.+?)\s*$/;

/** The rows of `perf report --stdio --sort dso,sym`; headers and blank lines are skipped. */
export function parsePerfReport(text: string): Sample[] {
  const rows: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (!m) continue;
    // JIT code without a name in the perf map is one address per sample: count it as one row.
    const symbol = m[3]!.startsWith('0x') ? '(unnamed)' : m[3]!;
    rows.push({ group: groupOf(m[2]!), symbol, percent: Number(m[1]) });
  }
  return rows;
}

export interface Difference {
  key: string;
  limit: number;
  webhook: number;
  delta: number;
}

function perRequest(rows: readonly Sample[], cpuUs: number, keyOf: (s: Sample) => string) {
  const out = new Map<string, number>();
  for (const s of rows) {
    const key = keyOf(s);
    out.set(key, (out.get(key) ?? 0) + (s.percent / 100) * cpuUs);
  }
  return out;
}

/** µs per request on each side, by the key given, largest difference (webhook − limit) first. */
export function compare(
  limit: { rows: readonly Sample[]; cpuUs: number },
  webhook: { rows: readonly Sample[]; cpuUs: number },
  keyOf: (s: Sample) => string,
): Difference[] {
  const l = perRequest(limit.rows, limit.cpuUs, keyOf);
  const w = perRequest(webhook.rows, webhook.cpuUs, keyOf);
  return [...new Set([...l.keys(), ...w.keys()])]
    .map((key) => ({ key, limit: l.get(key) ?? 0, webhook: w.get(key) ?? 0 }))
    .map((d) => ({ ...d, delta: d.webhook - d.limit }))
    .sort((a, b) => b.delta - a.delta);
}

function main(argv: string[]): void {
  const [limitFile, limitCpu, webhookFile, webhookCpu, rowsArg] = argv;
  const cpu = [Number(limitCpu), Number(webhookCpu)];
  if (!limitFile || !webhookFile || !cpu.every((x) => Number.isFinite(x) && x > 0)) {
    process.stderr.write(
      'usage: perf-diff <limit report> <limit µs/req> <webhook report> <webhook µs/req> [rows]\n',
    );
    process.exit(2);
  }
  const limit = { rows: parsePerfReport(readFileSync(limitFile, 'utf8')), cpuUs: cpu[0]! };
  const webhook = { rows: parsePerfReport(readFileSync(webhookFile, 'utf8')), cpuUs: cpu[1]! };
  const f = (x: number) => x.toFixed(2).padStart(6);
  const d = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(2)}`.padStart(7);
  process.stdout.write(`µs per request      limit  webhook  difference\n`);
  for (const g of compare(limit, webhook, (s) => s.group))
    process.stdout.write(`  ${g.key.padEnd(50)} ${f(g.limit)} ${f(g.webhook)} ${d(g.delta)}\n`);
  process.stdout.write(
    `  ${'all'.padEnd(50)} ${f(limit.cpuUs)} ${f(webhook.cpuUs)} ${d(webhook.cpuUs - limit.cpuUs)}\n`,
  );
  const rows = Number(rowsArg ?? 40);
  process.stdout.write(`symbols, largest difference first:\n`);
  for (const s of compare(limit, webhook, (x) => `${x.group.split(' ')[0]}  ${x.symbol}`).slice(0, rows))
    process.stdout.write(`  ${f(s.limit)} ${f(s.webhook)} ${d(s.delta)}  ${s.key.slice(0, 100)}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
