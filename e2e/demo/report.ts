// What the demo shows: the live frame (racks, the scenario table, budget use, rollout progress) and
// the summary at the end, both read from the demo's progress and the cluster as its watch sees it,
// and the binaries' last log lines when an act fails.
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { Painter } from '../../cli/output.js';
import type { FleetPlan } from '../sim/fleet/fleet.js';
import { allowedOf, type FleetWatch } from './watch.js';
import { ACTS } from './config.js';
import { LEGEND, clock, columns, progressBar, renderRacks } from './screen.js';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Taints our controllers put on servers carry keys in this group; an admin's never do. */
const OUR_TAINT_PREFIX = 'maintenance.metal.ironcore.dev/';

export interface ScenarioRow {
  key: string;
  label: string;
  expect: string;
  says: string;
}

/** The demo's own progress: written by its acts, read by the frame and the summary. */
export interface DemoProgress {
  readonly started: number;
  act: number;
  title: string;
  readonly rows: ScenarioRow[];
  readonly rollout: string[];
  rolloutStart: number;
  rolloutEnd: number;
  readonly problems: string[];
  /** The current act's own lines in the live frame (acts 6 and 7: the Set's, the runs'). */
  status: string[];
  /** Rows an act adds to the summary: [label, text]. */
  readonly outcomes: [string, string][];
}

export function newProgress(): DemoProgress {
  return {
    started: Date.now(),
    act: 0,
    title: 'starting',
    rows: [],
    rollout: [],
    rolloutStart: 0,
    rolloutEnd: 0,
    problems: [],
    status: [],
    outcomes: [],
  };
}

/** What the report reads besides the progress. */
export interface ReportContext {
  painter: Painter;
  isTTY: boolean;
  watch: FleetWatch | undefined;
  plan: FleetPlan | undefined;
  racks: number;
  /** Every controller of the demo is running (only then is state left behind a problem). */
  complete: boolean;
  /** The simulated metal-operator's binding writes the webhook refused, by code. */
  denials: Record<string, number>;
  /** Figures queried from the demo's Prometheus at the end (e2e/demo/prometheus.ts). */
  prometheus?: string[];
}

/** Why the maintenance controller's last attempt to start a maintenance was refused ('' if it was not). */
function blockedReason(m: ServerMaintenance | undefined): string {
  const admitted = m?.status?.conditions?.find((c) => c.type === 'Admitted');
  return admitted && admitted.status === 'False' ? admitted.reason : '';
}

// --- the live frame ------------------------------------------------------------------------------

export function liveFrame(s: DemoProgress, c: ReportContext): string[] {
  const p = c.painter;
  const w = c.watch;
  const head = `${p.bold('metal-maintenance demo')}  ${clock(Date.now() - s.started)}  ${p.cyan(`act ${s.act}/${ACTS}`)} ${s.title}`;
  if (!w) return [head];
  const servers = w.servers.list();
  const maintenances = w.maintenances.list();
  const lines = [head, ...renderRacks(servers, maintenances, c.isTTY), p.dim(LEGEND)];
  if (s.rows.length) lines.push('', ...scenarioTable(s, w, p));
  lines.push('', budgetLine(servers, maintenances, w, p));
  if (s.rollout.length) lines.push(rolloutLine(s, w, p));
  if (s.status.length) lines.push('', ...s.status);
  return lines;
}

function scenarioTable(s: DemoProgress, w: FleetWatch, p: Painter): string[] {
  const rows = s.rows.map((r) => scenarioCells(r, w));
  const head = ['MAINTENANCE', 'CLAIM', 'THE TENANT', 'STATE', 'APPROVED BY', 'WAITING ON'];
  return columns([head, ...rows], [22, 24, 22, 13, 12, 18]).map((l, i) => (i === 0 ? p.dim(l) : l));
}

function scenarioCells(r: ScenarioRow, w: FleetWatch): string[] {
  const rec = w.records.get(r.key);
  const m = w.maintenances.get(r.key);
  const state = rec?.deletedAt
    ? 'done'
    : m?.metadata.deletionTimestamp
      ? 'finishing'
      : (m?.status?.state ?? 'Pending');
  const waiting = state === 'done' ? '' : blockedReason(m);
  return [r.label, rec?.claim ?? '-', r.says, state, rec?.approvalSource ?? '-', waiting];
}

function budgetLine(servers: Server[], maintenances: ServerMaintenance[], w: FleetWatch, p: Painter): string {
  const byName = new Map(servers.map((s) => [s.metadata.name, s]));
  const held = maintenances
    .filter((m) => m.status?.state === 'InMaintenance')
    .map((m) => byName.get(m.spec.serverRef.name));
  const parts: string[] = [];
  for (const b of w.serverBudgets?.list() ?? []) {
    const key = b.spec.topologyKey;
    const domains = key ? [...new Set(servers.map((s) => s.metadata.labels?.[key] ?? ''))].sort() : [''];
    for (const d of domains) {
      const inDomain = (s: Server | undefined) => !!s && (!key || s.metadata.labels?.[key] === d);
      const expected = servers.filter(inDomain).length;
      const n = held.filter(inDomain).length;
      if (key && n === 0) continue;
      parts.push(`${key ? d : b.metadata.name} ${n}/${allowedOf(b.spec.maxUnavailable, expected)}`);
    }
  }
  return `${p.dim('in maintenance / budget:')} ${parts.join('  ') || '-'}`;
}

