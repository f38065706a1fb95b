// A real Prometheus (Debian's package, unpacked by scripts/lib/prometheus.sh) next to the test
// control plane, scraping our binaries' /metrics and evaluating the shipped alert rules:
//
//   const prom = await startPrometheus({ dir, targets: [{ job: 'metal-maintenance-webhook', address }] });
//   await prom.query('sum(up)');          // instant query: the result vector
//   await prom.firing();                  // alerts in state firing
//   await prom.stop();                    // also in afterAll: it never throws
//
// Targets carry the label the shipped PodMonitor gives them (job = the pod's app.kubernetes.io/name),
// so the rules and the dashboard select on the same labels here as in a cluster.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse, stringify } from 'yaml';
import { REPO_ROOT } from './control-plane.js';
import { preparedDir } from './k8s-tools.js';
import { stopChild } from './processes.js';

export const PROMETHEUS_RULE = join(REPO_ROOT, 'manifests', 'monitoring', 'prometheusrule.yaml');

/** prometheus and promtool from the cache (fails naming what to install when they cannot be had). */
export function prometheusTools(): { prometheus: string; promtool: string } {
  const dir = preparedDir('prometheus.sh');
  return { prometheus: join(dir, 'prometheus'), promtool: join(dir, 'promtool') };
}

export interface RuleGroup {
  name: string;
  rules: { alert?: string; record?: string; expr: string; for?: string; [k: string]: unknown }[];
}

/** The rule groups of the shipped PrometheusRule (its spec is a Prometheus rule file). */
export function shippedRuleGroups(): RuleGroup[] {
  const doc = parse(readFileSync(PROMETHEUS_RULE, 'utf8')) as { spec: { groups: RuleGroup[] } };
  return doc.spec.groups;
}

/** Writes `groups` as the rule file Prometheus and promtool read; returns its path. */
export function writeRuleFile(dir: string, groups: RuleGroup[], name = 'rules.yaml'): string {
  const file = join(dir, name);
  writeFileSync(file, stringify({ groups }));
  return file;
}

export interface ScrapeTarget {
  job: string;
  /** host:port of the target's /metrics. */
  address: string;
  scheme?: 'http' | 'https';
  /** For an https target (the API server): client certificate and CA. */
  tls?: { caFile: string; certFile: string; keyFile: string };
  /** Scrape interval of this target (default: the global one); a large /metrics needs longer. */
  interval?: string;
}

export interface PromSample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface PromAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing' | 'inactive';
}

