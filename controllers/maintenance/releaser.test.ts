// The batched ledger releaser against an in-memory budget with the API server's optimistic concurrency.
import { describe, expect, it } from '@jest/globals';
import type { AnyBudget, BudgetRef } from '../../contract/budgets.js';
import type { BudgetStore } from '../../contract/ledger/port.js';
import { KubeApiError } from '../../lib/kube/errors.js';
import { fresher } from '../../lib/kube/resources.js';
import { LedgerReleaser } from './releaser.js';

const REF: BudgetRef = { kind: 'ServerDisruptionBudget', name: 'fleet' };

interface Budget {
  metadata: { name: string; uid: string; resourceVersion: string };
  status: { grants: { maintenanceUID: string }[] };
}

const conflict = () =>
  new KubeApiError('PUT', '/status', 409, { reason: 'Conflict', message: 'the object has been modified' });

/** A budget behind a store that counts reads and writes; `stale` serves an old copy from the "cache". */
function budgetStore(uids: string[]) {
  let stored: Budget = {
    metadata: { name: 'fleet', uid: 'b1', resourceVersion: '1' },
    status: { grants: uids.map((maintenanceUID) => ({ maintenanceUID })) },
  };
  const log = { reads: 0, writes: 0, conflicts: 0 };
  let cache: Budget | undefined = structuredClone(stored);
  let before: (() => void) | undefined;
  let last: Budget | undefined;
  // The port's peek: the newer of the watch cache and our last write (as lib/kube/budget-store.ts does).
  const store: BudgetStore = {
    peek: () => fresher(cache, last) as AnyBudget | undefined,
    get: () => {
      log.reads++;
      return Promise.resolve(structuredClone(stored) as unknown as AnyBudget);
    },
    replaceStatus: async (_ref, budget) => {
      const b = budget as unknown as Budget;
      await Promise.resolve();
      before?.();
      if (b.metadata.resourceVersion !== stored.metadata.resourceVersion) {
        log.conflicts++;
        throw conflict();
      }
      log.writes++;
      stored = {
        ...b,
        metadata: { ...b.metadata, resourceVersion: String(Number(stored.metadata.resourceVersion) + 1) },
      };
      last = structuredClone(stored);
      return structuredClone(stored) as unknown as AnyBudget;
    },
  };
  return {
    store,
    log,
    grants: () => stored.status.grants.map((g) => g.maintenanceUID),
    /** Another writer (the webhook) changes the ledger. */
    otherWriter: (add: string) => {
      stored = {
        ...stored,
        metadata: {
          ...stored.metadata,
          resourceVersion: String(Number(stored.metadata.resourceVersion) + 1),
        },
        status: { grants: [...stored.status.grants, { maintenanceUID: add }] },
      };
    },
    setCache: (b: Budget | undefined) => (cache = b),
    beforeWrite: (f: (() => void) | undefined) => (before = f),
  };
}

describe('LedgerReleaser', () => {
  it('writes the releases that wait together in one write, from the cached copy', async () => {
    const b = budgetStore(['a', 'b', 'c', 'd']);
    const r = new LedgerReleaser(b.store, REF);
    const results = await Promise.all([r.release('a'), r.release('b'), r.release('c')]);
    expect(results).toEqual([true, true, true]);
    expect(b.grants()).toEqual(['d']);
    // The first write took 'a' alone (nothing else was waiting yet); 'b' and 'c' went together.
    expect(b.log.writes).toBe(2);
  });

  it('reads again at once after a lost write and keeps what the other writer added', async () => {
    const b = budgetStore(['a', 'b']);
    let once = true;
    b.beforeWrite(() => {
      if (once) b.otherWriter('new');
      once = false;
    });
    let conflicts = 0;
    const r = new LedgerReleaser(b.store, REF, { onConflict: () => conflicts++ });
    expect(await r.release('a')).toBe(true);
    expect(conflicts).toBe(1);
    expect(b.log.reads).toBe(1);
    expect(b.grants()).toEqual(['b', 'new']);
  });

  it('does not trust a copy without the entry: a fresh read decides it is gone', async () => {
    const b = budgetStore(['a']);
    b.setCache({ metadata: { name: 'fleet', uid: 'b1', resourceVersion: '0' }, status: { grants: [] } });
    const r = new LedgerReleaser(b.store, REF);
    expect(await r.release('a')).toBe(true);
    expect(b.log.reads).toBe(1);
    expect(await r.release('gone')).toBe(false);
  });

  it('gives up after its attempts with the conflict, and rejects only that batch', async () => {
    const b = budgetStore(['a', 'b']);
    b.beforeWrite(() => b.otherWriter('x'));
    const r = new LedgerReleaser(b.store, REF, { attempts: 3 });
    await expect(r.release('a')).rejects.toThrow('modified');
    b.beforeWrite(undefined);
    expect(await r.release('b')).toBe(true);
    expect(b.grants()).not.toContain('b');
  });
});
