// Runs the real admission webhook against the test control plane, envtest style:
//
//   const webhook = await startWebhook(admin, { replicas: 2 });
//   ... API writes now go through the webhook ...
//   await webhook.stop();                          // also in afterAll: it never throws
//
// What it does:
// 1. Makes a CA and a serving certificate with openssl (IP SAN 127.0.0.1). When the control plane has a
//    client certificate for webhooks (scripts/control-plane.sh makes one), each replica trusts only its
//    CA (--client-ca-file), as a deployment whose API server is configured for it would.
// 2. Applies manifests/webhook/rbac.yaml and runs each replica (webhook/main.ts) as its own process
//    under the `webhook` ServiceAccount, with a token from the TokenRequest API.
// 3. Fronts the replicas with a loopback TCP balancer (tcp-balancer.ts), the stand-in for the Service,
//    so a test can kill or restart a replica behind one stable URL.
// 4. Creates the policy ConfigMap from policies/default-policy.yaml unless it exists.
// 5. Registers the Validating/MutatingWebhookConfigurations from manifests/webhook/webhooks.yaml, with
//    clientConfig rewritten to `url: https://127.0.0.1:<balancer>/<path>` + caBundle; rules, failure
//    policies, timeouts and matchConditions stay exactly as shipped.
// 6. Waits until the API server really calls the webhook: a dry-run write of an invalid policy must be
//    refused with METAL_ERR_POLICY_INVALID, and a dry-run ServerMaintenance create must come back mutated.
//
// With E2E_TARGET=cluster it starts nothing: the handle is the installed webhook (installed-webhook.ts).
//
// The configurations are cluster-wide (one webhook per control plane at a time): integration files run
// one at a time (scripts/test.sh --runInBand). stop() deletes the configurations before it stops the
// processes, so a later test never meets a registered webhook that is gone.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { parse, parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../api/schema/meta.js';
import {
  ServerMaintenanceKind,
  type ServerMaintenance,
} from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { KubeClient } from '../../lib/kube/client.js';
import { isAlreadyExists, isNotFound, KubeApiError } from '../../lib/kube/errors.js';
import { Core, resourceOf, type ResourceType } from '../../lib/kube/resources.js';
import { POLICY_CONFIGMAP } from '../../policies/schema.js';
import { REPO_ROOT, webhookClientFiles } from './control-plane.js';
import {
  SYSTEM_NAMESPACE,
  ensureNamespace,
  kubeconfigForBinary,
  spawnBinary,
  type RunningBinary,
} from './processes.js';
import { spawnShipped } from './deployed.js';
import { prepareDist } from './dist.js';
import { startTcpBalancer, type TcpBalancer } from './tcp-balancer.js';
import { installedWebhook } from './installed-webhook.js';
import { inCluster } from './target.js';
import { setTimeout as sleep } from 'node:timers/promises';

export const WEBHOOK_MANIFEST = join(REPO_ROOT, 'manifests', 'webhook', 'webhooks.yaml');
export const DEFAULT_POLICY_FILE = join(REPO_ROOT, 'policies', 'default-policy.yaml');

export interface StartWebhookOptions {
  /** Processes behind the balancer; default 1. */
  replicas?: number;
  /** Seconds between certificate re-reads (the binary's --cert-poll-interval); default 30. */
  certPollSeconds?: number;
  /** Extra environment, e.g. { LOG_LEVEL: 'debug' }. */
  env?: Record<string, string>;
  /** Budget for each replica to start and for the API server to call it; default 60 s. */
  readyTimeoutMs?: number;
  /**
   * Directory of the control plane (scripts/control-plane.sh) whose API server calls the webhook: its
   * client CA becomes the webhook's --client-ca-file, so only that API server is served. Default: the
   * test run's control plane ($METAL_TEST_CP_DIR); none, no client authentication.
   */
  controlPlaneDir?: string;
  /**
   * Start each replica from this run's image files as the shipped Deployment starts it (its command,
   * args and env; e2e/harness/deployed.ts), the harness's flags appended; default: webhook/main.ts
   * through tsx.
   */
  fromDist?: boolean;
}

export interface WebhookReplica {
  index: number;
  binary: RunningBinary | undefined;
  /** HTTPS port (0 while not running). */
  port: number;
  opsPort: number;
}

export interface WebhookHandle {
  /** https://127.0.0.1:<balancer port>: the one address the API server calls. */
  url: string;
  /** PEM of the CA that signed the serving certificate. */
  caPem: string;
  /** The identity the replicas run as. */
  username: string;
  replicas: WebhookReplica[];
  balancer: TcpBalancer;
  /**
   * Kills replica `i` (SIGKILL by default: no graceful shutdown). It stays behind the balancer, which
   * finds out from refused connections, like a pod that dies before its endpoint is removed.
   */
  kill(i: number, signal?: NodeJS.Signals): Promise<void>;
  /** Starts replica `i` again and puts it back behind the balancer once it serves. */
  restart(i: number): Promise<void>;
  /** GET on a replica's HTTPS port (e.g. /readyz, /metrics). */
  get(i: number, path: string): Promise<{ status: number; body: string }>;
  /** Waits until the API server calls the webhook (dry-run probes). */
  waitUntilCalled(timeoutMs?: number): Promise<void>;
  /** Unregisters the configurations, stops the replicas and the balancer. Never throws. */
  stop(): Promise<void>;
}

