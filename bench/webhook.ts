// Benchmark: the admission webhook against the limit of its transport.
//
//   npm run bench:webhook [-- --duration 5 --concurrency 32 --connections 32 --rate 1000 --ladder]
//
// Two HTTPS servers with the same certificate in this process: the webhook (createWebhookServer over an
// InformerWorld holding 10,000 Servers and 10,000 ServerClaims, a MemoryBudgetStore whose first look
// at a budget is the informer's copy as in the binary, the default policy, an info-level logger whose
// denial lines are sampled as the binary's are, `--log-sampling` to change that) and a
// bare fastify endpoint answering a fixed "allowed" AdmissionReview (the limit: TLS, HTTP and JSON
// parsing, no decision). A load generator (undici, in its own process) sends
// realistic AdmissionReviews in equal shares: placement allow (bind a claim to a free Server), placement
// deny (bind to a cordoned Server), eviction dry-run (a ServerMaintenance status write to InMaintenance
// under a fleet, a per-rack and a tenant budget). Measured:
//   throughput  closed loop, `--concurrency` requests in flight, rounds alternating webhook and limit
//   latency     open loop at `--rate` req/s (from the scheduled send time: no coordinated omission)
//   ladder      with --ladder: the webhook's work step by step, each step against the limit
//   decisions   in process, JSON body → parse → review() per request, 100 vs 10,000 Servers and claims;
//               warm (back to back) and cold (caches flushed before each, as between two requests)
// With --hold webhook|limit it only loads that server for one window and stops: a profiler outside the
// process (scripts/profile-webhook.sh, perf) then sees that server's work alone.
// The last line printed is one JSON object: throughput_ratio, p99_ms, scale_ratio and the raw figures.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { makeServingCertificate } from '../e2e/harness/webhook.js';
import { PolicyStore } from '../lib/policy/store.js';
import { DEFAULT_POLICY } from '../policies/schema.js';
import { type ReviewDeps } from '../webhook/review.js';
import { DEFAULT_LOG_SAMPLING, parseLogSampling, type LogSampling } from '../lib/log-sampling.js';

import { startGenerator, type LoadJob } from './webhook/load-generator.js';
import { buildFleet, wireRequests, verify, type Fleet } from './webhook/fleet.js';
import { measure, summarize, decisionLatency, median, coldCaches, type Measured } from './webhook/measure.js';
import { LADDER, ladderRounds, ladderServer, startServers } from './webhook/servers.js';
/**
 * `--hold`: one server under the closed-loop load for one window, announced on stdout as it starts, so
 * that a profiler outside this process (scripts/profile-webhook.sh) sees that server's work alone.
 * Prints one JSON line with its throughput and CPU per request; exits non-zero on failed requests.
 */
async function hold(
  side: 'webhook' | 'limit',
  opts: BenchOptions,
  { served, policies, tls, caPem, connections }: RunSetup,
): Promise<void> {
  const { webhook, limit, log, urlOf } = await startServers(served, policies, tls, opts.logSampling);
  const url = urlOf(side === 'webhook' ? webhook.app : limit);
  const load = { ca: caPem, connections, concurrency: opts.concurrency, durationMs: opts.duration * 1000 };
  const requests = wireRequests(served);
  const gen = startGenerator();
  try {
    await measure(gen, { ...load, url, requests, durationMs: 2000 }); // warm-up: JIT, TLS sessions
    process.stdout.write(`holding ${side} for ${load.durationMs / 1000}s\n`);
    const m = await measure(gen, { ...load, url, requests });
    process.stdout.write(
      `${JSON.stringify({ side, rps: Math.round(m.rps), cpu_us_per_request: Number(m.cpuUsPerRequest.toFixed(1)), errors: m.errors })}\n`,
    );
    if (m.errors > 0) process.exitCode = 1;
  } finally {
    await gen.close();
    log.close();
    await Promise.all([webhook.app.close(), limit.close()]);
  }
}

// ------------------------------------------------------------------ main

interface BenchOptions {
  duration: number;
  rounds: number;
  connections?: number;
  concurrency: number;
  rate: number;
  small: number;
  large: number;
  serve: string;
  ladder?: boolean;
  hold?: string;
  logSampling: LogSampling | false;
}

/** What a run needs from the setup: the two fleets, verified, the one served, and the certificate. */
interface RunSetup {
  small: Fleet;
  large: Fleet;
  served: Fleet;
  policies: PolicyStore;
  tls: { key: Buffer; cert: Buffer };
  caPem: string;
  connections: number;
  buildMs: number;
}

