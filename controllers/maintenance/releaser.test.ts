// The batched ledger releaser against an in-memory budget with the API server's optimistic concurrency.
import { describe, expect, it } from '@jest/globals';
import { KubeApiError } from '../../lib/kube/errors.js';
import { LedgerReleaser, type LedgerStore } from './releaser.js';

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
  const store: LedgerStore<Budget> = {
    cached: () => cache,
    read: () => {
      log.reads++;
      return Promise.resolve(structuredClone(stored));
    },
    write: async (b) => {
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
      return structuredClone(stored);
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
    const r = new LedgerReleaser(b.store);
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
    const r = new LedgerReleaser(b.store, { onConflict: () => conflicts++ });
    expect(await r.release('a')).toBe(true);
    expect(conflicts).toBe(1);
    expect(b.log.reads).toBe(1);
    expect(b.grants()).toEqual(['b', 'new']);
  });

  it('does not trust a copy without the entry: a fresh read decides it is gone', async () => {
    const b = budgetStore(['a']);
    b.setCache({ metadata: { name: 'fleet', uid: 'b1', resourceVersion: '0' }, status: { grants: [] } });
    const r = new LedgerReleaser(b.store);
    expect(await r.release('a')).toBe(true);
    expect(b.log.reads).toBe(1);
    expect(await r.release('gone')).toBe(false);
  });

  it('gives up after its attempts with the conflict, and rejects only that batch', async () => {
    const b = budgetStore(['a', 'b']);
    b.beforeWrite(() => b.otherWriter('x'));
    const r = new LedgerReleaser(b.store, { attempts: 3 });
    await expect(r.release('a')).rejects.toThrow('modified');
    b.beforeWrite(undefined);
    expect(await r.release('b')).toBe(true);
    expect(b.grants()).not.toContain('b');
  });
});
