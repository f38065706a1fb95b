// The demo's pure parts: the invariant checker it and the benchmark rely on, and the renderers.
import { describe, expect, it } from '@jest/globals';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import { PeakChecker, allowedOf } from './watch.js';
import { clock, columns, cut, glyphOf, maintenanceByServer, progressBar, renderRacks } from './screen.js';
import { manifestNodeFlags } from './stack.js';
import { figureLines } from './prometheus.js';

const RACK = 'metadata.metal.ironcore.dev/rack';

function server(
  name: string,
  rack: string,
  status: Server['status'] = { state: 'Reserved' },
  spec: Partial<Server['spec']> = {},
): Server {
  return {
    metadata: { name, labels: { [RACK]: rack, fleet: 'f' } },
    spec: { systemUUID: name, ...spec },
    status,
  };
}

function maintenance(name: string, srv: string, state?: string, deleting = false): ServerMaintenance {
  return {
    metadata: { name, namespace: 'ops', ...(deleting ? { deletionTimestamp: '2026-09-01T00:00:00Z' } : {}) },
    spec: { serverRef: { name: srv } },
    ...(state ? { status: { state } } : {}),
  };
}

describe('PeakChecker', () => {
  it('tracks how many maintenances are InMaintenance at once, and the peak', () => {
    const c = new PeakChecker();
    c.observe('a', 's1', 'InMaintenance');
    c.observe('b', 's2', 'InMaintenance');
    c.observe('a', 's1', 'Completed');
    c.observe('c', 's3', 'InMaintenance');
    c.observe('b', 's2', undefined);
    expect(c.current).toBe(1);
    expect(c.peak).toBe(2);
  });

  it('counts per budget domain and reports a domain that went over its limit', () => {
    const servers = new Map(['r1-1', 'r1-2', 'r1-3', 'r2-1'].map((n) => [n, server(n, n.slice(0, 2))]));
    const perRack: ServerDisruptionBudget = {
      metadata: { name: 'per-rack' },
      spec: { serverSelector: { matchLabels: { fleet: 'f' } }, maxUnavailable: 2, topologyKey: RACK },
    };
    const fleet: ServerDisruptionBudget = {
      metadata: { name: 'fleet' },
      spec: { serverSelector: {}, maxUnavailable: '50%' },
    };
    const c = new PeakChecker();
    const check = () =>
      c.checkBudgets(
        [perRack, fleet],
        (n) => servers.get(n),
        () => 4,
      );
    for (const n of ['r1-1', 'r1-2', 'r2-1']) {
      c.observe(n, n, 'InMaintenance');
      check();
    }
    expect(c.violations()).toEqual([{ budget: 'fleet', domain: '', allowed: 2, peak: 3 }]);
    c.observe('r1-3', 'r1-3', 'InMaintenance');
    check();
    expect(c.violations().map((v) => `${v.budget}/${v.domain}:${v.peak}>${v.allowed}`)).toEqual([
      'fleet/:4>2',
      'per-rack/r1:3>2',
    ]);
    expect(c.budgetPeaks().find((p) => p.domain === 'r2')).toEqual({
      budget: 'per-rack',
      domain: 'r2',
      allowed: 2,
      peak: 1,
    });
  });

  it('rounds percentages up like a PodDisruptionBudget', () => {
    expect(allowedOf('10%', 17)).toBe(2);
    expect(allowedOf('0%', 17)).toBe(0);
    expect(allowedOf(3, 17)).toBe(3);
  });
});

describe('screen', () => {
  it('shows the most important fact about each server', () => {
    expect(glyphOf(server('a', 'r1'), maintenance('m', 'a', 'InMaintenance')).symbol).toBe('M');
    expect(glyphOf(server('a', 'r1'), maintenance('m', 'a', 'InMaintenance', true)).symbol).toBe('◌');
    expect(glyphOf(server('a', 'r1'), maintenance('m', 'a', 'Announced')).symbol).toBe('A');
    expect(glyphOf(server('a', 'r1', { state: 'Available' }, { unclaimable: true }), undefined).symbol).toBe(
      '✕',
    );
    expect(glyphOf(server('a', 'r1', { state: 'Available' }), undefined).symbol).toBe('○');
    expect(glyphOf(server('a', 'r1', { state: 'Discovery' }), undefined).symbol).toBe('·');
  });

  it('picks the active maintenance of a server over queued ones', () => {
    const m = maintenanceByServer([
      maintenance('q', 's', 'Pending'),
      maintenance('a', 's', 'InMaintenance'),
      maintenance('b', 's', 'Announced'),
    ]);
    expect(m.get('s')?.metadata.name).toBe('a');
  });

  it('draws one line per rack, servers in name order', () => {
    const lines = renderRacks(
      [server('r2-1', 'rack-2'), server('r1-2', 'rack-1', { state: 'Available' }), server('r1-1', 'rack-1')],
      [maintenance('m', 'r2-1', 'InMaintenance')],
      false,
    );
    expect(lines).toEqual(['rack-1   ● ○', 'rack-2   M']);
  });

  it('formats progress, clocks, columns, and cuts coloured lines by what is visible', () => {
    expect(progressBar(5, 20, 8)).toBe('[██░░░░░░] 5/20');
    expect(clock(125_400)).toBe('02:05');
    expect(columns([['abcdef', 'x']], [4, 3])).toEqual(['abc… x']);
    expect(cut('\x1b[32mabcdef\x1b[39m', 3)).toBe('\x1b[32mabc\x1b[39m');
  });
});

describe('manifestNodeFlags', () => {
  it('reads the node flags a controller Deployment ships with', () => {
    for (const name of ['maintenance', 'approval', 'budget', 'boot'])
      expect(manifestNodeFlags(name)).toEqual(['--max-semi-space-size=2', '--optimize-for-size']);
  });
});

describe('the summary’s Prometheus figures', () => {
  const sample = (metric: Record<string, string>, v: number | string) => ({
    metric,
    value: [0, String(v)] as [number, string],
  });

  it('reads targets, decisions, grants and transitions from the query results, by label', () => {
    const lines = figureLines({
      up: [
        sample({ job: 'metal-maintenance-webhook' }, 1),
        sample({ job: 'metal-maintenance-budget-controller' }, 0),
      ],
      decisions: [
        sample({ result: 'denied' }, 41),
        sample({ result: 'allowed' }, 312),
        sample({ result: 'error' }, 0),
      ],
      grants: [sample({ result: 'granted' }, 12.0)],
      p99: [sample({}, 0.0123)],
      transitions: [],
      firing: ['MetalBudgetExhausted', 'MetalBudgetExhausted'],
    });
    expect(lines).toEqual([
      'scrape targets up: 1 of 2',
      'admission decisions: allowed 312, denied 41 (p99 12.3 ms)',
      'budget grants: granted 12',
      'InMaintenance transitions: none',
      'alerts firing: MetalBudgetExhausted',
    ]);
  });

  it('says n/a for a latency Prometheus cannot compute (no requests: NaN)', () => {
    const lines = figureLines({
      up: [],
      decisions: [],
      grants: [],
      p99: [sample({}, 'NaN')],
      transitions: [],
      firing: [],
    });
    expect(lines[1]).toBe('admission decisions: none (p99 n/a)');
    expect(lines[4]).toBe('alerts firing: none');
  });
});
