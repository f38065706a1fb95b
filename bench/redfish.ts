// Benchmark: PowerState polling of 1,000 simulated BMCs through the Redfish client, against raw
// undici requests to the same simulator. Both sides use one undici Agent per BMC with the same
// connection cap and a global concurrency cap, so the ratio measures the client's own overhead
// (session auth, deadlines, error mapping, JSON handling).
//
//   npm run bench:redfish [-- --bmcs 1000 --rounds 5 --concurrency 64 --pairs 6]
//
// The simulator runs as a separate process (its own core). The last line printed is one JSON object.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { Agent } from 'undici';
import { RedfishClient } from '../lib/redfish/client.js';
import type { ComputerSystem } from '../lib/redfish/types.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const opts = new Command()
  .option('--bmcs <n>', 'simulated BMCs', (v) => Number.parseInt(v, 10), 1000)
  .option('--rounds <n>', 'polls of every BMC per measurement', (v) => Number.parseInt(v, 10), 5)
  .option('--concurrency <n>', 'requests in flight at most', (v) => Number.parseInt(v, 10), 64)
  .option('--connections <n>', 'connection cap per BMC', (v) => Number.parseInt(v, 10), 2)
  .option('--pairs <n>', 'measured pairs of runs (raw, client)', (v) => Number.parseInt(v, 10), 6)
  .parse()
  .opts<{ bmcs: number; rounds: number; concurrency: number; connections: number; pairs: number }>();

interface Sim {
  url: string;
  ca: string;
  credentials: { username: string; password: string };
  stop: () => void;
}

