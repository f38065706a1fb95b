// cert-manager for real next to the test control plane, and the two pieces of a cluster that the
// control plane does not have:
//
//   const cm = await startCertManager(adminKubeconfig());   // its CRDs, controller and cainjector
//   const vol = await kubeletSecretVolume(admin, ns, 'metal-maintenance-webhook-tls', dir);
//   const svc = await externalNameService(admin, ns, 'metal-maintenance-webhook', '127.0.0.53');
//   ... vol.dir is what the webhook pod would mount; svc routes the API server's service calls ...
//   await vol.stop(); await svc.delete(); await cm.stop();
//
// cert-manager's controller and cainjector are built from the Go module proxy by
// scripts/lib/cert-manager.sh and run as processes with the admin kubeconfig (they are the cluster's
// certificate infrastructure, not ours: their RBAC is cert-manager's concern).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { writeVolumeVersion } from '../stand-in/kubelet/atomic-writer.js';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '../../api/schema/meta.js';
import type { KubeClient } from '../../lib/kube/client.js';
import { isAlreadyExists, isNotFound } from '../../lib/kube/errors.js';
import { Core, type ResourceType } from '../../lib/kube/resources.js';
import { kubectl, preparedDir } from './k8s-tools.js';
import { stopChild } from './processes.js';
import { execFileSync } from 'node:child_process';
import { waitFor } from './env.js';
import { REPO_ROOT } from './control-plane.js';

export interface CertManager {
  dir: string;
  stop(): Promise<void>;
}

type SecretObject = KubeObject & { data?: Record<string, string> };

const ServiceResource: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'services',
  kind: 'Service',
  namespaced: true,
};

function spawnLogged(
  name: string,
  bin: string,
  args: string[],
): { proc: ChildProcess; exited: Promise<number | null> } {
  const proc = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let tail = '';
  proc.stderr?.on('data', (d: Buffer) => {
    tail = (tail + d.toString()).slice(-4096);
    if (process.env.METAL_TEST_LOGS) process.stderr.write(`[${name}] ${d.toString()}`);
  });
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code) => {
      if (code !== 0 && code !== null) console.error(`[${name}] exited ${code}: ${tail}`);
      resolve(code);
    }),
  );
  const kill = () => proc.kill('SIGKILL');
  process.once('exit', kill);
  void exited.then(() => process.off('exit', kill));
  return { proc, exited };
}

/** Installs cert-manager's CRDs (from its module) and runs its controller and cainjector. */
export async function startCertManager(kubeconfig: string): Promise<CertManager> {
  const dir = preparedDir('cert-manager.sh');
  const crds = execFileSync('bash', [join(REPO_ROOT, 'scripts', 'lib', 'cert-manager.sh'), '--crds-dir'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 5 * 60_000,
  }).trim();
  // Server-side: the Certificate CRD is larger than client-side apply's annotation allows.
  const applied = await kubectl(kubeconfig, ['apply', '--server-side', '--force-conflicts', '-f', crds]);
  if (applied.code !== 0) throw new Error(`installing cert-manager's CRDs from ${crds}: ${applied.stderr}`);
  // kubectl wait fails at once, instead of waiting, while a just-created CRD has no
  // status.conditions yet ("accessor error: <nil>"), so it is asked again until the deadline.
  let lastWait = '';
  await waitFor(
    "cert-manager's CRDs Established",
    async () => {
      const r = await kubectl(kubeconfig, [
        'wait',
        '--for=condition=Established',
        '--timeout=10s',
        'crd/certificates.cert-manager.io',
        'crd/certificaterequests.cert-manager.io',
        'crd/issuers.cert-manager.io',
      ]);
      lastWait = r.stderr;
      return r.code === 0;
    },
    { timeoutMs: 60_000 },
  ).catch((e: Error) => {
    throw new Error(`cert-manager CRDs not established: ${e.message}; kubectl: ${lastWait}`, { cause: e });
  });
  const controller = spawnLogged('cert-manager-controller', join(dir, 'controller'), [
    `--kubeconfig=${kubeconfig}`,
    '--metrics-address=127.0.0.1:0',
  ]);
  const cainjector = spawnLogged('cert-manager-cainjector', join(dir, 'cainjector'), [
    `--kubeconfig=${kubeconfig}`,
  ]);
  return {
    dir,
    async stop() {
      await Promise.all([
        stopChild(controller.proc, controller.exited, 'SIGTERM', 10_000),
        stopChild(cainjector.proc, cainjector.exited, 'SIGTERM', 10_000),
      ]);
    },
  };
}

export interface SecretVolume {
  /** The mount point: KEY files, each a symlink through ..data, as the kubelet lays them out. */
  dir: string;
  /** Secret resourceVersions written so far (the first is the initial sync). */
  synced: string[];
  stop(): Promise<void>;
}

/**
 * Plays the kubelet's Secret-volume sync: polls the Secret every `periodMs` and, when it changed,
 * writes its keys as a new version with the kubelet's atomic writer (e2e/stand-in/kubelet). Resolves
 * once the first sync wrote every key of `keys`.
 */
export async function kubeletSecretVolume(
  admin: KubeClient,
  namespace: string,
  name: string,
  dir: string,
  opts: { keys?: string[]; periodMs?: number; timeoutMs?: number } = {},
): Promise<SecretVolume> {
  const keys = opts.keys ?? ['tls.crt', 'tls.key', 'ca.crt'];
  const secrets = admin.resource<SecretObject>(Core.Secret);
  mkdirSync(dir, { recursive: true });
  const synced: string[] = [];
  const write = (secret: SecretObject) => {
    const files = new Map(
      Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')] as const),
    );
    writeVolumeVersion(dir, files, 0o600);
    synced.push(secret.metadata.resourceVersion ?? '');
  };
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  for (;;) {
    const s = await secrets.get(name, namespace).catch((e: unknown) => {
      if (isNotFound(e)) return undefined;
      throw e;
    });
    if (s && keys.every((k) => s.data?.[k])) {
      write(s);
      break;
    }
    if (Date.now() > deadline)
      throw new Error(`Secret ${namespace}/${name} did not get keys ${keys.join(', ')} in time`);
    await sleep(250);
  }
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await sleep(opts.periodMs ?? 1000);
      if (stopped) break;
      const s = await secrets.get(name, namespace).catch(() => undefined);
      if (s && s.metadata.resourceVersion !== synced.at(-1) && keys.every((k) => s.data?.[k])) write(s);
    }
  })();
  return {
    dir,
    synced,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/**
 * The Service the shipped webhook configurations name, as type ExternalName pointing at `host`: the
 * API server resolves a service reference to `https://<externalName>:<port>` and still verifies the
 * certificate against `<name>.<namespace>.svc`. Our control plane has no kube-proxy, so this is how
 * its calls reach a loopback listener while clientConfig.service stays exactly as shipped.
 */
export async function externalNameService(
  admin: KubeClient,
  namespace: string,
  name: string,
  host: string,
): Promise<{ delete(): Promise<void> }> {
  const services = admin.resource<KubeObject>(ServiceResource);
  const svc = {
    metadata: { name, namespace, labels: { 'app.kubernetes.io/part-of': 'metal-maintenance' } },
    spec: { type: 'ExternalName', externalName: host },
  };
  try {
    await services.create(svc);
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
    await services.delete(name, { namespace });
    await services.create(svc);
  }
  return {
    async delete() {
      await services.delete(name, { namespace }).catch((e: unknown) => {
        if (!isNotFound(e)) throw e;
      });
    },
  };
}
