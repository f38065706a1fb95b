// The BudgetStore over the API server: GET the budget (fresh, never from a cache: a grant must see
// every grant written before it), PUT its /status with the resourceVersion it was read at. The API
// server refuses a stale resourceVersion with 409 Conflict, which becomes budgetConflict() so the grant
// loop re-reads and re-decides. Timeouts are short: the whole grant must fit the webhook's timeout.
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
import { resourceOf } from '../lib/kube/resources.js';
import { budgetConflict } from './codes.js';
import type { AnyBudget, BudgetRef, BudgetStore } from './grants.js';

export interface ApiBudgetStoreOptions {
  /** Per request; the grant loop makes a few of them within the eviction webhook's timeout. */
  timeoutMs?: number;
}

export class ApiBudgetStore implements BudgetStore {
  readonly #fleet: ResourceClient<ServerDisruptionBudget>;
  readonly #tenant: ResourceClient<ServerClaimDisruptionBudget>;
  readonly #timeoutMs: number;

  constructor(client: KubeClient, options: ApiBudgetStoreOptions = {}) {
    this.#fleet = client.resource(resourceOf(ServerDisruptionBudgetKind));
    this.#tenant = client.resource(resourceOf(ServerClaimDisruptionBudgetKind));
    this.#timeoutMs = options.timeoutMs ?? 2000;
  }

  #resource(ref: BudgetRef): ResourceClient<AnyBudget> {
    return ref.kind === 'ServerDisruptionBudget' ? this.#fleet : this.#tenant;
  }

  async get(ref: BudgetRef): Promise<AnyBudget | undefined> {
    try {
      return await this.#resource(ref).get(ref.name, ref.namespace, { timeoutMs: this.#timeoutMs });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  async replaceStatus(ref: BudgetRef, budget: AnyBudget): Promise<AnyBudget> {
    if (!budget.metadata.resourceVersion) {
      // Without a resourceVersion the PUT would overwrite unconditionally: never do that to a ledger.
      throw new Error(`budget ${ref.name}: refusing a status write without resourceVersion`);
    }
    try {
      return await this.#resource(ref).replaceStatus(budget, { timeoutMs: this.#timeoutMs });
    } catch (e) {
      if (isConflict(e)) throw budgetConflict(ref.name);
      throw e;
    }
  }
}
