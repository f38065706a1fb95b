// An in-memory BudgetStore with the API server's optimistic concurrency: every write bumps
// resourceVersion, and a write carrying an older one fails with a conflict. Tests use its hooks to
// inject conflicts and concurrent writers; it is a faithful model of the port, not of etcd.
import { refKey, type AnyBudget, type BudgetRef } from '../budgets.js';
import { type BudgetStore, budgetConflict } from '../ledger/port.js';

export interface MemoryBudgetStoreHooks {
  /** Runs before each write is checked; may mutate the store (a concurrent writer) or throw. */
  beforeReplace?: (ref: BudgetRef, store: MemoryBudgetStore) => void | Promise<void>;
  /** Yields to other tasks between reads and writes so concurrent calls interleave. */
  yieldBetween?: () => Promise<void>;
}

interface Stored {
  budget: AnyBudget;
  /**
   * The budget serialized once per write: a read parses it, as a client parses a GET's body (also
   * several times cheaper than structuredClone).
   */
  json: string;
}

export class MemoryBudgetStore implements BudgetStore {
  readonly #budgets = new Map<string, Stored>();
  #rv = 0;
  hooks: MemoryBudgetStoreHooks;
  reads = 0;
  writes = 0;
  conflicts = 0;

  constructor(budgets: { ref: BudgetRef; budget: AnyBudget }[] = [], hooks: MemoryBudgetStoreHooks = {}) {
    this.hooks = hooks;
    for (const { ref, budget } of budgets) this.put(ref, budget);
  }

  /** Stores a budget as an outside writer would (bumps resourceVersion). */
  put(ref: BudgetRef, budget: AnyBudget): AnyBudget {
    const resourceVersion = String(++this.#rv);
    const json = JSON.stringify({ ...budget, metadata: { ...budget.metadata, resourceVersion } });
    this.#budgets.set(refKey(ref), { budget: JSON.parse(json) as AnyBudget, json });
    return JSON.parse(json) as AnyBudget;
  }

  /** The stored budget without counting a read (for assertions). */
  current(ref: BudgetRef): AnyBudget | undefined {
    const b = this.#budgets.get(refKey(ref));
    return b ? (JSON.parse(b.json) as AnyBudget) : undefined;
  }

  async get(ref: BudgetRef): Promise<AnyBudget | undefined> {
    this.reads++;
    await this.hooks.yieldBetween?.();
    return this.current(ref);
  }

  async replaceStatus(ref: BudgetRef, budget: AnyBudget): Promise<AnyBudget> {
    await this.hooks.yieldBetween?.();
    await this.hooks.beforeReplace?.(ref, this);
    const current = this.#budgets.get(refKey(ref))?.budget;
    if (!current) throw Object.assign(new Error(`budget ${ref.name} not found`), { statusCode: 404 });
    if (current.metadata.resourceVersion !== budget.metadata.resourceVersion) {
      this.conflicts++;
      throw budgetConflict(ref.name);
    }
    this.writes++;
    // Only status is written through the status subresource; spec and metadata stay as stored.
    return this.put(ref, { ...current, status: budget.status });
  }
}