async function startSim(count: number): Promise<Sim> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-redfish-'));
  const caFile = join(dir, 'ca.pem');
  const child = spawn(
    process.execPath,
    [
      join(ROOT, 'node_modules/tsx/dist/cli.mjs'),
      join(ROOT, 'e2e/sim/bmc/main.ts'),
      '--count',
      String(count),
      '--port',
      '0',
      '--ca-out',
      caFile,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = await new Promise<string[]>((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (b: Buffer) => {
      buf += b.toString();
      if (buf.split('\n').length > 2) resolve(buf.split('\n'));
    });
    child.once('exit', (code) => reject(new Error(`simulator exited (${code}) before it started`)));
  });
  const info = JSON.parse(lines[1]!) as { url: string; credentials: Sim['credentials'] };
  return {
    url: info.url,
    ca: readFileSync(caFile, 'utf8'),
    credentials: info.credentials,
    stop: () => {
      child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Run {
  rps: number;
  p50: number;
  p99: number;
  n: number;
  /** CPU time of this process (user + system) per request: steadier than throughput on a shared machine. */
  cpuUs: number;
}

/** Runs `poll(i)` for every BMC `rounds` times with at most `concurrency` in flight. */
async function measure(count: number, rounds: number, poll: (i: number) => Promise<unknown>): Promise<Run> {
  const total = count * rounds;
  const cpu0 = process.cpuUsage();
  const latencies = new Float64Array(total);
  let next = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    for (let k = next++; k < total; k = next++) {
      const t0 = performance.now();
      const state = await poll(k % count);
      if (state !== 'On' && state !== 'Off') throw new Error(`unexpected PowerState ${String(state)}`);
      latencies[k] = performance.now() - t0;
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const sorted = Array.from(latencies).sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return {
    rps: total / elapsed,
    p50: at(0.5),
    p99: at(0.99),
    n: total,
    cpuUs: (cpu.user + cpu.system) / total,
  };
}

const sim = await startSim(opts.bmcs);
const systemPath = (i: number): string => `/bmc/${i}/redfish/v1/Systems/1`;
const basic =
  'Basic ' + Buffer.from(`${sim.credentials.username}:${sim.credentials.password}`).toString('base64');
const rawAgents = Array.from(
  { length: opts.bmcs },
  () => new Agent({ connections: opts.connections, connect: { ca: sim.ca } }),
);
const clients = Array.from(
  { length: opts.bmcs },
  (_, i) =>
    new RedfishClient({
      endpoint: `${sim.url}/bmc/${i}`,
      tls: { ca: sim.ca },
      credentials: sim.credentials,
      maxConnections: opts.connections,
      timeoutMs: 10_000,
    }),
);

const rawPoll = async (i: number): Promise<unknown> => {
  const res = await rawAgents[i]!.request({
    origin: sim.url,
    path: systemPath(i),
    method: 'GET',
    headers: { authorization: basic, accept: 'application/json' },
  });
  const body = JSON.parse(await res.body.text()) as ComputerSystem;
  return body.PowerState;
};
const clientPoll = async (i: number): Promise<unknown> =>
  (await clients[i]!.get<ComputerSystem>(systemPath(i))).PowerState;

/** Median of a non-empty list. */
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const spread = (xs: number[]): string => `${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)}`;

try {
  // Warm-up: TLS handshakes and session logins are not what is measured.
  await measure(opts.bmcs, 1, rawPoll);
  await measure(opts.bmcs, 1, clientPoll);
  // Pairs of runs, the side that goes first alternating, so drift of a shared machine falls on both.
  const pairs: { raw: Run; client: Run }[] = [];
  for (let p = 0; p < opts.pairs; p++) {
    const first = p % 2 === 0 ? rawPoll : clientPoll;
    const second = p % 2 === 0 ? clientPoll : rawPoll;
    const a = await measure(opts.bmcs, opts.rounds, first);
    const b = await measure(opts.bmcs, opts.rounds, second);
    pairs.push(p % 2 === 0 ? { raw: a, client: b } : { raw: b, client: a });
  }
  const ratios = pairs.map((p) => p.client.rps / p.raw.rps);
  const p99Ratios = pairs.map((p) => p.client.p99 / p.raw.p99);
  const cpuRatios = pairs.map((p) => p.client.cpuUs / p.raw.cpuUs);
  const side = (pick: (p: { raw: Run; client: Run }) => Run) => ({
    rps: median(pairs.map((p) => pick(p).rps)),
    p50: median(pairs.map((p) => pick(p).p50)),
    p99: median(pairs.map((p) => pick(p).p99)),
    cpuUs: median(pairs.map((p) => pick(p).cpuUs)),
  });
  const raw = side((p) => p.raw);
  const client = side((p) => p.client);
  const fmt = (name: string, r: ReturnType<typeof side>): string =>
    `${name.padEnd(7)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  cpu ${r.cpuUs.toFixed(0)} us/request`;
  console.log(
    `PowerState polling of ${opts.bmcs} simulated BMCs, concurrency ${opts.concurrency}, ${opts.connections} connections per BMC; ` +
      `${opts.pairs} pairs of runs of ${opts.bmcs * opts.rounds} requests, medians:`,
  );
  console.log(fmt('raw', raw));
  console.log(fmt('client', client));
  console.log(
    `client/raw throughput ratio ${median(ratios).toFixed(3)} (spread ${spread(ratios)}; target >= 0.9)`,
  );
  console.log(
    `client/raw p99 ratio        ${median(p99Ratios).toFixed(3)} (spread ${spread(p99Ratios)}; target <= 1.2)`,
  );
  console.log(`client/raw CPU per request  ${median(cpuRatios).toFixed(3)} (spread ${spread(cpuRatios)})`);
  console.log(
    JSON.stringify({
      throughput_ratio: Number(median(ratios).toFixed(3)),
      throughput_ratio_min: Number(Math.min(...ratios).toFixed(3)),
      throughput_ratio_max: Number(Math.max(...ratios).toFixed(3)),
      p99_ratio: Number(median(p99Ratios).toFixed(3)),
      cpu_ratio: Number(median(cpuRatios).toFixed(3)),
      client_cpu_us_per_request: Math.round(client.cpuUs),
      raw_cpu_us_per_request: Math.round(raw.cpuUs),
      p99_ms: Number(client.p99.toFixed(2)),
      raw_p99_ms: Number(raw.p99.toFixed(2)),
      client_rps: Math.round(client.rps),
      raw_rps: Math.round(raw.rps),
      bmcs: opts.bmcs,
      concurrency: opts.concurrency,
      pairs: opts.pairs,
      requests_per_run: opts.bmcs * opts.rounds,
    }),
  );
} finally {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all(rawAgents.map((a) => a.close()));
  sim.stop();
}
