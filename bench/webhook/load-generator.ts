// bench:webhook's load generator: a child process (its own event loop and CPU account) that sends
// AdmissionReviews over undici, closed loop or open loop at a rate, and reports latencies.
import { fork } from 'node:child_process';
import { setImmediate as immediate, setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';

// ------------------------------------------------------------------ load generator (child process)

export interface LoadJob {
  url: string;
  ca: string;
  connections: number;
  requests: { path: string; body: string }[];
  durationMs: number;
  /** Closed loop with this many in flight, or open loop at `rate` req/s. */
  concurrency?: number;
  rate?: number;
}

export interface LoadResult {
  completed: number;
  errors: number;
  elapsedMs: number;
  latencies: Float64Array;
  /** Open loop only: ms between each request's due time and its send. */
  lateness: Float64Array;
  /** The generator's own CPU (µs) over the run: near elapsedMs × 1000 means it, not the server, set the pace. */
  cpuUs: number;
}

// One agent per server for the generator's life: its TLS connections stay open from one measurement to
// the next, as the API server keeps its connections to a webhook. A fresh agent per measurement opened
// its connections inside the measured window: at 1,000 req/s on a slow machine the handshakes at its
// start delayed more than 1 % of a 2 s run's requests, and the p99 measured them.
export const agents = new Map<string, Agent>();

export function agentFor(job: LoadJob): Agent {
  let agent = agents.get(job.url);
  if (!agent) {
    agent = new Agent({ connect: { ca: job.ca }, connections: job.connections, keepAliveTimeout: 30_000 });
    agents.set(job.url, agent);
  }
  return agent;
}

export async function generateLoad(job: LoadJob): Promise<LoadResult> {
  const agent = agentFor(job);
  const latencies: number[] = [];
  /** Open loop: how long after its due time each request left (the generator's own delay). */
  const lateness: number[] = [];
  let completed = 0;
  let errors = 0;
  let next = 0;
  const send = async (scheduledAt: number) => {
    const r = job.requests[next++ % job.requests.length]!;
    try {
      const res = await request(`${job.url}${r.path}`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json' },
        body: r.body,
      });
      await res.body.text();
      if (res.statusCode !== 200) errors++;
      else {
        completed++;
        latencies.push(performance.now() - scheduledAt);
      }
    } catch {
      errors++;
    }
  };
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const end = start + job.durationMs;
  if (job.rate) {
    // Open loop: request i is due at start + i/rate, sent then whether or not earlier ones returned.
    // Between sends the loop yields with setImmediate (I/O is polled on every turn), not a 1 ms timer:
    // a timer fires 1–2 ms late, and since latency counts from the due time, that lateness was charged
    // to the server (the bare limit showed a 1.9 ms p50). How late each send still left is recorded.
    const inFlight = new Set<Promise<void>>();
    const interval = 1000 / job.rate;
    let sent = 0;
    for (let now = start; now < end; now = performance.now()) {
      for (let dueAt = start + sent * interval; dueAt <= now; dueAt = start + sent * interval) {
        lateness.push(now - dueAt);
        const p = send(dueAt).finally(() => inFlight.delete(p));
        inFlight.add(p);
        sent++;
      }
      // Far from the next send, sleep; close to it, spin through the event loop.
      const wait = start + sent * interval - performance.now();
      await (wait > 3 ? delay(wait - 2) : immediate());
    }
    await Promise.all(inFlight);
  } else {
    const loop = async () => {
      while (performance.now() < end) await send(performance.now());
    };
    await Promise.all(Array.from({ length: job.concurrency ?? 32 }, loop));
  }
  const elapsedMs = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  return {
    cpuUs: cpu.user + cpu.system,
    completed,
    errors,
    elapsedMs,
    latencies: Float64Array.from(latencies),
    lateness: Float64Array.from(lateness),
  };
}

const LOADGEN_FLAG = '--load-generator';
const isLoadGenerator = process.argv.includes(LOADGEN_FLAG);

if (isLoadGenerator) {
  process.on('message', (job: LoadJob | 'exit') => {
    if (job === 'exit')
      return void Promise.all([...agents.values()].map((a) => a.close())).finally(() => process.exit(0));
    void generateLoad(job).then((r) => process.send!(r));
  });
}

export interface Generator {
  run(job: LoadJob): Promise<LoadResult>;
  close(): Promise<void>;
}

/**
 * One load generator process for the whole benchmark: its own event loop and, unlike a worker thread,
 * its own CPU account, so process.cpuUsage() here measures the servers alone.
 */
export function startGenerator(): Generator {
  const child = fork(fileURLToPath(import.meta.url), [LOADGEN_FLAG], {
    execArgv: ['--import', 'tsx'],
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let pending: { resolve: (r: LoadResult) => void; reject: (e: Error) => void } | undefined;
  child.on('message', (r) => pending?.resolve(r as LoadResult));
  child.on('exit', (code) => pending?.reject(new Error(`load generator exited with ${code}`)));
  return {
    run: (job) =>
      new Promise((resolve, reject) => {
        pending = { resolve, reject };
        child.send(job);
      }),
    close: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.send('exit');
      await exited;
    },
  };
}
