// Two webhook replicas, in either target: each is ready and counts the API server's calls, and with
// one killed the other answers every call until the first is back. Locally they sit behind the
// harness's balancer; in cluster mode (E2E_TARGET=cluster) they are the installed Deployment's pods
// behind its Service, killed by deleting a pod and read through the API server's pod proxy.
import { adminClient } from '../../../e2e/harness/env.js';
import { installNamespace } from '../../../e2e/harness/installed.js';
import { startWebhook, type WebhookHandle } from '../../../e2e/harness/webhook.js';
import type { KubeClient } from '../../../lib/kube/client.js';

describe('webhook replicas', () => {
  let admin: KubeClient;
  let webhook: WebhookHandle;
  beforeAll(async () => {
    admin = await adminClient();
    webhook = await startWebhook(admin, { replicas: 2 });
  }, 150_000);
  afterAll(async () => {
    await webhook?.stop();
    await admin?.close();
  });

  test('each replica is ready under the webhook ServiceAccount and counts what the API server sends', async () => {
    expect(webhook.username).toBe(`system:serviceaccount:${installNamespace()}:webhook`);
    for (const i of [0, 1]) {
      const ready = await webhook.get(i, '/readyz');
      expect(ready.status).toBe(200);
      expect(JSON.parse(ready.body)).toEqual({ ready: true, cachesSynced: true, policyLoaded: true });
    }
    // The readiness probes were dry-run policy writes the API server sent to some replica.
    await webhook.waitUntilCalled(30_000);
    const metrics = (await webhook.get(0, '/metrics')).body + (await webhook.get(1, '/metrics')).body;
    expect(metrics).toMatch(/metal_webhook_decisions_total\{[^}]*rule="policy"[^}]*result="denied"/);
  });

  test('with one replica killed the other answers every call, and the first comes back ready', async () => {
    await webhook.kill(0);
    for (let i = 0; i < 5; i++) await webhook.waitUntilCalled(30_000);
    await webhook.restart(0);
    expect((await webhook.get(0, '/readyz')).status).toBe(200);
    await webhook.waitUntilCalled(30_000);
  }, 180_000);
});
