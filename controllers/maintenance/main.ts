// maintenance-controller: the ServerMaintenance lifecycle (state machine, per-server queue, taint,
// park, ServerBoot, finalizer). See docs/controllers.md.
//
//   node --import tsx controllers/maintenance/main.ts [--park-mode annotation|off] [common flags]
import { Option } from 'commander';
import { runControllerBinary } from '../../lib/kube/binary.js';
import { positiveInt } from '../shared/flags.js';
import { policyConfigMapFlag, watchedPolicies } from '../shared/policy.js';
import { MAINTENANCE_TAINT_KEY } from '../../contract/names.js';
import { MaintenanceReconciler } from './reconciler.js';
import { type ParkMode } from './decide/model.js';

await runControllerBinary({
  name: 'maintenance-controller',
  description:
    'ServerMaintenance lifecycle: queue per server, InMaintenance via the webhook, taint, park, cleanup',
  flags: (cmd) =>
    policyConfigMapFlag(cmd)
      .addOption(
        new Option(
          '--park-mode <mode>',
          'ask metal-operator to park servers in maintenance (annotation) or not (off)',
        )
          .choices(['annotation', 'off'])
          .default('annotation'),
      )
      .option(
        '--taint-key <key>',
        'key of the NoBind taint put on servers in maintenance',
        MAINTENANCE_TAINT_KEY,
      )
      .option('--workers <n>', 'parallel reconciles (one server each)', positiveInt, 16)
      .option(
        '--max-backoff <s>',
        'cap of the backoff taken from a denial retry hint, in seconds',
        positiveInt,
        600,
      ),
  setup: (mgr, flags) => {
    const policies = watchedPolicies(mgr, flags);
    new MaintenanceReconciler(mgr, policies, {
      parkMode: flags.parkMode as ParkMode,
      taintKey: flags.taintKey as string,
      workers: flags.workers as number,
      maxBackoffMs: (flags.maxBackoff as number) * 1000,
    });
  },
});
