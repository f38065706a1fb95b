// The BudgetStore over the API server: GET the budget, PUT its /status with the resourceVersion it was
// read at. The API server refuses a stale resourceVersion with 409 Conflict, which becomes
// budgetConflict() so the grant loop re-reads and re-decides; a grant therefore always sees every grant
// written before it, even when its first look was at a cached copy (peek: the newer of the watch cache
// and this replica's last read or write). Timeouts are short: the whole grant must fit the webhook's
// timeout.
import {
  ServerClaimDisruptionBudgetKind,
  type ServerClaimDisruptionBudget,
} from '../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import {
  ServerDisruptionBudgetKind,
  type ServerDisruptionBudget,
} from '../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { KubeClient, ResourceClient } from '../lib/kube/client.js';
import { isConflict, isNotFound } from '../lib/kube/errors.js';
import { fresher, resourceOf } from '../lib/kube/resources.js';
import { budgetConflict } from '../contract/codes.js';
import { type BudgetStore } from './grants.js';
import { refKey, type AnyBudget, type BudgetRef } from '../contract/budgets.js';

export interface ApiBudgetStoreOptions {
  /** Per request; the grant loop makes a few of them within the eviction webhook's timeout. */
  timeoutMs?: number;
  /** The watch cache's copy of a budget (for peek). */
  cached?: (ref: BudgetRef) => AnyBudget | undefined;
}

export class ApiBudgetStore implements BudgetStore {
  readonly #fleet: ResourceClient<ServerDisruptionBudget>;
  readonly #tenant: ResourceClient<ServerClaimDisruptionBudget>;
  readonly #timeoutMs: number;
  readonly #cached: ((ref: BudgetRef) => AnyBudget | undefined) | undefined;
  /** What this replica last read or wrote, per budget: newer than the watch cache until its event comes. */
  readonly #seen = new Map<string, AnyBudget>();

  constructor(client: KubeClient, options: ApiBudgetStoreOptions = {}) {
    this.#fleet = client.resource(resourceOf(ServerDisruptionBudgetKind));
    this.#tenant = client.resource(resourceOf(ServerClaimDisruptionBudgetKind));
    this.#timeoutMs = options.timeoutMs ?? 2000;
    this.#cached = options.cached;
  }

  peek(ref: BudgetRef): AnyBudget | undefined {
    const key = refKey(ref);
    const seen = this.#seen.get(key);
    const use = fresher(this.#cached?.(ref), seen);
    if (seen && use !== seen) this.#seen.delete(key); // the cache caught up (or lost it: a read decides)
    return use;
  }

  #saw(ref: BudgetRef, budget: AnyBudget | undefined): AnyBudget | undefined {
    if (budget) this.#seen.set(refKey(ref), budget);
    else this.#seen.delete(refKey(ref));
    return budget;
  }

  #resource(ref: BudgetRef): ResourceClient<AnyBudget> {
    return ref.kind === 'ServerDisruptionBudget' ? this.#fleet : this.#tenant;
  }

  async get(ref: BudgetRef): Promise<AnyBudget | undefined> {
    try {
      return this.#saw(
        ref,
        await this.#resource(ref).get(ref.name, ref.namespace, { timeoutMs: this.#timeoutMs }),
      );
    } catch (e) {
      if (isNotFound(e)) return this.#saw(ref, undefined);
      throw e;
    }
  }

  async replaceStatus(ref: BudgetRef, budget: AnyBudget): Promise<AnyBudget> {
    if (!budget.metadata.resourceVersion) {
      // Without a resourceVersion the PUT would overwrite unconditionally: never do that to a ledger.
      throw new Error(`budget ${ref.name}: refusing a status write without resourceVersion`);
    }
    try {
      const written = await this.#resource(ref).replaceStatus(budget, { timeoutMs: this.#timeoutMs });
      this.#saw(ref, written);
      return written;
    } catch (e) {
      if (isConflict(e)) throw budgetConflict(ref.name);
      throw e;
    }
  }
}
