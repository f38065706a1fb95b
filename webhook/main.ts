// The admission webhook binary.
//
//   node dist/webhook/main.js --cert-dir /tmp/k8s-webhook-server/serving-certs [--kubeconfig FILE]
//
// Flags: --kubeconfig (default: $KUBECONFIG, ~/.kube/config, then in-cluster), --host, --port (HTTPS,
// AdmissionReview), --cert-dir with --cert-name/--key-name (re-read every --cert-poll-interval seconds),
// --policy-namespace, --policy-name, --policy-key, --policy-when-missing (defaults | none), --ops-host,
// --ops-port (plain HTTP: /healthz, /readyz, /metrics; -1: none), --shutdown-delay (seconds of serving after
// SIGTERM while not ready), --sync-timeout, --log-level, --log-sampling (denial lines per rule and code
// and second: the first INITIAL, then every THEREAFTER-th; `off`: all). SIGTERM/SIGINT stop gracefully.
import { join } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { KubeClient } from '../lib/kube/client.js';
import { runUntilSignal } from '../lib/kube/lifecycle.js';
import { errorMessage } from '../lib/errors.js';
import { POLICY_CONFIGMAP } from '../policies/schema.js';
import { WebhookApp } from './app.js';
import { bufferedLogger } from './log.js';
import { DEFAULT_LOG_SAMPLING, parseLogSampling, type LogSampling } from '../lib/log-sampling.js';

interface Flags {
  kubeconfig?: string;
  host: string;
  port: number;
  certDir: string;
  certName: string;
  keyName: string;
  clientCaFile?: string;
  certPollInterval: number;
  policyNamespace: string;
  policyName: string;
  policyKey: string;
  policyWhenMissing: 'defaults' | 'none';
  opsHost: string;
  opsPort: number;
  shutdownDelay: number;
  syncTimeout: number;
  logLevel: string;
  logSampling: LogSampling | false;
}

// commander reports an InvalidArgumentError as a usage error naming the flag (exit 1, no stack trace).
const int = (min: number) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`expected an integer >= ${min}`);
  return n;
};
const seconds = (v: string) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('expected seconds >= 0');
  return n * 1000;
};

const flags = new Command('webhook')
  .description('metal-maintenance admission webhook')
  .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then in-cluster)')
  .option('--host <addr>', 'address the HTTPS port binds', '0.0.0.0')
  .option('--port <port>', 'HTTPS port for AdmissionReviews (0 = any)', int(0), 9443)
  .option('--cert-dir <dir>', 'directory of the serving certificate', '/tmp/k8s-webhook-server/serving-certs')
  .option('--cert-name <file>', 'certificate file in --cert-dir', 'tls.crt')
  .option('--key-name <file>', 'private key file in --cert-dir', 'tls.key')
  .option(
    '--client-ca-file <path>',
    "CA bundle that signs the API server's client certificate: requests on connections without one it " +
      'signed get 401 (re-read with the serving certificate; default: callers are not authenticated)',
  )
  .addOption(
    new Option('--cert-poll-interval <s>', 'seconds between certificate re-reads')
      .argParser(seconds)
      .default(30_000),
  )
  .option('--policy-namespace <ns>', 'namespace of the policy ConfigMap', POLICY_CONFIGMAP.namespace)
  .option('--policy-name <name>', 'name of the policy ConfigMap', POLICY_CONFIGMAP.name)
  .option('--policy-key <key>', 'data key holding the policy YAML', POLICY_CONFIGMAP.key)
  .addOption(
    new Option('--policy-when-missing <mode>', 'policy in force while the ConfigMap has never existed')
      .choices(['defaults', 'none'])
      .default('defaults'),
  )
  .option('--ops-host <addr>', 'address the ops port binds', '0.0.0.0')
  .option('--ops-port <port>', 'ops port: /healthz, /readyz, /metrics (0 = any, -1 = none)', int(-1), 8081)
  .addOption(
    new Option('--shutdown-delay <s>', 'seconds to keep serving after SIGTERM while not ready')
      .argParser(seconds)
      .default(0),
  )
  .addOption(
    new Option('--sync-timeout <s>', 'seconds to wait for the caches to sync')
      .argParser(seconds)
      .default(120_000),
  )
  .option('--log-level <level>', 'log level', process.env.LOG_LEVEL ?? 'info')
  .addOption(
    new Option(
      '--log-sampling <initial:thereafter|off>',
      'denial lines per rule and code each second: the first INITIAL, then every THEREAFTER-th ' +
        '(the rest are counted in metal_webhook_review_lines_unlogged_total); off: every line',
    )
      .argParser(parseLogSampling)
      .default(DEFAULT_LOG_SAMPLING, `${DEFAULT_LOG_SAMPLING.initial}:${DEFAULT_LOG_SAMPLING.thereafter}`),
  )
  .parse()
  .opts<Flags>();

const log = bufferedLogger('webhook', { level: flags.logLevel });
const { logger } = log;
const client = flags.kubeconfig
  ? await KubeClient.fromFile(flags.kubeconfig, { userAgent: 'metal-maintenance/webhook' })
  : await KubeClient.fromEnvironment({ userAgent: 'metal-maintenance/webhook' });
const app = new WebhookApp({
  client,
  logger,
  host: flags.host,
  port: flags.port,
  certFiles: {
    certFile: join(flags.certDir, flags.certName),
    keyFile: join(flags.certDir, flags.keyName),
    ...(flags.clientCaFile ? { clientCAFile: flags.clientCaFile } : {}),
  },
  certPollMs: flags.certPollInterval,
  policy: { namespace: flags.policyNamespace, name: flags.policyName, key: flags.policyKey },
  policyWhenMissing: flags.policyWhenMissing,
  ...(flags.opsPort >= 0 ? { ops: { host: flags.opsHost, port: flags.opsPort } } : {}),
  shutdownDelayMs: flags.shutdownDelay,
  syncTimeoutMs: flags.syncTimeout,
  logSampling: flags.logSampling,
});
// The last lines of a stopping process must reach stdout: flush synchronously after stop.
runUntilSignal(
  {
    stop: async () => {
      await app.stop();
      log.close();
    },
  },
  logger,
  flags.shutdownDelay + 15_000,
);
try {
  await app.start();
  log.flush();
} catch (e) {
  logger.fatal({ err: errorMessage(e) }, 'webhook failed to start');
  await app.stop().catch(() => undefined);
  log.close();
  process.exit(1);
}
