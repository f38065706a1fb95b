import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { BudgetMetrics } from './metrics.js';
import type { ComputedStatus } from './decide.js';

const status: ComputedStatus = {
  expected: 4,
  unavailable: 1,
  disruptionsAllowed: 0,
  domains: [],
  conditions: [],
};

async function ttlSamples(registry: Registry) {
  const metric = registry.getSingleMetric('metal_budget_grant_ttl_remaining_seconds');
  return (await metric!.get()).values.map((v) => ({ budget: v.labels.budget, value: v.value }));
}

describe('metal_budget_grant_ttl_remaining_seconds', () => {
  it('counts down at each scrape between reconciles, and goes when no grant waits', async () => {
    const registry = new Registry();
    const m = new BudgetMetrics(registry);
    m.observe('ServerDisruptionBudget', '', 'rack-a', status, 1, Date.now() + 60_000);
    const [first] = await ttlSamples(registry);
    expect(first!.budget).toBe('rack-a');
    expect(first!.value).toBeGreaterThan(58);
    expect(first!.value).toBeLessThanOrEqual(60);
    m.observe('ServerDisruptionBudget', '', 'rack-a', status, 1, Date.now() - 1000);
    expect(await ttlSamples(registry)).toEqual([{ budget: 'rack-a', value: 0 }]);
    m.observe('ServerDisruptionBudget', '', 'rack-a', status, 1, undefined);
    expect(await ttlSamples(registry)).toEqual([]);
    m.observe('ServerDisruptionBudget', '', 'rack-b', status, 1, Date.now() + 5000);
    m.forget('ServerDisruptionBudget', '', 'rack-b');
    expect(await ttlSamples(registry)).toEqual([]);
  });
});
