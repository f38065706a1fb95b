// The webhook's TLS as a cluster with cert-manager gives it: cert-manager's real controller and
// cainjector (built from its published module) issue our shipped Issuers and Certificates
// (manifests/webhook/certificate.yaml, applied unchanged) into the Secret, inject the CA into the
// shipped webhook configurations (manifests/webhook/webhooks.yaml, applied unchanged, service
// references and all), and the webhook serves the Secret's files as the kubelet mounts them. A
// renewal while admission requests flow fails none of them.
//
// The API server reaches `metal-maintenance-webhook.metal-maintenance-system.svc` through an
// ExternalName Service pointing at a loopback address where a TCP balancer listens on 443 (the
// service port the shipped configurations use); it verifies the certificate against the service's
// DNS name, as in a cluster. Binding 443 needs root (CI runs as root).
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '../../../api/schema/meta.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import { Core } from '../../../lib/kube/resources.js';
import {
  externalNameService,
  kubeletSecretVolume,
  startCertManager,
  type CertManager,
  type SecretVolume,
} from '../../../e2e/harness/cert-manager.js';
import { REPO_ROOT, webhookClientFiles } from '../../../e2e/harness/control-plane.js';
import { spawnShipped } from '../../../e2e/harness/deployed.js';
import { SETUP_TIMEOUT_MS, prepareDist } from '../../../e2e/harness/dist.js';
import { adminClient, waitFor } from '../../../e2e/harness/env.js';
import { kubectl } from '../../../e2e/harness/k8s-tools.js';
import {
  SYSTEM_NAMESPACE,
  adminKubeconfig,
  kubeconfigForBinary,
  type RunningBinary,
} from '../../../e2e/harness/processes.js';
import { startTcpBalancer, type TcpBalancer } from '../../../e2e/harness/tcp-balancer.js';
import { ensurePolicyConfigMap, probe, WEBHOOK_MANIFEST } from '../../../e2e/harness/webhook.js';
import { localTargetOnly } from '../../../e2e/harness/target.js';

localTargetOnly(
  'test/integration/webhook/cert-manager.e2e.test.ts',
  'it installs cert-manager and the webhook itself (an ExternalName Service to a balancer on port 443); in cluster mode both are the installed ones, and every cluster-mode file already goes through the certificate cert-manager issued and injected',
);

const CERTIFICATE_MANIFEST = join(REPO_ROOT, 'manifests', 'webhook', 'certificate.yaml');
const SERVICE = 'metal-maintenance-webhook';
const SECRET = 'metal-maintenance-webhook-tls';
const SERVER_NAME = `${SERVICE}.${SYSTEM_NAMESPACE}.svc`;

type Certificate = KubeObject & {
  status?: {
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    revision?: number;
  };
};
type Secret = KubeObject & { data?: Record<string, string> };
type WebhookConfiguration = KubeObject & {
  webhooks: { name: string; clientConfig: { caBundle?: string } }[];
};

const certificates = (c: KubeClient) =>
  c.resource<Certificate>({
    group: 'cert-manager.io',
    version: 'v1',
    plural: 'certificates',
    kind: 'Certificate',
    namespaced: true,
  });

const fingerprint = (pem: string | Buffer) => new X509Certificate(pem).fingerprint256;

/** The certificate a TLS handshake at host:443 presents for the service's DNS name. */
async function servedFingerprint(host: string, ca: string, client?: { cert: Buffer; key: Buffer }) {
  return await new Promise<string>((resolve, reject) => {
    const socket = connect({ host, port: 443, servername: SERVER_NAME, ca, ...client }, () => {
      const peer = socket.getPeerX509Certificate();
      socket.destroy();
      if (peer) resolve(peer.fingerprint256);
      else reject(new Error('no peer certificate'));
    });
    socket.setTimeout(5000, () => socket.destroy(new Error('TLS handshake timed out')));
    socket.once('error', reject);
  });
}

