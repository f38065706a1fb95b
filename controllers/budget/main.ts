// budget-controller: status of ServerDisruptionBudgets and ServerClaimDisruptionBudgets, and expiry of
// ledger grants. See docs/controllers.md.
//
//   node --import tsx controllers/budget/main.ts [common flags]
import { runControllerBinary } from '../../lib/kube/binary.js';
import { positiveInt } from '../shared/flags.js';
import { policyConfigMapFlag, watchedPolicies } from '../shared/policy.js';
import { BudgetReconciler } from './reconciler.js';

await runControllerBinary({
  name: 'budget-controller',
  description: 'Keep disruption budget status true and expire grants (TTL, ended maintenances)',
  flags: (cmd) =>
    policyConfigMapFlag(cmd).option('--workers <n>', 'parallel reconciles (one budget each)', positiveInt, 2),
  setup: (mgr, flags) => {
    const policies = watchedPolicies(mgr, flags);
    new BudgetReconciler(mgr, policies, { workers: flags.workers as number });
  },
});
