// drain-controller: cordons and drains the workload-cluster Node consuming a claim before a
// maintenance announced to it, names what blocks, approves when drained, uncordons afterwards.
// See docs/drain.md.
//
//   node --import tsx controllers/drain/main.ts [common flags]
import { runControllerBinary } from '../../lib/kube/binary.js';
import { positiveInt } from '../shared/flags.js';
import { policyConfigMapFlag, watchedPolicies } from '../shared/policy.js';
import { DrainReconciler } from './reconciler.js';

await runControllerBinary({
  name: 'drain-controller',
  description: "Cordon and drain a claim's Node before its maintenance, then approve it",
  flags: (cmd) =>
    policyConfigMapFlag(cmd).option('--workers <n>', 'claims drained in parallel', positiveInt, 8),
  setup: (mgr, flags) => {
    const policies = watchedPolicies(mgr, flags);
    new DrainReconciler(mgr, policies, { workers: flags.workers as number });
  },
});
