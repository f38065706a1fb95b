// approval-controller: announcements on ServerClaims, approval decisions, deadlines, standing and
// policy approvals, and the legacy maintenance-needed label. See docs/controllers.md.
//
//   node --import tsx controllers/approval/main.ts [common flags]
import { runControllerBinary } from '../../lib/kube/binary.js';
import { positiveInt } from '../shared/flags.js';
import { policyConfigMapFlag, watchedPolicies } from '../shared/policy.js';
import { ApprovalReconciler } from './reconciler.js';

await runControllerBinary({
  name: 'approval-controller',
  description: 'Announce maintenance to claims and decide approvals (owner, standing, deadline, policy)',
  flags: (cmd) =>
    policyConfigMapFlag(cmd).option(
      '--workers <n>',
      'parallel reconciles per queue (announce, approve)',
      positiveInt,
      8,
    ),
  setup: (mgr, flags) => {
    const policies = watchedPolicies(mgr, flags);
    new ApprovalReconciler(mgr, policies, { workers: flags.workers as number });
  },
});