type WebhookConfiguration = KubeObject & {
  webhooks?: {
    name: string;
    clientConfig: { service?: { path?: string }; url?: string; caBundle?: string };
  }[];
};

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** A CA and a serving certificate for 127.0.0.1, as cert-manager would put them in the Secret. */
export function makeServingCertificate(dir: string): { certDir: string; caPem: string } {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl(
    dir,
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    '/CN=metal-webhook-test-ca',
  );
  openssl(dir, 'req', ...ec, '-keyout', 'tls.key', '-out', 'tls.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(
    join(dir, 'san.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature\n',
  );
  openssl(
    dir,
    'x509',
    '-req',
    '-in',
    'tls.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'tls.crt',
    '-days',
    '2',
    '-extfile',
    'san.ext',
  );
  const certDir = join(dir, 'serving-certs');
  mkdirSync(certDir);
  writeFileSync(join(certDir, 'tls.crt'), readFileSync(join(dir, 'tls.crt')));
  writeFileSync(join(certDir, 'tls.key'), readFileSync(join(dir, 'tls.key')), { mode: 0o600 });
  return { certDir, caPem: readFileSync(join(dir, 'ca.crt'), 'utf8') };
}

/** The shipped configurations, pointed at `url` with `caPem` (envtest's url + caBundle form). */
export function webhookConfigurations(url: string, caPem: string): WebhookConfiguration[] {
  const docs = parseAllDocuments(readFileSync(WEBHOOK_MANIFEST, 'utf8')).map(
    (d) => d.toJS() as WebhookConfiguration,
  );
  return docs.map((doc) => {
    const { annotations: _cm, ...metadata } = doc.metadata;
    return {
      ...doc,
      metadata,
      webhooks: (doc.webhooks ?? []).map((w) => {
        const path = w.clientConfig.service?.path ?? '/';
        return {
          ...w,
          clientConfig: { url: `${url}${path}`, caBundle: Buffer.from(caPem).toString('base64') },
        };
      }),
    };
  });
}

const KIND: Record<string, ResourceType> = {
  ValidatingWebhookConfiguration: Core.ValidatingWebhookConfiguration,
  MutatingWebhookConfiguration: Core.MutatingWebhookConfiguration,
};

async function register(admin: KubeClient, configs: WebhookConfiguration[]): Promise<void> {
  for (const cfg of configs) {
    const res = admin.resource<WebhookConfiguration>(KIND[cfg.kind ?? '']!);
    try {
      await res.create(cfg);
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      const current = await res.get(cfg.metadata.name!);
      await res.replace({
        ...cfg,
        metadata: { ...cfg.metadata, resourceVersion: current.metadata.resourceVersion },
      });
    }
  }
}

async function unregister(admin: KubeClient, configs: WebhookConfiguration[]): Promise<void> {
  for (const cfg of configs) {
    try {
      await admin.resource(KIND[cfg.kind ?? '']!).delete(cfg.metadata.name!);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}

/** Creates the policy ConfigMap from the default document unless one exists (it is never reset). */
export async function ensurePolicyConfigMap(admin: KubeClient): Promise<void> {
  await ensureNamespace(admin, SYSTEM_NAMESPACE);
  const cm = parse(readFileSync(DEFAULT_POLICY_FILE, 'utf8')) as KubeObject;
  try {
    await admin.resource(Core.ConfigMap).create(cm);
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
  }
}

/** The default policy document (the `data` of policies/default-policy.yaml). */
export function defaultPolicyData(): Record<string, string> {
  return (parse(readFileSync(DEFAULT_POLICY_FILE, 'utf8')) as { data: Record<string, string> }).data;
}

/** True once the API server's call reached a replica and came back (both webhook kinds). */
export async function probe(admin: KubeClient): Promise<string | true> {
  try {
    await admin
      .resource<KubeObject & { data?: Record<string, string> }>(Core.ConfigMap)
      .patch(
        POLICY_CONFIGMAP.name,
        { data: { [POLICY_CONFIGMAP.key]: 'grants: {ttl: "not a duration"}\n' } },
        { namespace: POLICY_CONFIGMAP.namespace, dryRun: true },
      );
    return 'a dry-run invalid policy was admitted (validating webhook not called yet)';
  } catch (e) {
    if (!(e instanceof KubeApiError) || !e.message.includes('METAL_ERR_POLICY_INVALID'))
      return `validating probe: ${(e as Error).message}`;
  }
  try {
    const sm = await admin.resource<ServerMaintenance>(resourceOf(ServerMaintenanceKind)).create(
      {
        metadata: { name: 'webhook-probe', namespace: SYSTEM_NAMESPACE },
        spec: { serverRef: { name: 'webhook-probe' }, policy: 'Enforced' },
      },
      { dryRun: true },
    );
    if (sm.spec.approval?.required !== false) return 'mutating webhook not called yet';
  } catch (e) {
    return `mutating probe: ${(e as Error).message}`;
  }
  return true;
}

export async function startWebhook(
  admin: KubeClient,
  options: StartWebhookOptions = {},
): Promise<WebhookHandle> {
  if (inCluster()) return installedWebhook(admin, options);
  const count = options.replicas ?? 1;
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  const dir = mkdtempSync(join(tmpdir(), 'metal-webhook-'));
  const replicas: WebhookReplica[] = Array.from({ length: count }, (_, index) => ({
    index,
    binary: undefined,
    port: 0,
    opsPort: 0,
  }));
  let balancer: TcpBalancer | undefined;
  let configs: WebhookConfiguration[] = [];
  let agent: Agent | undefined;

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      // Order matters: unregister first, so no write meets a registered webhook that is gone.
      await unregister(admin, configs).catch((e: unknown) =>
        console.error(`[webhook harness] unregister: ${String(e)}`),
      );
      await Promise.all(replicas.map(async (r) => r.binary?.stop('SIGTERM', 10_000)));
      await balancer?.close();
      await agent?.close();
      rmSync(dir, { recursive: true, force: true });
    })());

  try {
    const { certDir, caPem } = makeServingCertificate(dir);
    const cpDir = options.controlPlaneDir ?? process.env.METAL_TEST_CP_DIR;
    const client = cpDir ? webhookClientFiles(cpDir) : undefined;
    // Replicas are reached like the API server reaches them: verified against the CA, and with the API
    // server's client certificate when the webhook asks for one.
    const tlsAgent = new Agent({
      connect: {
        ca: caPem,
        ...(client ? { cert: readFileSync(client.cert), key: readFileSync(client.key) } : {}),
      },
      keepAliveTimeout: 1000,
    });
    agent = tlsAgent;
    if (options.fromDist) await prepareDist();
    const { kubeconfig, username } = await kubeconfigForBinary(admin, 'webhook');
    await ensurePolicyConfigMap(admin);

    const launch = async (r: WebhookReplica): Promise<void> => {
      const flags = [
        `--kubeconfig=${kubeconfig}`,
        '--host=127.0.0.1',
        '--port=0',
        `--cert-dir=${certDir}`,
        `--cert-poll-interval=${options.certPollSeconds ?? 30}`,
        '--ops-host=127.0.0.1',
        '--ops-port=0',
        '--sync-timeout=60',
        ...(client ? [`--client-ca-file=${client.ca}`] : []),
      ];
      const name = `webhook-${r.index}`;
      const binary = options.fromDist
        ? spawnShipped('webhook', flags, { name, env: options.env ?? {} })
        : spawnBinary(name, 'webhook/main.ts', flags, options.env ?? {});
      r.binary = binary;
      const line = await binary.waitForLog(
        (l) => l.msg === 'webhook serving' || l.msg === 'webhook failed to start',
        readyTimeoutMs,
      );
      if (line.msg !== 'webhook serving')
        throw new Error(`webhook-${r.index} failed to start: ${String(line.err)}`);
      r.port = Number(line.port);
      r.opsPort = Number(line.opsPort);
    };
    await Promise.all(replicas.map(launch));
    balancer = await startTcpBalancer(replicas.map((r) => r.port));
    const url = `https://127.0.0.1:${balancer.port}`;
    configs = webhookConfigurations(url, caPem);
    await register(admin, configs);

    const get = async (i: number, path: string) => {
      const r = replicas[i]!;
      const res = await request(`https://127.0.0.1:${r.port}${path}`, { dispatcher: tlsAgent });
      return { status: res.statusCode, body: await res.body.text() };
    };
    const waitUntilCalled = async (timeoutMs = readyTimeoutMs) => {
      const deadline = Date.now() + timeoutMs;
      let last: string | true = 'not probed';
      while (Date.now() < deadline) {
        last = await probe(admin);
        if (last === true) return;
        await sleep(100);
      }
      throw new Error(`the API server did not call the webhook within ${timeoutMs} ms: ${last}`);
    };
    const bal = balancer;
    const handle: WebhookHandle = {
      url,
      caPem,
      username,
      replicas,
      balancer: bal,
      async kill(i, signal = 'SIGKILL') {
        await replicas[i]!.binary?.stop(signal, 10_000);
      },
      async restart(i) {
        const r = replicas[i]!;
        await r.binary?.stop('SIGTERM', 10_000);
        await launch(r);
        bal.setBackend(i, r.port);
      },
      get,
      waitUntilCalled,
      stop,
    };
    await waitUntilCalled();
    return handle;
  } catch (e) {
    await stop();
    throw e;
  }
}
