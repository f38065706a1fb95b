// The common shape of every controller binary: flags, logger, client, Manager, probes, signals.
//
//   await runControllerBinary({ name: 'budget-controller', setup: (mgr, flags) => { ... } });
//
// Flags every binary takes: --kubeconfig (else $KUBECONFIG, ~/.kube/config, in-cluster), --namespace
// (where its Lease and policy live), --no-leader-elect, --ops-port, --ops-host,
// --lease-duration/--renew-deadline/--retry-period (client-go defaults), --log-level.
import { Command, Option } from 'commander';
import { KubeClient } from './client.js';
import { Manager } from './manager.js';
import { runUntilSignal } from './lifecycle.js';
import { createLogger } from '../log.js';

export interface CommonFlags {
  kubeconfig?: string;
  namespace: string;
  leaderElect: boolean;
  opsPort: number;
  opsHost: string;
  leaseDuration: number;
  renewDeadline: number;
  retryPeriod: number;
  logLevel: string;
  [extra: string]: unknown;
}

export interface ControllerBinary {
  name: string;
  description?: string;
  /** Extra flags of this binary. */
  flags?: (cmd: Command) => void;
  /** Registers informers and controllers on the manager before it starts. */
  setup: (mgr: Manager, flags: CommonFlags) => void | Promise<void>;
}

const seconds = (v: string) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`expected a positive number of seconds, got ${v}`);
  return n * 1000;
};

export async function runControllerBinary(bin: ControllerBinary, argv = process.argv): Promise<Manager> {
  const cmd = new Command(bin.name)
    .description(bin.description ?? '')
    .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then in-cluster)')
    .option('--namespace <ns>', 'namespace of the Lease and the policy ConfigMap', 'metal-maintenance-system')
    .option('--no-leader-elect', 'run without leader election (single replica only)')
    .option('--ops-port <port>', 'port of /healthz, /readyz, /metrics (0 = any)', (v) => Number(v), 8081)
    .option('--ops-host <host>', 'address the ops port binds', '0.0.0.0')
    .addOption(
      new Option('--lease-duration <s>', 'Lease duration in seconds').argParser(seconds).default(15_000),
    )
    .addOption(
      new Option('--renew-deadline <s>', 'renew deadline in seconds').argParser(seconds).default(10_000),
    )
    .addOption(new Option('--retry-period <s>', 'retry period in seconds').argParser(seconds).default(2_000))
    .option('--log-level <level>', 'log level', process.env.LOG_LEVEL ?? 'info');
  bin.flags?.(cmd);
  cmd.parse(argv);
  const flags = cmd.opts<CommonFlags>();
  const logger = createLogger(bin.name, { level: flags.logLevel });
  const client = flags.kubeconfig
    ? await KubeClient.fromFile(flags.kubeconfig, { userAgent: `metal-maintenance/${bin.name}` })
    : await KubeClient.fromEnvironment({ userAgent: `metal-maintenance/${bin.name}` });
  const mgr = new Manager({
    name: bin.name,
    client,
    logger,
    leaderElection: flags.leaderElect
      ? {
          namespace: flags.namespace,
          leaseDurationMs: flags.leaseDuration,
          renewDeadlineMs: flags.renewDeadline,
          retryPeriodMs: flags.retryPeriod,
        }
      : false,
    ops: { host: flags.opsHost, port: flags.opsPort },
  });
  await bin.setup(mgr, flags);
  runUntilSignal(mgr, logger);
  await mgr.start();
  logger.info({ identity: mgr.identity }, `${bin.name} started`);
  return mgr;
}
