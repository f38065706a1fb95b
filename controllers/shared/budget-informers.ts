// Both kinds of disruption budget, cached without managedFields and indexed by the maintenances their
// ledgers hold grants for: the budget controller expires those grants, the maintenance controller
// releases them, and each looks a maintenance's grants up by its uid. Both write the ledgers through
// budgetStore, the contract's ledger port over the API server, starting from these caches.
import type { ServerClaimDisruptionBudget } from '../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import type { ServerDisruptionBudget } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import { withoutManagedFields, type Informer } from '../../lib/kube/informer.js';
import type { Manager } from '../../lib/kube/manager.js';
import { ApiBudgetStore } from '../../lib/kube/budget-store.js';
import type { BudgetRef } from '../../contract/budgets.js';
import { ServerClaimDisruptionBudgetResource, ServerDisruptionBudgetResource } from '../../lib/kube/kinds.js';

/** The index from a maintenance's uid to the budgets whose ledger holds a grant for it. */
export const GRANT_INDEX = 'grant';

const grantsOf = (b: ServerDisruptionBudget | ServerClaimDisruptionBudget) =>
  (b.status?.grants ?? []).map((g) => g.maintenanceUID);

export interface BudgetInformers {
  sdbs: Informer<ServerDisruptionBudget>;
  scdbs: Informer<ServerClaimDisruptionBudget>;
}

export function budgetInformers(mgr: Manager): BudgetInformers {
  return {
    sdbs: mgr.informer<ServerDisruptionBudget>(ServerDisruptionBudgetResource, {
      indexers: { [GRANT_INDEX]: grantsOf },
      transform: withoutManagedFields,
    }),
    scdbs: mgr.informer<ServerClaimDisruptionBudget>(ServerClaimDisruptionBudgetResource, {
      indexers: { [GRANT_INDEX]: grantsOf },
      transform: withoutManagedFields,
    }),
  };
}

/** The ledger port for a controller: its informers' copies first, writes under its field manager. */
export function budgetStore(mgr: Manager, informers: BudgetInformers): ApiBudgetStore {
  return new ApiBudgetStore(mgr.client, {
    timeoutMs: null,
    fieldManager: mgr.status.fieldManager,
    cached: (ref) =>
      ref.kind === 'ServerDisruptionBudget'
        ? informers.sdbs.getByName(ref.name)
        : informers.scdbs.getByName(ref.name, ref.namespace),
  });
}

/** The resource a lost ledger write is counted under (the manager's status-conflict metric). */
export const budgetPlural = (ref: BudgetRef): string =>
  ref.kind === 'ServerDisruptionBudget'
    ? ServerDisruptionBudgetResource.plural
    : ServerClaimDisruptionBudgetResource.plural;
