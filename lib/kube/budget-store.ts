// The disruption budgets' grant ledgers over the API server: GET a budget, PUT its /status with the
// resourceVersion it was read at. This is the one implementation of the contract's ledger port
// (contract/ledger/port.ts, which it satisfies by shape): the webhook's grants, the maintenance
// controller's releases and the budget controller's expiry all write through it. The API server
// refuses a stale resourceVersion with 409 Conflict, which the compare-and-swap loop re-reads and
// re-decides on; a writer therefore always sees every grant written before its own, even when its
// first look was at a cached copy (peek: the newer of the watch cache and this process's last read
// or write).
import type { ServerClaimDisruptionBudget } from '../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import type { ServerDisruptionBudget } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { KubeClient, ResourceClient } from './client.js';
import { isNotFound } from './errors.js';
import { fresher } from './resources.js';
import { ServerClaimDisruptionBudgetResource, ServerDisruptionBudgetResource } from './kinds.js';

type Budget = ServerDisruptionBudget | ServerClaimDisruptionBudget;

/** Which budget: its kind, name and (for the claim kind) namespace. */
export interface BudgetObjectRef {
  kind: 'ServerDisruptionBudget' | 'ServerClaimDisruptionBudget';
  namespace?: string;
  name: string;
}

export interface ApiBudgetStoreOptions {
  /**
   * Per request: default 2 s (the webhook's grant makes a few of them within its admission timeout);
   * null: the client's own timeout (the controllers, which have no admission deadline to meet).
   */
  timeoutMs?: number | null;
  /** The field manager status writes are made under (default: the client's). */
  fieldManager?: string;
  /** The watch cache's copy of a budget (for peek). */
  cached?: (ref: BudgetObjectRef) => Budget | undefined;
}

const keyOf = (ref: BudgetObjectRef) => `${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;

export class ApiBudgetStore {
  readonly #fleet: ResourceClient<ServerDisruptionBudget>;
  readonly #tenant: ResourceClient<ServerClaimDisruptionBudget>;
  readonly #timeoutMs: number | undefined;
  readonly #fieldManager: string | undefined;
  readonly #cached: ((ref: BudgetObjectRef) => Budget | undefined) | undefined;
  /** What this process last read or wrote, per budget: newer than the watch cache until its event comes. */
  readonly #seen = new Map<string, Budget>();

  constructor(client: KubeClient, options: ApiBudgetStoreOptions = {}) {
    this.#fleet = client.resource(ServerDisruptionBudgetResource);
    this.#tenant = client.resource(ServerClaimDisruptionBudgetResource);
    this.#timeoutMs = options.timeoutMs === null ? undefined : (options.timeoutMs ?? 2000);
    this.#fieldManager = options.fieldManager;
    this.#cached = options.cached;
  }

  peek(ref: BudgetObjectRef): Budget | undefined {
    const key = keyOf(ref);
    const seen = this.#seen.get(key);
    const use = fresher(this.#cached?.(ref), seen);
    if (seen && use !== seen) this.#seen.delete(key); // the cache caught up (or lost it: a read decides)
    return use;
  }

  #saw(ref: BudgetObjectRef, budget: Budget | undefined): Budget | undefined {
    if (budget) this.#seen.set(keyOf(ref), budget);
    else this.#seen.delete(keyOf(ref));
    return budget;
  }

  #resource(ref: BudgetObjectRef): ResourceClient<Budget> {
    return ref.kind === 'ServerDisruptionBudget' ? this.#fleet : this.#tenant;
  }

  async get(ref: BudgetObjectRef): Promise<Budget | undefined> {
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

  /** Writes status if resourceVersion is current; a stale one is refused with 409 Conflict (thrown as is). */
  async replaceStatus(ref: BudgetObjectRef, budget: Budget): Promise<Budget> {
    if (!budget.metadata.resourceVersion) {
      // Without a resourceVersion the PUT would overwrite unconditionally: never do that to a ledger.
      throw new Error(`budget ${ref.name}: refusing a status write without resourceVersion`);
    }
    const written = await this.#resource(ref).replaceStatus(budget, {
      timeoutMs: this.#timeoutMs,
      ...(this.#fieldManager ? { fieldManager: this.#fieldManager } : {}),
    });
    this.#saw(ref, written);
    return written;
  }
}
