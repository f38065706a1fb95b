// approval-controller: announcements on ServerClaims, approval decisions, deadlines, standing and
// policy approvals, and the legacy maintenance-needed label. See docs/controllers.md.
//
//   node --import tsx controllers/approval/main.ts [common flags]
import { runControllerBinary } from '../../lib/kube/binary.js';
import { positiveInt } from '../shared/flags.js';
import { PolicyStore } from '../../lib/policy/store.js';
import { watchPolicy } from '../../lib/policy/feed.js';
import { ApprovalReconciler } from './reconciler.js';

await runControllerBinary({
  name: 'approval-controller',
  description: 'Announce maintenance to claims and decide approvals (owner, standing, deadline, policy)',
  flags: (cmd) =>
    cmd
      .option('--workers <n>', 'parallel reconciles per queue (announce, approve)', positiveInt, 8)
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
    new ApprovalReconciler(mgr, policies, { workers: flags.workers as number });
  },
});
