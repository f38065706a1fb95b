// firmware-controller: reconciles BIOSVersion, BIOSSettings (system.metal.ironcore.dev) and
// BMCVersion, BMCSettings (baseboard.metal.ironcore.dev) over Redfish, only inside the
// ServerMaintenances it requests. See docs/firmware.md.
//
//   tsx controllers/firmware/main.ts [--kubeconfig FILE] [--bmc-ca-file FILE] [--poll-interval 2] …
import { runControllerBinary, type CommonFlags } from '../../lib/kube/index.js';
import { bmcTls } from '../shared/bmc-tls.js';
import { RedfishFirmware } from './edge.js';
import { FirmwareController } from './reconciler.js';
import { FirmwareSetController } from './sets/reconciler.js';
import { positiveSeconds } from '../shared/flags.js';
import { policyConfigMapFlag, watchedPolicies } from '../shared/policy.js';

const seconds = positiveSeconds;

interface FirmwareFlags extends CommonFlags {
  bmcCaFile?: string;
  bmcInsecureSkipTlsVerify?: boolean;
  redfishTimeout: number;
  pollInterval: number;
  workers: number;
}

let port: RedfishFirmware | undefined;

const mgr = await runControllerBinary({
  name: 'firmware-controller',
  description: 'Applies BIOS/BMC versions and settings over Redfish inside admitted ServerMaintenances',
  flags: (cmd) =>
    policyConfigMapFlag(cmd)
      .option('--bmc-ca-file <file>', 'PEM bundle BMC certificates must chain to')
      .option('--bmc-insecure-skip-tls-verify', 'do not verify BMC certificates (explicit opt-in)')
      .option('--redfish-timeout <s>', 'deadline of one Redfish call', seconds, 10_000)
      .option('--poll-interval <s>', 'how often to look while a task runs or a BMC reboots', seconds, 5_000)
      .option('--workers <n>', 'firmware objects reconciled at once', (v) => Number.parseInt(v, 10), 8),
  setup: (m, common) => {
    const flags = common as FirmwareFlags;
    port = new RedfishFirmware({
      tls: bmcTls(flags, m.logger),
      timeoutMs: flags.redfishTimeout,
      logger: m.logger.child({ component: 'redfish' }),
      onError: (code, operation) => controller.metrics.redfishErrors.inc({ code, operation }),
    });
    const controller = new FirmwareController(m, {
      port,
      policy: watchedPolicies(m, flags),
      namespace: flags.namespace,
      pollMs: flags.pollInterval,
      workers: flags.workers,
    });
    // The Sets run here, under the same Lease: their children are this binary's objects and their
    // caches are shared (docs/firmware.md, "The Sets").
    new FirmwareSetController(m);
  },
});

// Log out of every BMC session once the controllers have drained.
const stop = mgr.stop.bind(mgr);
mgr.stop = async (drainTimeoutMs?: number) => {
  await stop(drainTimeoutMs);
  await port?.close();
};
