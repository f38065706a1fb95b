// bench:webhook's measurements: percentiles, CPU and event-loop figures per request, and the
// in-process decision latency across worlds.
import type { PolicyStore } from '../../lib/policy/store.js';
import { parseAdmissionReview } from '../../webhook/admission.js';
import { review } from '../../webhook/review.js';
import { createGrantor } from '../../webhook/grants/reserve.js';

import { type Generator, type LoadJob, type LoadResult } from './load-generator.js';
import { ts, mixed, type Fleet } from './fleet.js';

// ------------------------------------------------------------------ measurements

export const percentile = (sorted: Float64Array, p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

export type Measured = Awaited<ReturnType<typeof measure>>;

/** A load job, with how busy this (the servers') thread was per request meanwhile. */
export async function measure(gen: Generator, job: LoadJob) {
  const before = performance.eventLoopUtilization();
  const cpu0 = process.cpuUsage();
  const r = await gen.run(job);
  const cpu = process.cpuUsage(cpu0);
  const elu = performance.eventLoopUtilization(before);
  const n = Math.max(1, r.completed);
  return {
    ...summarize(r),
    busyUsPerRequest: (elu.active * 1000) / n,
    elu: elu.utilization,
    /** CPU of this process (the servers, their GC and I/O threads) per request. */
    cpuUsPerRequest: (cpu.user + cpu.system) / n,
    /** Share of one core the load generator used: near 1 means it, not the server, may set the pace. */
    generatorBusy: r.cpuUs / (r.elapsedMs * 1000),
  };
}

export function summarize(r: LoadResult) {
  const sorted = r.latencies.slice().sort();
  return {
    rps: (r.completed * 1000) / r.elapsedMs,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    /** Open loop: the generator's own delay in sending, p99 (part of every latency above). */
    lateP99: percentile(r.lateness.slice().sort(), 99),
    errors: r.errors,
    n: r.completed,
  };
}

/**
 * Per-decision latency (µs) in process: JSON body → parse → review(), rounds alternating between the worlds. Per
 * world: percentiles over all calls; the ratio is the median of the per-round ratios of medians (a
 * round of each world back to back sees the same machine). `before` runs ahead of each decision,
 * outside the timing.
 */
export async function decisionLatency(
  fleets: Fleet[],
  policies: PolicyStore,
  rounds: number,
  perRound: number,
  before?: () => void,
) {
  const samples = fleets.map(() => [] as number[]);
  const roundMedians = fleets.map(() => [] as number[]);
  // mixed() interleaves placement allow, placement deny, eviction dry-run.
  const byKind = fleets.map(() => [[], [], []] as number[][]);
  // As the server gets them: a fresh JSON body per request (pre-parsed objects shared across iterations
  // would stay cache-hot, and alias the small world's own objects, flattering it).
  const reqs = fleets.map((f) => mixed(f).map((r) => ({ ...r, body: JSON.stringify(r.review) })));
  const run = async (k: number, count: number, record: boolean) => {
    const f = fleets[k]!;
    const deps = { world: f.world, policies, grant: createGrantor(f.store), clock: () => new Date(ts) };
    const round: number[] = [];
    for (let j = 0; j < count; j++) {
      const r = reqs[k]![j % reqs[k]!.length]!;
      before?.();
      const t0 = process.hrtime.bigint();
      await review(r.type, r.rule, parseAdmissionReview(JSON.parse(r.body)), deps);
      const us = Number(process.hrtime.bigint() - t0) / 1000;
      round.push(us);
      if (record) byKind[k]![j % 3]!.push(us);
    }
    if (!record) return;
    samples[k]!.push(...round);
    roundMedians[k]!.push(percentile(Float64Array.from(round).sort(), 50));
  };
  for (let k = 0; k < fleets.length; k++) await run(k, perRound, false); // warm-up
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let round = 0; round < rounds; round++)
    for (let k = 0; k < fleets.length; k++) {
      // Each world's round starts on a collected heap, so one round's garbage is not the next one's pause.
      gc?.();
      await run(k, perRound, true);
    }
  const perWorld = samples.map((s) => {
    const sorted = Float64Array.from(s).sort();
    return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), n: s.length };
  });
  const ratios = roundMedians[1]!.map((m, i) => m / roundMedians[0]![i]!);
  const kinds = byKind.map((ks) => ks.map((xs) => median(xs)));
  return { perWorld, ratio: median(ratios), ratios, kinds };
}

/** A copy in random order (Fisher–Yates). */
export function shuffled<T>(xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Writes 16 MB, one byte per cache line: afterwards the world's maps and objects are no longer in any
 * cache, as in the server, where TLS, HTTP and a 4.4 KB JSON.parse run between two decisions.
 */
export function coldCaches(): () => void {
  const junk = new Uint8Array(16 * 1024 * 1024);
  return () => {
    for (let i = 0; i < junk.length; i += 64) junk[i] = (junk[i]! + 1) & 0xff;
  };
}
