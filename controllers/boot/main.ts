// boot-controller: reconciles ServerBoot objects (boot a server into an image over Redfish, pin
// the boot target while the boot lasts, restore afterwards). See docs/boot.md.
//
//   tsx controllers/boot/main.ts [--kubeconfig FILE] [--bmc-ca-file FILE] [--poll-interval 2] …
import { runControllerBinary, type CommonFlags } from '../../lib/kube/index.js';
import { bmcTls } from '../shared/bmc-tls.js';
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
    edge = new RedfishEdge({
      tls: bmcTls(flags, m.logger),
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
