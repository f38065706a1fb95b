// The monitoring an operator installs, against the running system: a real Prometheus (Debian's)
// scrapes every binary (the webhook; the maintenance, approval, budget, boot, firmware and drain
// controllers, each started from the run's image files as its Deployment starts it) and the API server, with the job labels the shipped PodMonitor gives them, and
// evaluates the shipped PrometheusRule. Alerts are seen firing for a stalled maintenance (budget
// exhausted while it waits), a stopped controller and a dead webhook; then every query of the
// shipped dashboard and every alert expression runs on the real Prometheus and must name only
// metrics and labels that the binaries export.
//
// The one change to the shipped rules: every `for:` is cut to 1s, so an alert fires in seconds
// rather than after its production hold time (promtool test rules checks those).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../../../api/schema/meta.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, readControlPlane } from '../../../e2e/harness/control-plane.js';
import { waitFor } from '../../../e2e/harness/env.js';
import { kubeconfigForBinary, type RunningBinary } from '../../../e2e/harness/processes.js';
import { spawnShipped } from '../../../e2e/harness/deployed.js';
import { SETUP_TIMEOUT_MS } from '../../../e2e/harness/dist.js';
import {
  promqlNames,
  shippedRuleGroups,
  startPrometheus,
  writeRuleFile,
  type PrometheusHandle,
  type ScrapeTarget,
} from '../../../e2e/harness/prometheus.js';
import {
  CONTROLLERS,
  HOLD_FOREVER,
  ServerClaimDisruptionBudgetResource,
  caseBudget,
  conditionOf,
  startLifecycle,
  waitForMaintenance,
  waitForState,
  type Lifecycle,
} from './harness.js';

const DASHBOARD = join(REPO_ROOT, 'manifests', 'monitoring', 'dashboard.json');

interface Panel {
  title: string;
  targets?: { expr: string }[];
  panels?: Panel[];
}

function dashboardQueries(): { where: string; expr: string }[] {
  const doc = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] };
  const all = doc.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
  return all.flatMap((p) =>
    (p.targets ?? []).map((t) => ({
      where: `dashboard panel "${p.title}"`,
      // Grafana's range variable, as Grafana would substitute it for this scrape interval.
      expr: t.expr.replaceAll('$__rate_interval', '1m'),
    })),
  );
}

async function opsPort(bin: RunningBinary): Promise<number> {
  const line = await bin.waitForLog(
    (l) => typeof l.port === 'number' && String(l.msg).startsWith('ops server'),
  );
  return Number(line.port);
}

let lc: Lifecycle;
let boot: RunningBinary | undefined;
let firmware: RunningBinary | undefined;
let prom: PrometheusHandle | undefined;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'metal-monitoring-'));
  lc = await startLifecycle({ actorHoldMs: 800, extra: ['drain-controller'] });
  const { kubeconfig } = await kubeconfigForBinary(lc.admin, 'boot-controller');
  boot = spawnShipped('boot-controller', [
    `--kubeconfig=${kubeconfig}`,
    '--ops-host=127.0.0.1',
    '--ops-port=0',
    '--lease-duration=4',
    '--renew-deadline=3',
    '--retry-period=1',
  ]);
  const fw = await kubeconfigForBinary(lc.admin, 'firmware-controller');
  firmware = spawnShipped('firmware-controller', [
    `--kubeconfig=${fw.kubeconfig}`,
    '--ops-host=127.0.0.1',
    '--ops-port=0',
    '--lease-duration=4',
    '--renew-deadline=3',
    '--retry-period=1',
  ]);
  const cp = readControlPlane(process.env.METAL_TEST_CP_DIR ?? '');
  const pki = join(cp.dir, 'pki');
  const targets: ScrapeTarget[] = [
    ...lc.webhook.replicas.map((r) => ({
      job: 'metal-maintenance-webhook',
      address: `127.0.0.1:${r.opsPort}`,
    })),
    ...(await Promise.all(
      [...CONTROLLERS, 'drain-controller' as const].map(async (c) => ({
        job: `metal-maintenance-${c}`,
        address: `127.0.0.1:${await opsPort(lc.controllers[c])}`,
      })),
    )),
    { job: 'metal-maintenance-boot-controller', address: `127.0.0.1:${await opsPort(boot)}` },
    { job: 'metal-maintenance-firmware-controller', address: `127.0.0.1:${await opsPort(firmware)}` },
    {
      job: 'apiserver',
      address: `127.0.0.1:${cp.apiserverPort}`,
      scheme: 'https',
      // Its /metrics is a few MB: more than a 1 s scrape allows on a busy machine.
      interval: '5s',
      tls: { caFile: join(pki, 'ca.crt'), certFile: join(pki, 'admin.crt'), keyFile: join(pki, 'admin.key') },
    },
  ];
  const groups = shippedRuleGroups().map((g) => ({
    ...g,
    rules: g.rules.map((r) => (r.for ? { ...r, for: '1s' } : r)),
  }));
  prom = await startPrometheus({ dir, targets, ruleFile: writeRuleFile(dir, groups) });
  await prom.waitForTargets(60_000);
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await prom?.stop();
  await boot?.stop('SIGTERM', 10_000);
  await firmware?.stop('SIGTERM', 10_000);
  await lc?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 90_000);

