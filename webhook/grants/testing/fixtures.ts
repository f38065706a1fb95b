// Budgets, plans and store options shared by the grant tests.
import type { ServerDisruptionBudget } from '../../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import type { MemoryBudgetStore } from '../../../contract/testing/memory-budget-store.js';
import { NOW } from '../../testdata/load.js';
import { type BudgetRef } from '../../../contract/budgets.js';
import { type GrantOptions, type GrantPlan } from '../plan.js';

export const FLEET: BudgetRef = { kind: 'ServerDisruptionBudget', name: 'fleet' };
export const RACKS: BudgetRef = { kind: 'ServerDisruptionBudget', name: 'racks' };
export const TENANT: BudgetRef = { kind: 'ServerClaimDisruptionBudget', namespace: 'tenant-a', name: 'db' };

export const sdb = (
  name: string,
  maxUnavailable: number | string,
  extra: Partial<ServerDisruptionBudget['spec']> = {},
): ServerDisruptionBudget => ({
  metadata: { name, generation: 1 },
  spec: { serverSelector: {}, maxUnavailable, ...extra },
  status: { observedGeneration: 1, grants: [] },
});
export const scdb = (maxUnavailable: number): ServerClaimDisruptionBudget => ({
  metadata: { name: 'db', namespace: 'tenant-a', generation: 1 },
  spec: { claimSelector: {}, maxUnavailable },
  status: { observedGeneration: 1 },
});

export const census = (expected: number, unavailable: string[] = []) => ({ expected, unavailable });
export const ledger = (uid: string) => ({
  maintenanceUID: uid,
  maintenance: { namespace: 'ops', name: uid },
  server: `srv-of-${uid}`,
  grantedAt: NOW.toISOString(),
});

export function planFor(i: number, refs: BudgetRef[] = [FLEET], expected = 100): GrantPlan {
  return {
    maintenance: { uid: `uid-${i}`, namespace: 'ops', name: `m-${i}` },
    server: `srv-${i}`,
    claim: { namespace: 'tenant-a', name: `claim-${i}` },
    reservations: refs.map((ref) => ({ ref, domain: '', census: census(expected) })),
    ledgerCap: 2000,
    finishedOnServer: [],
  };
}

// No real waiting in unit tests; the backoff schedule is asserted through the injected sleep.
export const fast: GrantOptions = { sleep: () => Promise.resolve(), random: () => 0, clock: () => NOW };
export const uids = (store: MemoryBudgetStore, ref: BudgetRef) =>
  (store.current(ref)?.status?.grants ?? []).map((g) => g.maintenanceUID).sort();
