// The demo's monitoring: a real Prometheus (e2e/harness/prometheus.ts, Debian's package) scraping
// every binary the demo runs under the job label the shipped PodMonitor gives it, evaluating the
// shipped PrometheusRule, and a few figures the summary prints, queried from it at the end: what an
// operator's dashboard would show of the run, not counts the demo keeps itself.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  shippedRuleGroups,
  startPrometheus,
  writeRuleFile,
  type PrometheusHandle,
  type PromSample,
  type ScrapeTarget,
} from '../harness/prometheus.js';
import type { Stack } from './stack.js';

/** Scrape and evaluation interval: the summary's figures are at most this old. */
const INTERVAL_S = 1;

/** Every binary of the stack as a scrape target: job = the Deployment's app.kubernetes.io/name. */
export function stackTargets(stack: Stack): ScrapeTarget[] {
  return [
    ...(stack.webhook?.replicas ?? []).map((r) => ({
      job: 'metal-maintenance-webhook',
      address: `127.0.0.1:${r.opsPort}`,
    })),
    ...stack.controllers.map((c) => ({
      job: `metal-maintenance-${c.name}-controller`,
      address: `127.0.0.1:${c.opsPort}`,
    })),
  ];
}

/** Starts Prometheus in `dir` over the stack's binaries and waits for every first scrape. */
export async function startDemoPrometheus(dir: string, stack: Stack): Promise<PrometheusHandle> {
  mkdirSync(dir, { recursive: true });
  const prom = await startPrometheus({
    dir,
    targets: stackTargets(stack),
    ruleFile: writeRuleFile(dir, shippedRuleGroups()),
    interval: `${INTERVAL_S}s`,
  });
  try {
    await prom.waitForTargets(60_000);
  } catch (e) {
    await prom.stop();
    throw e;
  }
  return prom;
}

/** The queries behind the summary's figures (names as the binaries export them). */
export const FIGURE_QUERIES = {
  up: 'up',
  decisions: 'sum by (result) (metal_webhook_decisions_total)',
  grants: 'sum by (result) (metal_webhook_grants_total{dry_run="false"})',
  p99: 'histogram_quantile(0.99, sum by (le) (metal_webhook_admission_duration_seconds_bucket))',
  transitions: 'sum by (result) (metal_maintenance_admission_attempts_total)',
} as const;

export type FigureResults = Record<keyof typeof FIGURE_QUERIES, PromSample[]> & { firing: string[] };

/** Queries every figure, after one more scrape so the run's last writes are counted. */
export async function queryFigures(prom: PrometheusHandle): Promise<FigureResults> {
  await sleep(2 * INTERVAL_S * 1000);
  const entries = await Promise.all(
    Object.entries(FIGURE_QUERIES).map(async ([k, q]) => [k, await prom.query(q)] as const),
  );
  const firing = (await prom.alerts())
    .filter((a) => a.state === 'firing')
    .map((a) => a.labels.alertname ?? '?');
  return { ...(Object.fromEntries(entries) as Record<keyof typeof FIGURE_QUERIES, PromSample[]>), firing };
}

const num = (s: PromSample) => Number(s.value[1]);
/** "allowed 312, denied 41" from a vector by one label; "none" when empty. */
function byLabel(samples: PromSample[], label: string): string {
  const parts = samples
    .filter((s) => num(s) > 0)
    .sort((a, b) => (a.metric[label] ?? '').localeCompare(b.metric[label] ?? ''))
    .map((s) => `${s.metric[label] ?? '?'} ${Math.round(num(s))}`);
  return parts.length ? parts.join(', ') : 'none';
}

/** The summary's Prometheus lines, pure over the query results. */
export function figureLines(r: FigureResults): string[] {
  const up = r.up.filter((s) => num(s) === 1).length;
  const p99 = r.p99[0] && Number.isFinite(num(r.p99[0])) ? `${(num(r.p99[0]) * 1000).toFixed(1)} ms` : 'n/a';
  return [
    `scrape targets up: ${up} of ${r.up.length}`,
    `admission decisions: ${byLabel(r.decisions, 'result')} (p99 ${p99})`,
    `budget grants: ${byLabel(r.grants, 'result')}`,
    `InMaintenance transitions: ${byLabel(r.transitions, 'result')}`,
    `alerts firing: ${r.firing.length ? [...new Set(r.firing)].sort().join(', ') : 'none'}`,
  ];
}

/** The Prometheus directory inside the demo's. */
export const prometheusDir = (demoDir: string) => join(demoDir, 'prometheus');
