import { Histogram, Registry } from 'prom-client';
import { APISERVER_BUCKETS, countEntries, createMetrics } from './metrics.js';

const lines = (text: string, prefix: string) => text.split('\n').filter((l) => l.startsWith(prefix));

describe('route metrics', () => {
  it('read the same as prom-client series fed one call per review', async () => {
    const registry = new Registry();
    const metrics = createMetrics(registry);
    const placement = metrics.route('validate', 'placement');
    const eviction = metrics.route('validate', 'eviction');

    const reference = new Registry();
    const histogram = new Histogram({
      name: 'metal_webhook_admission_duration_seconds',
      help: 'Time to answer one AdmissionReview, by review type and rule.',
      labelNames: ['type', 'rule'],
      buckets: APISERVER_BUCKETS,
      registers: [reference],
    });
    const observations: [typeof placement, string, number][] = [
      [placement, 'placement', 0.001],
      [placement, 'placement', 0.005],
      [placement, 'placement', 0.03],
      [eviction, 'eviction', 30],
      [eviction, 'eviction', 0.2],
    ];
    for (const [route, rule, seconds] of observations) {
      route.decided('allowed', 'METAL_OK', seconds);
      histogram.observe({ type: 'validate', rule }, seconds);
    }
    const ours = await registry.metrics();
    const theirs = await reference.metrics();
    const prefix = 'metal_webhook_admission_duration_seconds';
    // prom-client lists series in first-observed order, ours in route order: compare as sets.
    expect(lines(ours, prefix).sort()).toEqual(lines(theirs, prefix).sort());
    expect(ours).toContain(`# TYPE ${prefix} histogram`);
  });

  it('hands decisions and grants to the counters when read, once', async () => {
    const registry = new Registry();
    const metrics = createMetrics(registry);
    const route = metrics.route('validate', 'eviction');
    route.decided('allowed', 'METAL_OK', 0.001);
    route.decided('denied', 'METAL_ERR_BUDGET_EXHAUSTED', 0.001);
    route.decided('denied', 'METAL_ERR_BUDGET_EXHAUSTED', 0.001);
    route.granted(true, true);
    route.granted(false, false);
    await registry.metrics();
    route.decided('denied', 'METAL_ERR_BUDGET_EXHAUSTED', 0.001);
    const text = await registry.metrics();
    expect(lines(text, 'metal_webhook_decisions_total{')).toEqual([
      'metal_webhook_decisions_total{type="validate",rule="eviction",result="allowed",code="METAL_OK"} 1',
      'metal_webhook_decisions_total{type="validate",rule="eviction",result="denied",code="METAL_ERR_BUDGET_EXHAUSTED"} 3',
    ]);
    expect(lines(text, 'metal_webhook_grants_total{').sort()).toEqual([
      'metal_webhook_grants_total{result="denied",dry_run="false"} 1',
      'metal_webhook_grants_total{result="granted",dry_run="true"} 1',
    ]);
    expect((await metrics.decisions.get()).values.map((v) => v.value)).toEqual([1, 3]);
  });
});

describe('ledger entry metrics', () => {
  it('count entries written by admitted reviews and undone by refused ones, by budget', async () => {
    const registry = new Registry();
    const metrics = createMetrics(registry);
    const fleet = { kind: 'ServerDisruptionBudget' as const, name: 'fleet' };
    const tenant = { kind: 'ServerClaimDisruptionBudget' as const, namespace: 't1', name: 'pct' };
    const stats = { attempts: 1, conflicts: 0, retries: 0 };
    countEntries(metrics, {
      granted: true,
      dryRun: false,
      written: [fleet, tenant],
      alreadyHeld: [],
      ...stats,
    });
    countEntries(metrics, { granted: true, dryRun: false, written: [], alreadyHeld: [fleet], ...stats });
    countEntries(metrics, {
      granted: false,
      dryRun: false,
      denial: { code: 'METAL_ERR_BUDGET_EXHAUSTED', message: 'full', retryAfterSeconds: 30 },
      released: [fleet],
      releaseFailed: [],
      ...stats,
    });
    expect(lines(await registry.metrics(), 'metal_webhook_grant_entries_total{').sort()).toEqual([
      'metal_webhook_grant_entries_total{kind="ServerClaimDisruptionBudget",namespace="t1",budget="pct",change="written"} 1',
      'metal_webhook_grant_entries_total{kind="ServerDisruptionBudget",namespace="",budget="fleet",change="undone"} 1',
      'metal_webhook_grant_entries_total{kind="ServerDisruptionBudget",namespace="",budget="fleet",change="written"} 1',
    ]);
  });
});
