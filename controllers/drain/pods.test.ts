import { describe, expect, it } from '@jest/globals';
import { rfc3339 } from '../../contract/time.js';
import {
  DISRUPTED_POD_EXPIRY_MS,
  STALE_DISRUPTION_MS,
  staleDisruptions,
  staleNote,
  coveringBudgets,
} from './pods.js';
import type { Pdb, Pod } from './workload-types.js';

const NOW = Date.parse('2026-08-21T22:00:00Z');

const pod = (name: string, over: Partial<Pod['metadata']> = {}): Pod => ({
  metadata: { name, namespace: 'shop', labels: { app: 'web' }, ...over },
  spec: { nodeName: 'n1' },
  status: { phase: 'Running' },
});

const pdb = (disruptedPods: Record<string, number>): Pdb => ({
  metadata: { name: 'web', namespace: 'shop' },
  spec: { selector: { matchLabels: { app: 'web' } } },
  status: {
    disruptionsAllowed: 0,
    disruptedPods: Object.fromEntries(Object.entries(disruptedPods).map(([k, v]) => [k, rfc3339(v)])),
  },
});

describe('staleDisruptions', () => {
  it('names an entry whose pod is still running on the Node, once it is older than the grace', () => {
    const since = NOW - STALE_DISRUPTION_MS;
    expect(staleDisruptions(pdb({ 'web-a': since }), [pod('web-a'), pod('web-b')], NOW)).toEqual([
      { budget: 'shop/web', pod: 'shop/web-a', since },
    ]);
  });

  it('leaves an eviction still in flight, a pod already terminating, and pods it cannot see', () => {
    const old = NOW - 60_000;
    const terminating = pod('web-b', { deletionTimestamp: rfc3339(NOW - 1000) });
    const budget = pdb({ 'web-a': NOW - STALE_DISRUPTION_MS + 1000, 'web-b': old, elsewhere: old });
    expect(staleDisruptions(budget, [pod('web-a'), terminating], NOW)).toEqual([]);
  });

  it('matches pods by namespace as well as name', () => {
    expect(
      staleDisruptions(pdb({ 'web-a': NOW - 60_000 }), [pod('web-a', { namespace: 'other' })], NOW),
    ).toEqual([]);
  });

  it('says which budget and pod, since when, and when the disruption controller drops the entry', () => {
    const since = NOW - 30_000;
    const note = staleNote({ budget: 'shop/web', pod: 'shop/web-a', since });
    expect(note).toContain('PodDisruptionBudget shop/web counts pod shop/web-a as disrupted');
    expect(note).toContain('status.disruptedPods');
    expect(note).toContain(`since ${rfc3339(since)}`);
    expect(note).toContain(`at ${rfc3339(since + DISRUPTED_POD_EXPIRY_MS)}`);
  });
});

describe('coveringBudgets', () => {
  it('is the budgets of the pod namespace whose selector matches its labels', () => {
    const other: Pdb = {
      ...pdb({}),
      metadata: { name: 'db', namespace: 'shop' },
      spec: { selector: { matchLabels: { app: 'db' } } },
    };
    const elsewhere: Pdb = { ...pdb({}), metadata: { name: 'web', namespace: 'other' } };
    expect(coveringBudgets(pod('web-a'), [other, pdb({}), elsewhere]).map((b) => b.metadata.name)).toEqual([
      'web',
    ]);
  });
});