function rolloutLine(s: DemoProgress, w: FleetWatch, p: Painter): string {
  const done = s.rollout.filter((k) => w.records.get(k)?.deletedAt).length;
  const now = s.rollout.filter((k) => w.maintenances.get(k)?.status?.state === 'InMaintenance').length;
  return `${p.dim('rollout')} ${progressBar(done, s.rollout.length)}  ${now} in maintenance, peak ${w.checker.peak}`;
}

// --- the end -------------------------------------------------------------------------------------

/** The summary's lines; a problem it finds (a budget exceeded, state left behind) joins s.problems. */
export function summaryLines(s: DemoProgress, c: ReportContext): string[] {
  const p = c.painter;
  const out = ['', p.bold(`Summary (${clock(Date.now() - s.started)})`)];
  const row = (k: string, v: string) => out.push(`  ${k.padEnd(12)} ${v}`);
  if (c.watch) {
    summaryActs(s, c, c.watch, row);
    summaryChecks(s, c, c.watch, row);
  }
  (c.prometheus ?? []).forEach((l, i) => row(i === 0 ? 'prometheus' : '', l));
  for (const x of s.problems) out.push(p.red(`  problem: ${x}`));
  out.push(
    s.problems.length
      ? p.red('The demo did not complete cleanly.')
      : p.green('Everything held. Stopping what the demo started.'),
  );
  return out;
}

type Row = (k: string, v: string) => void;

function summaryActs(s: DemoProgress, c: ReportContext, w: FleetWatch, row: Row): void {
  const bound = w.claims?.list().filter((cl) => cl.status?.phase === 'Bound').length ?? 0;
  if (c.plan)
    row(
      'fleet',
      `${c.plan.servers.length} servers in ${c.racks} racks, ${c.plan.namespaces.length} tenants, ${bound} claims bound`,
    );
  for (const r of s.rows) {
    const rec = w.records.get(r.key);
    const took = rec?.inMaintenanceAt
      ? `started ${((rec.inMaintenanceAt - rec.createdAt) / 1000).toFixed(1)} s after creation`
      : 'never started';
    row(
      'approval',
      `${r.label.padEnd(22)} tenant ${r.says.padEnd(22)} → ${rec?.approvalSource ?? 'none'} (${took})`,
    );
  }
  summaryRollout(s, w, row);
  for (const [k, v] of s.outcomes) row(k, v);
}

function summaryRollout(s: DemoProgress, w: FleetWatch, row: Row): void {
  if (!s.rollout.length) return;
  const waits = s.rollout.filter((k) => w.records.get(k)?.waitedFor.has('BudgetExhausted')).length;
  const secs = (((s.rolloutEnd || Date.now()) - s.rolloutStart) / 1000).toFixed(0);
  const done = s.rollout.filter((k) => w.records.get(k)?.deletedAt).length;
  row(
    'rollout',
    s.rolloutEnd
      ? `${s.rollout.length} servers in ${secs} s; ${waits} waited for budget room (BudgetExhausted)`
      : `not finished: ${done} of ${s.rollout.length} servers done after ${secs} s; ${waits} waited for budget room`,
  );
}

function summaryChecks(s: DemoProgress, c: ReportContext, w: FleetWatch, row: Row): void {
  const peaks = w.checker.budgetPeaks();
  if (peaks.length)
    row(
      'budgets',
      `peak in maintenance at once / allowed: ${peaks.map((b) => `${b.domain || b.budget} ${b.peak}/${b.allowed}`).join('  ')}`,
    );
  const violations = w.checker.violations();
  if (violations.length) {
    // Outside the demo's directory (scripts/demo.sh points this at the caller's TMPDIR): it stays.
    const file = join(process.env.METAL_DEMO_TRACE_DIR ?? tmpdir(), `metal-demo-trace-${Date.now()}.jsonl`);
    writeFileSync(file, (w.trace ?? []).map((x) => JSON.stringify(x)).join('\n'));
    s.problems.push(`a budget was exceeded; the watch trace is in ${file}`);
    row(
      'invariants',
      c.painter.red(
        `EXCEEDED: ${violations.map((v) => `${v.budget}/${v.domain} ${v.peak}>${v.allowed}`).join(', ')}`,
      ),
    );
  } else {
    row('invariants', `never more in maintenance than a budget allows (peak ${w.checker.peak} overall)`);
  }
  const servers = w.servers.list();
  const tainted = servers.filter((sv) =>
    sv.spec.taints?.some((t) => t.key.startsWith(OUR_TAINT_PREFIX)),
  ).length;
  const parked = servers.filter((sv) => sv.status?.state === 'Parked').length;
  const held = w.maintenances.list().length;
  row('left over', `${held} maintenances, ${tainted} maintenance taints, ${parked} parked servers`);
  if (c.complete && tainted + parked + held > 0) s.problems.push('maintenance state left behind');
  const denials = Object.entries(c.denials).map(([k, v]) => `${k} ×${v}`);
  row('placement', `the simulator's binding writes refused by the webhook: ${denials.join(', ') || 'none'}`);
}

/** Lines of the log files in `dir` whose binary is named in `text` (last `n` lines each). */
export function logTails(dir: string, text: string, n = 12): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.log') && text.includes(f.slice(0, -4)))
    .flatMap((f) => {
      const lines = readFileSync(join(dir, f), 'utf8').trimEnd().split('\n');
      return [`last lines of ${join(dir, f)}:`, ...lines.slice(-n).map((l) => `  ${l}`)];
    });
}