async function firing(alertname: string, labels: Record<string, string> = {}, timeoutMs = 60_000) {
  return waitFor(
    `alert ${alertname} ${JSON.stringify(labels)} firing`,
    async () =>
      (await prom!.alerts()).find(
        (a) =>
          a.state === 'firing' &&
          a.labels.alertname === alertname &&
          Object.entries(labels).every(([k, v]) => a.labels[k] === v),
      ),
    { timeoutMs, intervalMs: 500 },
  );
}

describe('monitoring against the running system', () => {
  it('scrapes every binary with the job labels the PodMonitor sets', async () => {
    const expected = [
      'apiserver',
      'metal-maintenance-approval-controller',
      'metal-maintenance-boot-controller',
      'metal-maintenance-budget-controller',
      'metal-maintenance-drain-controller',
      'metal-maintenance-firmware-controller',
      'metal-maintenance-maintenance-controller',
      'metal-maintenance-webhook',
    ];
    // Each target's first scrape lands within one interval of the others: wait for all, then compare.
    const jobs = await waitFor(
      'every binary scraped and up',
      async () => {
        const up = await prom!.query('up');
        const seen = new Set(up.filter((s) => s.value[1] === '1').map((s) => s.metric.job));
        return expected.every((j) => seen.has(j)) && seen;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    expect([...jobs].sort()).toEqual(expected);
    // No alert is firing on the healthy system.
    expect((await prom!.alerts()).filter((a) => a.state === 'firing').map((a) => a.labels.alertname)).toEqual(
      [],
    );
  });

  it('fires MetalBudgetExhausted while a maintenance stalls waiting for budget room', async () => {
    const f = await lc.fleet('mon', { servers: 2, claims: 'no-consumer' });
    const budget = await caseBudget(lc, f, 1);
    await lc.maintenance('mon-holder', f.servers[0]!, {}, HOLD_FOREVER);
    await waitForState(lc, 'mon-holder', 'InMaintenance');
    // The tenant's own budget too: the namespaced kind, so its series carry the namespace label.
    const scdbs = lc.admin.resource<KubeObject & { status?: { observedGeneration?: number } }>(
      ServerClaimDisruptionBudgetResource,
    );
    await scdbs.create({
      metadata: { name: 'mon-tenant', namespace: f.tenant },
      spec: { claimSelector: {}, maxUnavailable: '50%' },
    } as KubeObject);
    await waitFor(
      'the tenant budget observed',
      async () =>
        ((await scdbs.get('mon-tenant', f.tenant)).status?.observedGeneration ?? 0) >= 1 || undefined,
      { timeoutMs: 20_000 },
    );
    await lc.maintenance('mon-stalled', f.servers[1]!, {}, HOLD_FOREVER);
    await waitForMaintenance(
      lc,
      'mon-stalled',
      'BudgetExhausted',
      (m) => conditionOf(m, 'Admitted')?.reason === 'BudgetExhausted',
    );
    const alert = await firing('MetalBudgetExhausted', { budget: budget.metadata.name! });
    expect(alert.labels).toMatchObject({ kind: 'ServerDisruptionBudget', severity: 'warning' });
    expect(alert.annotations.runbook).toBe('docs/operations.md#metalbudgetexhausted');
  }, 120_000);

  it('fires MetalControllerDown when a controller stops', async () => {
    await lc.kill('approval-controller', 'SIGTERM');
    const alert = await firing('MetalControllerDown', { job: 'metal-maintenance-approval-controller' });
    expect(alert.labels.severity).toBe('critical');
    await lc.start('approval-controller');
  }, 90_000);

  it('fires MetalWebhookDown and MetalWebhookUnreachable when the webhook dies under guarded writes', async () => {
    for (const r of lc.webhook.replicas) await lc.webhook.kill(r.index);
    // Guarded writes (the mutating entry for spec.policy, failurePolicy Fail) the API server cannot
    // deliver: each is refused. They go on while we wait, as a tenant's would: a counter's first
    // sample shows no increase, the rate needs two scrapes that differ.
    const refusedWrite = (i: number) =>
      lc.maintenances.create(
        {
          metadata: { name: `mon-refused-${i}`, namespace: lc.ns },
          spec: { serverRef: { name: 'mon-refused' }, policy: 'Enforced' },
        },
        { dryRun: true },
      );
    await expect(refusedWrite(0)).rejects.toThrow(/failed calling webhook/);
    await firing('MetalWebhookDown', { job: 'metal-maintenance-webhook' });
    let writes = 1;
    const alert = await waitFor(
      'alert MetalWebhookUnreachable firing',
      async () => {
        await refusedWrite(writes++).catch(() => undefined);
        return (await prom!.alerts()).find(
          (a) => a.state === 'firing' && a.labels.alertname === 'MetalWebhookUnreachable',
        );
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    // The API server's count of calls it could not make names the entry.
    expect(alert.labels.name).toBe('maintenances.mutate.maintenance.metal.ironcore.dev');
  }, 90_000);

  it('runs every dashboard query and alert expression, naming only exported metrics and labels', async () => {
    const queries = [
      ...dashboardQueries(),
      ...shippedRuleGroups().flatMap((g) =>
        g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })),
      ),
    ];
    expect(queries.length).toBeGreaterThan(20);
    const series = await prom!.seriesLabels();
    const declared = await prom!.metadataNames();
    const prefixOf = (m: string) => m.split('_').slice(0, 2).join('_');
    const siblings = (m: string) =>
      m.startsWith('metal_') ? [...series.keys()].filter((n) => prefixOf(n) === prefixOf(m)) : [];
    const problems: string[] = [];
    const unobserved = new Set<string>();
    for (const { where, expr } of queries) {
      try {
        await prom!.query(expr);
      } catch (e) {
        problems.push(`${where}: ${(e as Error).message}`);
        continue;
      }
      const { metrics, labels } = promqlNames(expr);
      const known = new Set(['job', 'instance']);
      for (const m of metrics) {
        const labelsOfM = series.get(m);
        const family = m.replace(/_(bucket|sum|count)$/, '');
        // A label left empty on every series here (namespace of a cluster-scoped budget) is
        // dropped by Prometheus: accept it when a sibling metric (same metal_<area>_ prefix) has it.
        for (const sib of siblings(m)) for (const l of series.get(sib) ?? []) known.add(l);
        if (labelsOfM) for (const l of labelsOfM) known.add(l);
        else if (declared.has(m) || declared.has(family)) unobserved.add(m);
        else problems.push(`${where}: metric ${m} is exported by no binary`);
      }
      // Labels are checked against the series seen; a metric declared but not yet observed (a
      // counter of failures that did not happen here) cannot show its labels.
      const allObserved = [...metrics].every((m) => series.has(m));
      for (const l of labels)
        if (!known.has(l) && allObserved)
          problems.push(`${where}: label ${l} is on none of ${[...metrics].join(', ')}`);
    }
    expect(problems).toEqual([]);
    // What this run did not exercise, so a reader knows which labels went unchecked.
    if (unobserved.size > 0)
      console.log(`declared but not observed in this run: ${[...unobserved].sort().join(', ')}`);
  }, 60_000);
});