/** Every measurement, then the report; the last line printed is the JSON summary. */
async function fullRun(
  opts: BenchOptions,
  { small, large, served, policies, tls, caPem, connections, buildMs }: RunSetup,
) {
  const decisions = await decisionLatency([small, large], policies, 9, 3000);
  const cold = await decisionLatency([small, large], policies, 5, 600, coldCaches());
  const [dSmall, dLarge] = decisions.perWorld as [
    (typeof decisions.perWorld)[0],
    (typeof decisions.perWorld)[0],
  ];

  const { webhook, limit, log, grant, urlOf } = await startServers(served, policies, tls, opts.logSampling);
  const requests = wireRequests(served);
  const bodyBytes = Math.round(requests.reduce((a, r) => a + r.body.length, 0) / requests.length);
  const job = (url: string, extra: Partial<LoadJob>): LoadJob => ({
    url,
    ca: caPem,
    connections,
    requests,
    durationMs: opts.duration * 1000,
    ...extra,
  });

  const gen = startGenerator();
  const closed = (url: string, durationMs = opts.duration * 1000) =>
    measure(gen, job(url, { concurrency: opts.concurrency, durationMs }));
  // Warm both servers (JIT, TLS sessions) before measuring.
  await closed(urlOf(webhook.app), 2000);
  await closed(urlOf(limit), 2000);
  // Short rounds in pairs, in random order: two rounds of a pair see about the same background load,
  // so the median of the per-pair ratios is robust to a busy machine.
  const pairs: { w: Measured; l: Measured }[] = [];
  for (let round = 0; round < opts.rounds; round++) {
    if (Math.random() < 0.5) {
      const w = await closed(urlOf(webhook.app));
      pairs.push({ w, l: await closed(urlOf(limit)) });
    } else {
      const l = await closed(urlOf(limit));
      pairs.push({ l, w: await closed(urlOf(webhook.app)) });
    }
  }
  const ratio = median(pairs.map((p) => p.w.rps / p.l.rps));
  // The webhook's work step by step (see ladderRounds), the webhook itself as the last step.
  const ladder: { step: string; adds: string; ratio: number; cpuUs: number }[] = [];
  let ladderErrors = 0;
  if (opts.ladder) {
    const deps: ReviewDeps = {
      world: served.world,
      policies,
      grant,
      clock: () => new Date(),
    };
    const steps = await Promise.all(LADDER.map((_, level) => ladderServer(level, deps, tls)));
    const urls = [...steps.map(urlOf), urlOf(webhook.app)];
    const byStep = await ladderRounds(urls, urlOf(limit), opts.rounds, closed);
    ladderErrors = byStep.errors;
    await Promise.all(steps.map((app) => app.close()));
    const named = [...LADDER, { step: 'webhook', adds: 'metrics, timing and the denial log line' }];
    for (const [k, runs] of byStep.runs.entries())
      ladder.push({
        ...named[k]!,
        ratio: median(runs.map((r) => r.ratio)),
        cpuUs: median(runs.map((r) => r.cpuUs)),
      });
  }
  // What the throughput ratio would be with a core to each server: the inverse ratio of their CPU per
  // request. Immune to time slices stolen by other processes, unlike req/s on a shared machine.
  const cpuRatio = median(pairs.map((p) => p.l.cpuUsPerRequest / p.w.cpuUsPerRequest));
  const medianRound = (side: 'w' | 'l') => {
    const sorted = [...pairs].sort((a, b) => a[side].rps - b[side].rps);
    return sorted[Math.floor(sorted.length / 2)]![side];
  };
  const w = medianRound('w');
  const l = medianRound('l');
  // Latency at a fixed rate: three open-loop runs; the median run's percentiles.
  const atRates: ReturnType<typeof summarize>[] = [];
  for (let k = 0; k < 3; k++)
    atRates.push(summarize(await gen.run(job(urlOf(webhook.app), { rate: opts.rate }))));
  const atRate = [...atRates].sort((a, b) => a.p99 - b.p99)[1]!;
  const limitAtRate = summarize(await gen.run(job(urlOf(limit), { rate: opts.rate })));
  await gen.close();
  log.close();
  await webhook.app.close();
  await limit.close();

  const f = (x: number, d = 2) => x.toFixed(d);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const row = (name: string, m: Measured) =>
    `  ${name} ${f(m.rps, 0).padStart(6)} req/s  p50 ${f(m.p50)} ms  p99 ${f(m.p99)} ms  ` +
    `server CPU ${f(m.cpuUsPerRequest, 1)} µs/req, event loop busy ${f(m.elu * 100, 0)}%, generator CPU ${f(m.generatorBusy * 100, 0)}%  errors ${m.errors}`;
  out(
    `worlds: ${opts.small} and ${opts.large} Servers + ServerClaims (built in ${buildMs} ms); HTTP against ${served === large ? opts.large : opts.small}`,
  );
  out(
    `workload: placement allow / placement deny / eviction dry-run in equal shares, ~${bodyBytes} B per review`,
  );
  const sampling = opts.logSampling;
  out(
    `webhook log: info, denial lines ${sampling ? `sampled ${sampling.initial}:${sampling.thereafter} per rule and code a second, as the binary's default` : 'all written (--log-sampling off)'}`,
  );
  out(
    `throughput (closed loop, ${opts.concurrency} in flight over ${connections} TLS connections, ${opts.rounds} paired rounds of ${opts.duration}s; median round):`,
  );
  out(row('webhook', w));
  out(row('limit  ', l));
  out(`  ratio   ${f(ratio, 3)} (median of pairs: ${pairs.map((p) => f(p.w.rps / p.l.rps, 2)).join(' ')})`);
  out(
    `  CPU per request, limit/webhook ${f(cpuRatio, 3)} (median of pairs: ${pairs.map((p) => f(p.l.cpuUsPerRequest / p.w.cpuUsPerRequest, 2)).join(' ')})`,
  );

  if (ladder.length > 0) {
    out(`where the webhook's CPU goes (each step against the limit in its round; median of ${opts.rounds}):`);
    for (const s of ladder)
      out(`  ${s.step.padEnd(15)} ${f(s.ratio, 3)}  ${f(s.cpuUs, 1).padStart(5)} µs/req  ${s.adds}`);
  }
  out(`latency at ${opts.rate} req/s (open loop, ${opts.duration}s; median of 3 runs by p99):`);
  out(
    `  webhook p50 ${f(atRate.p50)} ms  p99 ${f(atRate.p99)} ms  (${f(atRate.rps, 0)} req/s, errors ${atRate.errors}; p99 of the runs ${atRates.map((a) => f(a.p99)).join(' / ')})`,
  );
  out(
    `  limit   p50 ${f(limitAtRate.p50)} ms  p99 ${f(limitAtRate.p99)} ms  (${f(limitAtRate.rps, 0)} req/s)`,
  );
  out(
    `  the generator sent late by p99 ${f(atRate.lateP99, 3)} ms (webhook run) / ${f(limitAtRate.lateP99, 3)} ms (limit run), included above`,
  );
  out(
    `decision latency in process (JSON body → parse → review; ${dSmall.n} decisions per world, 9 alternating rounds):`,
  );
  out(`  ${String(opts.small).padStart(6)} objects  p50 ${f(dSmall.p50, 1)} µs  p99 ${f(dSmall.p99, 1)} µs`);
  out(`  ${String(opts.large).padStart(6)} objects  p50 ${f(dLarge.p50, 1)} µs  p99 ${f(dLarge.p99, 1)} µs`);
  out(
    `  ratio   ${f(decisions.ratio, 3)} (median of rounds: ${decisions.ratios.map((x) => f(x, 2)).join(' ')})`,
  );
  const [ks, kl] = decisions.kinds as [number[], number[]];
  out(
    `  p50 by kind (small/large µs): placement allow ${f(ks[0]!, 1)}/${f(kl[0]!, 1)}, ` +
      `placement deny ${f(ks[1]!, 1)}/${f(kl[1]!, 1)}, eviction dry-run ${f(ks[2]!, 1)}/${f(kl[2]!, 1)}`,
  );
  const [cs, cl] = cold.perWorld as [(typeof cold.perWorld)[0], (typeof cold.perWorld)[0]];
  const [cks, ckl] = cold.kinds as [number[], number[]];
  out(
    `  the same with cold caches (16 MB written before each; ${cs.n} per world, 5 rounds): ` +
      `p50 ${f(cs.p50, 1)} → ${f(cl.p50, 1)} µs, ratio ${f(cold.ratio, 3)}; by kind ` +
      `${f(cks[0]!, 1)}/${f(ckl[0]!, 1)}, ${f(cks[1]!, 1)}/${f(ckl[1]!, 1)}, ${f(cks[2]!, 1)}/${f(ckl[2]!, 1)}`,
  );
  out(
    JSON.stringify({
      throughput_ratio: Number(f(ratio, 3)),
      p99_ms: Number(f(atRate.p99, 3)),
      scale_ratio: Number(f(decisions.ratio, 3)),
      scale_ratio_cold: Number(f(cold.ratio, 3)),
      webhook_rps: Math.round(w.rps),
      limit_rps: Math.round(l.rps),
      webhook_p50_ms: Number(f(w.p50, 3)),
      webhook_p99_ms: Number(f(w.p99, 3)),
      limit_p50_ms: Number(f(l.p50, 3)),
      limit_p99_ms: Number(f(l.p99, 3)),
      cpu_ratio: Number(f(cpuRatio, 3)),
      webhook_cpu_us_per_request: Number(f(w.cpuUsPerRequest, 1)),
      limit_cpu_us_per_request: Number(f(l.cpuUsPerRequest, 1)),
      generator_busy: { webhook: Number(f(w.generatorBusy)), limit: Number(f(l.generatorBusy)) },
      rate: opts.rate,
      p50_ms_at_rate: Number(f(atRate.p50, 3)),
      send_late_p99_ms: Number(f(atRate.lateP99, 3)),
      decision_p50_us: { [opts.small]: Number(f(dSmall.p50, 1)), [opts.large]: Number(f(dLarge.p50, 1)) },
      errors: pairs.reduce((a, p) => a + p.w.errors + p.l.errors, 0) + atRate.errors + ladderErrors,
      ...(ladder.length > 0
        ? { ladder: Object.fromEntries(ladder.map((s) => [s.step, Number(f(s.ratio, 3))])) }
        : {}),
    }),
  );
}

