// Releases ledger entries, batched per budget. Every finished maintenance removes its grant from the
// budget's ledger by compare-and-swap, and so does every grant the webhook writes: on one busy budget
// those writes collide. Each worker releasing on its own made the controller collide with itself
// too, and a loser slept up to a second before reading again; in the rollout benchmark a release then
// took 0.3 s on average and up to 9 s after the maintenance was gone, and nobody could use the slot
// meanwhile. Here one loop per budget writes every release that is waiting, in one write, and after a
// lost write reads again at once (through the contract's compare-and-swap loop, contract/ledger/cas.ts).
import { Batcher } from '../../lib/batcher.js';
import { isNotFound } from '../../lib/kube/errors.js';
import type { BudgetRef } from '../../contract/budgets.js';
import { compareAndSwap } from '../../contract/ledger/cas.js';
import { withoutGrants } from '../../contract/ledger/edit.js';
import type { BudgetStore } from '../../contract/ledger/port.js';

export interface ReleaseOptions {
  /** Writes tried per batch before it fails (each after a fresh read). */
  attempts?: number;
  /** Told about each lost write. */
  onConflict?: () => void;
}

/** One budget's releases: whatever is waiting when a write starts goes into that write. */
export class LedgerReleaser {
  readonly #store: BudgetStore;
  readonly #ref: BudgetRef;
  readonly #o: Required<Omit<ReleaseOptions, 'onConflict'>> & Pick<ReleaseOptions, 'onConflict'>;
  readonly #batches = new Batcher<string, boolean>(async (uids) => {
    const removed = await this.#writeBatch(new Set(uids));
    return uids.map((uid) => removed.has(uid));
  });

  constructor(store: BudgetStore, ref: BudgetRef, options: ReleaseOptions = {}) {
    this.#store = store;
    this.#ref = ref;
    this.#o = { attempts: 20, ...options };
  }

  /** Resolves true once this write removed the entry, false when it was not (or no longer) there. */
  release(uid: string): Promise<boolean> {
    return this.#batches.submit(uid);
  }

  /** Removes the entries of `uids` by compare-and-swap; returns the uids it removed. */
  #writeBatch(uids: ReadonlySet<string>): Promise<Set<string>> {
    // The first try starts from the newest copy known without a request (the watch cache or our last
    // write), if it holds any of the entries: a copy without them may just be stale, and only a fresh
    // read can tell they are gone.
    let start = this.#store.peek?.(this.#ref);
    if (!start?.status?.grants?.some((g) => uids.has(g.maintenanceUID))) start = undefined;
    return compareAndSwap<Set<string>>({
      store: this.#store,
      ref: this.#ref,
      attempts: this.#o.attempts,
      ...(start ? { start } : {}),
      decide: (current) => {
        const { next, dropped } = current
          ? withoutGrants(current, (g) => uids.has(g.maintenanceUID))
          : { next: undefined, dropped: [] };
        const removed = new Set(dropped.map((g) => g.maintenanceUID));
        return next ? { kind: 'write', next, then: () => removed } : { kind: 'done', result: removed };
      },
      // Read again at once: the loser of a CAS needs the new version, not a pause.
      lost: () => this.#o.onConflict?.(),
      failed: (e, during) => {
        if (during === 'write' && isNotFound(e)) return new Set<string>();
        throw e;
      },
      exhausted: (conflict) => {
        throw conflict;
      },
    });
  }
}
