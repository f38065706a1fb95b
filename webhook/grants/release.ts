// Undoing a reservation: this maintenance's grants leave the budgets a later refusal left it holding.
import type { BudgetRef } from '../../contract/budgets.js';
import { compareAndSwap } from '../../contract/ledger/cas.js';
import { withoutGrants } from '../../contract/ledger/edit.js';
import type { BudgetStore } from '../../contract/ledger/port.js';
import { Run, type GrantOptions } from './plan.js';

/** Removes these maintenances' grants from one budget, retrying on conflict. True when they are gone. */
function releaseOne(
  store: BudgetStore,
  ref: BudgetRef,
  uids: ReadonlySet<string>,
  run: Run,
): Promise<boolean> {
  return compareAndSwap<boolean>({
    store,
    ref,
    attempts: run.o.maxAttempts,
    decide: (budget) => {
      const next = budget && withoutGrants(budget, (g) => uids.has(g.maintenanceUID)).next;
      return next ? { kind: 'write', next, then: () => true } : { kind: 'done', result: true };
    },
    lost: async (attempt) => {
      run.attemptsCount.conflicts++;
      run.o.onConflict?.(ref);
      await run.backoff(ref, attempt);
    },
    failed: () => false,
    exhausted: () => false,
  });
}

/**
 * Releases this maintenance's grants on the given budgets (undoing a refused reservation); a gang's
 * uids leave each budget in one write.
 */
export async function releaseGrants(
  store: BudgetStore,
  refs: readonly BudgetRef[],
  uid: string | readonly string[],
  options: GrantOptions = {},
) {
  const run = new Run(options);
  const uids = new Set(typeof uid === 'string' ? [uid] : uid);
  const released: BudgetRef[] = [];
  const failed: BudgetRef[] = [];
  // Reverse order: undo the latest reservation first.
  for (const ref of [...refs].reverse())
    ((await releaseOne(store, ref, uids, run)) ? released : failed).push(ref);
  return { released, failed };
}