const opts = new Command('bench-webhook')
  .option('--duration <s>', 'seconds per load measurement', Number, 2)
  .option('--rounds <n>', 'paired throughput rounds (webhook and limit back to back)', Number, 7)
  .option(
    '--connections <n>',
    'TLS connections of the load generator (default: one per request in flight)',
    Number,
  )
  .option('--concurrency <n>', 'requests in flight (throughput)', Number, 32)
  .option('--rate <n>', 'requests/s for the latency measurement', Number, 1000)
  .option('--small <n>', 'Servers and claims in the small world', Number, 100)
  .option('--large <n>', 'Servers and claims in the large world', Number, 10_000)
  .option('--serve <world>', 'world behind the HTTP measurements: large | small', 'large')
  .option('--ladder', "also measure the webhook's work step by step against the limit (where 0.8 goes)")
  .option(
    '--hold <side>',
    'after the warm-up, load only this server (webhook | limit) for --duration seconds, print its ' +
      'figures and stop: a window for a profiler outside the process (scripts/profile-webhook.sh)',
  )
  .option(
    '--log-sampling <initial:thereafter|off>',
    "the webhook's denial lines, as the binary's flag (off: every line)",
    parseLogSampling,
    DEFAULT_LOG_SAMPLING,
  )
  .parse()
  .opts<BenchOptions>();
