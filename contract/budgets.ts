// The two kinds of disruption budget as the contract names them: a reference to one (BudgetRef), the
// key a denial and a ledger index name it by (refKey: `Kind/namespace/name`), and how messages
// describe it.
import type { ServerDisruptionBudget } from '../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import { qualified } from './names.js';

export type BudgetKind = 'ServerDisruptionBudget' | 'ServerClaimDisruptionBudget';
export type AnyBudget = ServerDisruptionBudget | ServerClaimDisruptionBudget;

export interface BudgetRef {
  kind: BudgetKind;
  /** Set for ServerClaimDisruptionBudget (namespaced); unset for the cluster-scoped kind. */
  namespace?: string;
  name: string;
}

export function refKey(ref: BudgetRef): string {
  return `${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;
}

const BUDGET_KINDS: ReadonlySet<string> = new Set<BudgetKind>([
  'ServerDisruptionBudget',
  'ServerClaimDisruptionBudget',
]);

/** The ref a refKey names (names and namespaces hold no '/'); undefined for anything else. */
export function refOfKey(key: string): BudgetRef | undefined {
  const [kind, namespace, name, ...rest] = key.split('/');
  if (rest.length > 0 || !kind || !BUDGET_KINDS.has(kind) || !name) return undefined;
  return { kind: kind as BudgetKind, ...(namespace ? { namespace } : {}), name };
}

/** The ref of a budget object (the fleet kind is the one with a serverSelector). */
export function refOf(budget: AnyBudget): BudgetRef {
  return {
    kind: 'serverSelector' in budget.spec ? 'ServerDisruptionBudget' : 'ServerClaimDisruptionBudget',
    namespace: budget.metadata.namespace,
    name: budget.metadata.name ?? '',
  };
}

/** `Kind namespace/name (domain "x")`, as denials and waiting messages name a budget. */
export function describeBudget(ref: BudgetRef, domain: string): string {
  return `${ref.kind} ${qualified(ref.namespace, ref.name)}${domain ? ` (domain ${JSON.stringify(domain)})` : ''}`;
}
