// Benchmark: PowerState polling of 1,000 simulated BMCs through the Redfish client, against raw
// undici requests to the same simulator. Both sides use one undici Agent per BMC with the same
// connection cap and a global concurrency cap, so the ratio measures the client's own overhead
// (session auth, deadlines, error mapping, JSON handling).
//
//   npm run bench:redfish [-- --bmcs 1000 --rounds 5 --concurrency 64]
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
  .parse()
  .opts<{ bmcs: number; rounds: number; concurrency: number; connections: number }>();

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

/** Runs `poll(i)` for every BMC `rounds` times with at most `concurrency` in flight. */
async function measure(
  count: number,
  rounds: number,
  poll: (i: number) => Promise<unknown>,
): Promise<{ rps: number; p50: number; p99: number; n: number }> {
  const total = count * rounds;
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
  const sorted = Array.from(latencies).sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { rps: total / elapsed, p50: at(0.5), p99: at(0.99), n: total };
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

try {
  // Warm-up: TLS handshakes and session logins are not what is measured.
  await measure(opts.bmcs, 1, rawPoll);
  await measure(opts.bmcs, 1, clientPoll);
  // Alternate the two sides and keep the better run of each, to even out drift.
  const raw1 = await measure(opts.bmcs, opts.rounds, rawPoll);
  const client1 = await measure(opts.bmcs, opts.rounds, clientPoll);
  const raw2 = await measure(opts.bmcs, opts.rounds, rawPoll);
  const client2 = await measure(opts.bmcs, opts.rounds, clientPoll);
  const raw = raw1.rps >= raw2.rps ? raw1 : raw2;
  const client = client1.rps >= client2.rps ? client1 : client2;
  const fmt = (name: string, r: typeof raw): string =>
    `${name.padEnd(7)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  (${r.n} requests)`;
  console.log(
    `PowerState polling of ${opts.bmcs} simulated BMCs, concurrency ${opts.concurrency}, ${opts.connections} connections per BMC`,
  );
  console.log(fmt('raw', raw));
  console.log(fmt('client', client));
  const ratio = client.rps / raw.rps;
  console.log(`client/raw throughput ratio ${ratio.toFixed(3)} (target >= 0.8)`);
  console.log(
    JSON.stringify({
      throughput_ratio: Number(ratio.toFixed(3)),
      p99_ms: Number(client.p99.toFixed(2)),
      raw_p99_ms: Number(raw.p99.toFixed(2)),
      client_rps: Math.round(client.rps),
      raw_rps: Math.round(raw.rps),
      bmcs: opts.bmcs,
      concurrency: opts.concurrency,
      requests_per_run: client.n,
    }),
  );
} finally {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all(rawAgents.map((a) => a.close()));
  sim.stop();
}