if (opts.hold !== undefined && opts.hold !== 'webhook' && opts.hold !== 'limit') {
  process.stderr.write(`--hold must be webhook or limit, not ${JSON.stringify(opts.hold)}\n`);
  process.exit(2);
}
// The API server calls a webhook over HTTP/1.1 only (its webhook client pins ALPN to http/1.1), with
// Go's client, which never pipelines: each call in flight has a connection of its own. With fewer
// connections than requests in flight, the rest would wait in the generator and the server would see
// fewer.
const connections = opts.connections ?? opts.concurrency;

const dir = mkdtempSync(join(tmpdir(), 'bench-webhook-'));
try {
  const { certDir, caPem } = makeServingCertificate(dir);
  const tls = { key: readFileSync(join(certDir, 'tls.key')), cert: readFileSync(join(certDir, 'tls.crt')) };
  const policies = new PolicyStore({ initial: DEFAULT_POLICY });
  const t0 = Date.now();
  const small = buildFleet(opts.small);
  const large = buildFleet(opts.large);
  const buildMs = Date.now() - t0;
  await verify(small, policies);
  await verify(large, policies);

  const served = opts.serve === 'small' ? small : large;
  const setup: RunSetup = { small, large, served, policies, tls, caPem, connections, buildMs };
  if (opts.hold) await hold(opts.hold, opts, setup);
  else await fullRun(opts, setup);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