describe('cert-manager issues, injects and renews the webhook certificate', () => {
  let admin: KubeClient;
  let cm: CertManager | undefined;
  let volume: SecretVolume | undefined;
  let balancer: TcpBalancer | undefined;
  let service: { delete(): Promise<void> } | undefined;
  let webhook: RunningBinary | undefined;
  let dir: string;
  // A loopback address of our own, so port 443 is free whatever else runs on the machine.
  const host = `127.${1 + Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${2 + Math.floor(Math.random() * 250)}`;
  const kubeconfig = adminKubeconfig();

  beforeAll(async () => {
    admin = await adminClient();
    dir = mkdtempSync(join(tmpdir(), 'metal-cert-manager-'));
    // The webhook runs from the image's files as its Deployment starts it; their build may come first.
    await prepareDist();
    cm = await startCertManager(kubeconfig);
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await kubectl(kubeconfig, ['delete', '--ignore-not-found', '--wait=false', '-f', WEBHOOK_MANIFEST]);
    await webhook?.stop('SIGTERM', 10_000);
    await balancer?.close();
    await service?.delete();
    await volume?.stop();
    await kubectl(kubeconfig, ['delete', '--ignore-not-found', '--wait=false', '-f', CERTIFICATE_MANIFEST]);
    for (const s of [SECRET, 'metal-maintenance-webhook-ca'])
      await admin
        ?.resource(Core.Secret)
        .delete(s, { namespace: SYSTEM_NAMESPACE })
        .catch(() => undefined);
    await cm?.stop();
    await admin?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('issues the shipped Certificate into its Secret, signed by the shipped CA', async () => {
    await kubectl(kubeconfig, ['create', 'namespace', SYSTEM_NAMESPACE]);
    const applied = await kubectl(kubeconfig, ['apply', '-f', CERTIFICATE_MANIFEST]);
    expect(applied.stderr).toBe('');
    const ready = await waitFor(
      'Certificate metal-maintenance-webhook Ready',
      async () => {
        const c = await certificates(admin).get('metal-maintenance-webhook', SYSTEM_NAMESPACE);
        const cond = c.status?.conditions?.find((x) => x.type === 'Ready');
        // Ready can be written a moment before the issuing controller records the revision.
        return cond?.status === 'True' && c.status?.revision !== undefined ? c : undefined;
      },
      { timeoutMs: 90_000 },
    );
    expect(ready.status?.revision).toBe(1);
    const secret = await admin.resource<Secret>(Core.Secret).get(SECRET, SYSTEM_NAMESPACE);
    const pem = (k: string) => Buffer.from(secret.data?.[k] ?? '', 'base64').toString('utf8');
    const leaf = new X509Certificate(pem('tls.crt'));
    const ca = new X509Certificate(pem('ca.crt'));
    expect(leaf.subjectAltName).toContain(`DNS:${SERVER_NAME}`);
    expect(ca.ca).toBe(true);
    expect(ca.subject).toContain('CN=metal-maintenance-webhook-ca');
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.checkIssued(ca)).toBe(true);
  }, 120_000);

  it('injects the CA into both shipped webhook configurations, and the API server calls the webhook', async () => {
    const certDir = join(dir, 'serving-certs');
    // The kubelet's part: the Secret as the webhook pod's volume, kept in sync.
    volume = await kubeletSecretVolume(admin, SYSTEM_NAMESPACE, SECRET, certDir, { periodMs: 1000 });
    const client = webhookClientFiles(process.env.METAL_TEST_CP_DIR ?? '');
    const { kubeconfig: webhookKubeconfig } = await kubeconfigForBinary(admin, 'webhook');
    await ensurePolicyConfigMap(admin);
    // The Deployment's own args, with the kubelet-synced Secret directory as its --cert-dir.
    webhook = spawnShipped(
      'webhook',
      [
        `--kubeconfig=${webhookKubeconfig}`,
        '--host=127.0.0.1',
        '--port=0',
        `--cert-dir=${certDir}`,
        '--cert-poll-interval=1',
        '--ops-host=127.0.0.1',
        '--ops-port=0',
        '--sync-timeout=60',
        ...(client ? [`--client-ca-file=${client.ca}`] : []),
      ],
      { name: 'webhook-cert-manager' },
    );
    const line = await webhook.waitForLog((l) => l.msg === 'webhook serving', 60_000);
    balancer = await startTcpBalancer([Number(line.port)], { host, port: 443 });
    service = await externalNameService(admin, SYSTEM_NAMESPACE, SERVICE, host);

    const applied = await kubectl(kubeconfig, ['apply', '-f', WEBHOOK_MANIFEST]);
    expect(applied.code).toBe(0);
    const secret = await admin.resource<Secret>(Core.Secret).get(SECRET, SYSTEM_NAMESPACE);
    const caBundle = secret.data?.['ca.crt'];
    for (const [kind, name] of [
      [Core.ValidatingWebhookConfiguration, 'metal-maintenance-validating'],
      [Core.MutatingWebhookConfiguration, 'metal-maintenance-mutating'],
    ] as const) {
      const cfg = await waitFor(
        `cainjector to inject the CA into ${name}`,
        async () => {
          const c = await admin.resource<WebhookConfiguration>(kind).get(name);
          return c.webhooks.every((w) => w.clientConfig.caBundle === caBundle) ? c : undefined;
        },
        { timeoutMs: 60_000 },
      );
      expect(cfg.webhooks.length).toBeGreaterThan(0);
    }

    const deadline = Date.now() + 60_000;
    let last: string | true = 'not probed';
    while (Date.now() < deadline && (last = await probe(admin)) !== true) await sleep(200);
    expect(last).toBe(true);
    const caPem = Buffer.from(caBundle ?? '', 'base64').toString('utf8');
    const tlsClient = client ? { cert: readFileSync(client.cert), key: readFileSync(client.key) } : undefined;
    expect(await servedFingerprint(host, caPem, tlsClient)).toBe(
      fingerprint(readFileSync(join(certDir, 'tls.crt'))),
    );
  }, 150_000);

  it('renews while admission requests flow, and fails none of them', async () => {
    const before = await admin.resource<Secret>(Core.Secret).get(SECRET, SYSTEM_NAMESPACE);
    const oldLeaf = Buffer.from(before.data?.['tls.crt'] ?? '', 'base64');
    const caPem = Buffer.from(before.data?.['ca.crt'] ?? '', 'base64').toString('utf8');
    const client = webhookClientFiles(process.env.METAL_TEST_CP_DIR ?? '');
    const tlsClient = client ? { cert: readFileSync(client.cert), key: readFileSync(client.key) } : undefined;

    // Dry-run admission round trips (validating and mutating) back to back, each needing the API
    // server to complete a TLS handshake with the webhook (keep-alive is cut by the balancer swap).
    let stop = false;
    const results = { ok: 0, failed: [] as string[] };
    const flow = (async () => {
      while (!stop) {
        const r = await probe(admin);
        if (r === true) results.ok++;
        else results.failed.push(r);
      }
    })();
    await sleep(2000);

    // What `cmctl renew` does: mark the Certificate as issuing, cert-manager re-issues it.
    const crt = await certificates(admin).get('metal-maintenance-webhook', SYSTEM_NAMESPACE);
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await certificates(admin).replaceStatus({
      ...crt,
      status: {
        ...crt.status,
        conditions: [
          ...(crt.status?.conditions ?? []).filter((c) => c.type !== 'Issuing'),
          {
            type: 'Issuing',
            status: 'True',
            reason: 'ManuallyTriggered',
            message: 'renewal triggered by the test',
            lastTransitionTime: now,
          } as never,
        ],
      },
    });
    const renewed = await waitFor(
      'the renewed certificate in the Secret',
      async () => {
        const s = await admin.resource<Secret>(Core.Secret).get(SECRET, SYSTEM_NAMESPACE);
        const leaf = Buffer.from(s.data?.['tls.crt'] ?? '', 'base64');
        return leaf.length > 0 && !leaf.equals(oldLeaf) ? s : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const newLeaf = Buffer.from(renewed.data?.['tls.crt'] ?? '', 'base64');
    // Same CA: the caBundle the API server holds stays valid through the renewal.
    expect(renewed.data?.['ca.crt']).toBe(before.data?.['ca.crt']);
    await waitFor(
      'the webhook to serve the renewed certificate',
      async () => (await servedFingerprint(host, caPem, tlsClient)) === fingerprint(newLeaf) || undefined,
      { timeoutMs: 30_000 },
    );
    await sleep(3000);
    stop = true;
    await flow;

    expect(volume!.synced.length).toBeGreaterThanOrEqual(2);
    expect(fingerprint(newLeaf)).not.toBe(fingerprint(oldLeaf));
    expect(results.failed).toEqual([]);
    expect(results.ok).toBeGreaterThan(10);
  }, 150_000);
});
