// The webhook harness itself: replicas under their own identity, the API server calling them through
// the balancer (the only caller they serve), a killed replica behind it, and a teardown that leaves no
// configuration behind.
import { Agent, request } from 'undici';
import { adminClient } from '../../../e2e/harness/env.js';
import { startWebhook, type WebhookHandle } from '../../../e2e/harness/webhook.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import { Core } from '../../../lib/kube/resources.js';
import { localTargetOnly } from '../../../e2e/harness/target.js';

localTargetOnly(
  'test/integration/webhook/harness.int.test.ts',
  "it tests the local webhook harness itself (replicas behind the test's balancer, stop() unregistering the configurations)",
);

describe('webhook harness', () => {
  let admin: KubeClient;
  let webhook: WebhookHandle | undefined;
  beforeAll(async () => {
    admin = await adminClient();
  });
  afterAll(async () => {
    await webhook?.stop();
    await admin.close();
  });

  test('two replicas behind the balancer survive one being killed; stop unregisters', async () => {
    webhook = await startWebhook(admin, { replicas: 2 });
    expect(webhook.username).toBe('system:serviceaccount:metal-maintenance-system:webhook');
    for (const i of [0, 1]) {
      const ready = await webhook.get(i, '/readyz');
      expect(ready.status).toBe(200);
      expect(JSON.parse(ready.body)).toEqual({ ready: true, cachesSynced: true, policyLoaded: true });
    }
    // The probes went through the API server: decisions were counted on some replica.
    const metrics = (await webhook.get(0, '/metrics')).body + (await webhook.get(1, '/metrics')).body;
    expect(metrics).toMatch(/metal_webhook_decisions_total\{[^}]*rule="policy"[^}]*result="denied"/);

    // Only the API server is served (it presents the control plane's webhook client certificate): any
    // other caller, here one that trusts the serving certificate but has no client certificate, gets 401.
    const stranger = new Agent({ connect: { ca: webhook.caPem } });
    try {
      const res = await request(`https://127.0.0.1:${webhook.replicas[0]!.port}/validate/eviction`, {
        method: 'POST',
        dispatcher: stranger,
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(res.statusCode).toBe(401);
      expect(await res.body.text()).toContain('METAL_ERR_UNAUTHENTICATED: no client certificate');
    } finally {
      await stranger.close();
    }
    expect((await webhook.get(0, '/metrics')).body).toMatch(
      /metal_webhook_unauthenticated_requests_total\{[^}]*reason="NoClientCertificate"[^}]*\} 1\n/,
    );

    await webhook.kill(0);
    // Every call now lands on replica 1, whichever connection the API server opens.
    for (let i = 0; i < 5; i++) await webhook.waitUntilCalled(10_000);
    await webhook.restart(0);
    expect((await webhook.get(0, '/readyz')).status).toBe(200);
    await webhook.waitUntilCalled(10_000);

    await webhook.stop();
    for (const [rt, name] of [
      [Core.ValidatingWebhookConfiguration, 'metal-maintenance-validating'],
      [Core.MutatingWebhookConfiguration, 'metal-maintenance-mutating'],
    ] as const) {
      await expect(admin.resource(rt).get(name)).rejects.toMatchObject({ statusCode: 404 });
    }
    for (const r of webhook.replicas)
      expect(r.binary?.proc.exitCode ?? r.binary?.proc.signalCode).not.toBeNull();
  }, 120_000);
});
