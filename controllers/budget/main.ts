// budget-controller: status of ServerDisruptionBudgets and ServerClaimDisruptionBudgets, and expiry of
// ledger grants. See docs/controllers.md.
//
//   node --import tsx controllers/budget/main.ts [common flags]
import { runControllerBinary } from '../../lib/kube/binary.js';
import { positiveInt } from '../shared/flags.js';
import { PolicyStore } from '../../lib/policy/store.js';
import { watchPolicy } from '../../lib/policy/feed.js';
import { BudgetReconciler } from './reconciler.js';

await runControllerBinary({
  name: 'budget-controller',
  description: 'Keep disruption budget status true and expire grants (TTL, ended maintenances)',
  flags: (cmd) =>
    cmd
      .option('--workers <n>', 'parallel reconciles (one budget each)', positiveInt, 2)
      .option(
        '--policy-configmap <name>',
        'name of the policy ConfigMap in --namespace',
        'metal-maintenance-policy',
      ),
  setup: (mgr, flags) => {
    const policies = new PolicyStore();
    watchPolicy(mgr, policies, {
      ref: { namespace: flags.namespace, name: flags.policyConfigmap as string },
    });
    new BudgetReconciler(mgr, policies, { workers: flags.workers as number });
  },
});