export interface PrometheusHandle {
  url: string;
  /** Instant query; throws with Prometheus's error (a parse error, an unknown function). */
  query(expr: string): Promise<PromSample[]>;
  /** Names of every metric Prometheus has ingested, and the label names of each. */
  seriesLabels(): Promise<Map<string, Set<string>>>;
  /** Names of every metric a target declared (# TYPE/# HELP), with or without samples yet. */
  metadataNames(): Promise<Set<string>>;
  /** Active alerts (pending or firing). */
  alerts(): Promise<PromAlert[]>;
  /** Waits until every target's last scrape succeeded. */
  waitForTargets(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export async function startPrometheus(opts: {
  dir: string;
  targets: ScrapeTarget[];
  ruleFile?: string;
  /** Scrape and rule-evaluation interval; default 1s (a test waits seconds, not minutes). */
  interval?: string;
  readyTimeoutMs?: number;
}): Promise<PrometheusHandle> {
  const { prometheus } = prometheusTools();
  const interval = opts.interval ?? '1s';
  mkdirSync(join(opts.dir, 'data'), { recursive: true });
  const config = {
    global: { scrape_interval: interval, evaluation_interval: interval, scrape_timeout: interval },
    ...(opts.ruleFile ? { rule_files: [opts.ruleFile] } : {}),
    scrape_configs: opts.targets.map((t, i) => ({
      job_name: `${t.job}-${i}`,
      scheme: t.scheme ?? 'http',
      ...(t.interval ? { scrape_interval: t.interval, scrape_timeout: t.interval } : {}),
      ...(t.tls
        ? { tls_config: { ca_file: t.tls.caFile, cert_file: t.tls.certFile, key_file: t.tls.keyFile } }
        : {}),
      // The job label as the PodMonitor sets it; job_name only keeps the configs apart.
      static_configs: [{ targets: [t.address], labels: { job: t.job } }],
      relabel_configs: [{ target_label: 'job', replacement: t.job }],
    })),
  };
  const configFile = join(opts.dir, 'prometheus.yml');
  writeFileSync(configFile, stringify(config));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    prometheus,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(opts.dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--storage.tsdb.retention.time=1h',
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // Never outlives the test run, even when a test forgets stop().
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.off('exit', killOnExit);
    await stopChild(child, exited, 'SIGTERM', 10_000).catch(() => undefined);
  };
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-8192);
  });

  const api = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(10_000) });
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error ?? res.status}`);
    return body.data;
  };

  const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}): ${stderr}`);
    try {
      const r = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(2_000) });
      if (r.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus not ready at ${url} within the timeout: ${stderr}`);
    }
    await sleep(200);
  }

  return {
    url,
    async query(expr) {
      const data = await api<{ resultType: string; result: PromSample[] }>(
        `/api/v1/query?query=${encodeURIComponent(expr)}`,
      );
      return data.resultType === 'vector' ? data.result : [];
    },
    async seriesLabels() {
      const series = await api<Record<string, string>[]>(
        `/api/v1/series?${new URLSearchParams({ 'match[]': '{__name__=~".+"}' }).toString()}`,
      );
      const out = new Map<string, Set<string>>();
      for (const s of series) {
        const name = s.__name__ ?? '';
        const labels = out.get(name) ?? new Set<string>();
        for (const l of Object.keys(s)) if (l !== '__name__') labels.add(l);
        out.set(name, labels);
      }
      return out;
    },
    async metadataNames() {
      return new Set(Object.keys(await api<Record<string, unknown>>('/api/v1/metadata')));
    },
    async alerts() {
      return (await api<{ alerts: PromAlert[] }>('/api/v1/alerts')).alerts;
    },
    async waitForTargets(timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const { activeTargets } = await api<{
          activeTargets: { labels: Record<string, string>; health: string; lastError: string }[];
        }>('/api/v1/targets?state=active');
        const bad = activeTargets.filter((t) => t.health !== 'up');
        if (activeTargets.length === opts.targets.length && bad.length === 0) return;
        if (Date.now() > until) {
          const why = bad.map((t) => `${t.labels.job}: ${t.health} ${t.lastError}`).join('; ');
          throw new Error(`prometheus targets not all up (${activeTargets.length} active): ${why}`);
        }
        await sleep(500);
      }
    },
    stop,
  };
}

const PROMQL_KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const PROMQL_OPERATORS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/**
 * The metric names and label names a PromQL expression reads: selectors' names and matchers, and the
 * labels of by/without/on/ignoring/group_* lists. Strings, ranges and function names are skipped.
 */
export function promqlNames(expr: string): { metrics: Set<string>; labels: Set<string> } {
  const labels = new Set<string>();
  const metrics = new Set<string>();
  let s = expr
    .replace(/#[^\n]*/g, ' ')
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\[[^\]]*\]/g, ' ');
  s = s.replace(/\{([^}]*)\}/g, (_, body: string) => {
    for (const m of body.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)) labels.add(m[1]!);
    return ' ';
  });
  s = s.replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, (_, body: string) => {
    for (const l of body.split(',')) if (l.trim()) labels.add(l.trim());
    return ' ';
  });
  for (const m of s.matchAll(/(?<![\w:.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    const name = m[1]!;
    if (m[2] || PROMQL_KEYWORDS.has(name) || PROMQL_OPERATORS.has(name.toLowerCase())) continue;
    metrics.add(name);
  }
  return { metrics, labels };
}
