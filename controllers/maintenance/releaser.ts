// Releases ledger entries, batched per budget. Every finished maintenance removes its grant from the
// budget's ledger by compare-and-swap, and so does every grant the webhook writes: on one busy budget
// those writes collide. Each worker releasing on its own made the controller collide with itself
// too, and a loser slept up to a second before reading again; in the rollout benchmark a release then
// took 0.3 s on average and up to 9 s after the maintenance was gone, and nobody could use the slot
// meanwhile. Here one loop per budget writes every release that is waiting, in one write, and after a
// lost write reads again at once.
import { isConflict, isNotFound } from '../../lib/kube/errors.js';
import { Batcher } from '../../lib/batcher.js';
import { fresher } from '../../lib/kube/resources.js';
import { withoutGrants } from '../../lib/ledger.js';

interface LedgerBudget {
  metadata: { name?: string; namespace?: string; resourceVersion?: string; uid?: string };
  status?: { grants?: { maintenanceUID: string }[] };
}

/** The budget's API: a fresh read and a status write with the resourceVersion as precondition. */
export interface LedgerStore<B extends LedgerBudget> {
  /** The budget as the watch cache holds it (may be stale), or undefined. */
  cached(): B | undefined;
  /** A fresh read; undefined when the budget is gone. */
  read(): Promise<B | undefined>;
  /** Writes status if resourceVersion is current; throws a 409 when it is not. */
  write(budget: B): Promise<B>;
}

export interface ReleaseOptions {
  /** Writes tried per batch before it fails (each after a fresh read). */
  attempts?: number;
  /** Told about each lost write. */
  onConflict?: () => void;
}

/** One budget's releases: whatever is waiting when a write starts goes into that write. */
export class LedgerReleaser<B extends LedgerBudget> {
  readonly #store: LedgerStore<B>;
  readonly #o: Required<Omit<ReleaseOptions, 'onConflict'>> & Pick<ReleaseOptions, 'onConflict'>;
  readonly #batches = new Batcher<string, boolean>(async (uids) => {
    const removed = await this.#writeBatch(new Set(uids));
    return uids.map((uid) => removed.has(uid));
  });
  /** What our last write returned: newer than the cache until its event arrives. */
  #last: B | undefined;

  constructor(store: LedgerStore<B>, options: ReleaseOptions = {}) {
    this.#store = store;
    this.#o = { attempts: 20, ...options };
  }

  /** Resolves true once this write removed the entry, false when it was not (or no longer) there. */
  release(uid: string): Promise<boolean> {
    return this.#batches.submit(uid);
  }

  #start(): B | undefined {
    return fresher(this.#store.cached(), this.#last);
  }

  /** Removes the entries of `uids` by compare-and-swap; returns the uids it removed. */
  async #writeBatch(uids: ReadonlySet<string>): Promise<Set<string>> {
    // The first try starts from the newest copy we know without a request, if it holds any of the
    // entries (a copy without them may just be stale: only a fresh read can tell they are gone).
    let current = this.#start();
    if (!current?.status?.grants?.some((g) => uids.has(g.maintenanceUID))) current = undefined;
    for (let attempt = 0; ; attempt++) {
      current ??= await this.#store.read();
      const { next, dropped } = current
        ? withoutGrants(current, (g) => uids.has(g.maintenanceUID))
        : { dropped: [] };
      const removed = new Set(dropped.map((g) => g.maintenanceUID));
      if (!next) return removed;
      try {
        this.#last = await this.#store.write(next);
        return removed;
      } catch (e) {
        if (isNotFound(e)) return new Set();
        if (!isConflict(e) || attempt + 1 >= this.#o.attempts) throw e;
        this.#o.onConflict?.();
        current = undefined; // read again at once: the loser of a CAS needs the new version, not a pause
      }
    }
  }
}
