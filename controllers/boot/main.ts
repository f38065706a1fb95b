// boot-controller: reconciles ServerBoot objects (boot a server into an image over Redfish, pin
// the boot target while the boot lasts, restore afterwards). See docs/boot.md.
//
//   tsx controllers/boot/main.ts [--kubeconfig FILE] [--bmc-ca-file FILE] [--poll-interval 2] …
import { existsSync, readFileSync } from 'node:fs';
import { runControllerBinary, type CommonFlags } from '../../lib/kube/index.js';
import { RedfishEdge } from './edge.js';
import { BootController } from './reconciler.js';

const seconds = (v: string): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`expected a positive number of seconds, got ${v}`);
  return Math.round(n * 1000);
};

interface BootFlags extends CommonFlags {
  bmcCaFile?: string;
  bmcInsecureSkipTlsVerify?: boolean;
  redfishTimeout: number;
  pollInterval: number;
  pinPollInterval: number;
  powerSettle: number;
  retryInterval: number;
  workers: number;
}

let edge: RedfishEdge | undefined;

const mgr = await runControllerBinary({
  name: 'boot-controller',
  description: 'Boots servers into an image over Redfish (ServerBoot), pins the boot target, restores it',
  flags: (cmd) =>
    cmd
      .option('--bmc-ca-file <file>', 'PEM bundle BMC certificates must chain to')
      .option('--bmc-insecure-skip-tls-verify', 'do not verify BMC certificates (explicit opt-in)')
      .option('--redfish-timeout <s>', 'deadline of one Redfish call', seconds, 10_000)
      .option(
        '--poll-interval <s>',
        'how often to look while waiting for power or a boot configuration',
        seconds,
        2_000,
      )
      .option(
        '--pin-poll-interval <s>',
        'how often to check a pinned boot override while Running',
        seconds,
        10_000,
      )
      .option(
        '--power-settle <s>',
        'On without a visible power cycle counts as booted after this',
        seconds,
        60_000,
      )
      .option(
        '--retry-interval <s>',
        'delay before retrying after a BMC error, and between undo attempts',
        seconds,
        15_000,
      )
      .option('--workers <n>', 'ServerBoots reconciled at once', (v) => Number.parseInt(v, 10), 4),
  setup: (m, common) => {
    const flags = common as BootFlags;
    // The shipped Deployment mounts the ConfigMap metal-maintenance-bmc-ca as optional: until an operator
    // creates it the file is absent, and the controller runs refusing https BMCs (restart it to pick
    // the bundle up) rather than crash-looping.
    const caFile = flags.bmcCaFile && existsSync(flags.bmcCaFile) ? flags.bmcCaFile : undefined;
    if (flags.bmcCaFile && !caFile) {
      m.logger.warn(
        { bmcCaFile: flags.bmcCaFile },
        '--bmc-ca-file does not exist (is the ConfigMap metal-maintenance-bmc-ca created?): https BMCs will be refused',
      );
    } else if (!caFile && !flags.bmcInsecureSkipTlsVerify) {
      m.logger.warn('neither --bmc-ca-file nor --bmc-insecure-skip-tls-verify: https BMCs will be refused');
    }
    edge = new RedfishEdge({
      tls: caFile ? { ca: readFileSync(caFile) } : { insecure: flags.bmcInsecureSkipTlsVerify === true },
      timeoutMs: flags.redfishTimeout,
      logger: m.logger.child({ component: 'redfish' }),
      onError: (code, operation) => controller.metrics.redfishErrors.inc({ code, operation }),
    });
    const controller = new BootController(m, {
      edge,
      policyNamespace: flags.namespace,
      workers: flags.workers,
      timings: {
        pollMs: flags.pollInterval,
        pinPollMs: flags.pinPollInterval,
        settleMs: flags.powerSettle,
        retryMs: flags.retryInterval,
      },
    });
  },
});

// Log out of every BMC session once the controllers have drained.
const stop = mgr.stop.bind(mgr);
mgr.stop = async (drainTimeoutMs?: number) => {
  await stop(drainTimeoutMs);
  await edge?.close();
};
