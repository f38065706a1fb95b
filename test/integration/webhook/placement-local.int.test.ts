// Placement (WS1), the part that needs the local world (placement.int.test.ts is the rest): a server in
// maintenance, as the maintenance controller projects it onto the Server's status, cannot be bound;
// with the only webhook replica down, bindings fail closed while unrelated writes never call it.
import { adminClient, freshNamespace, uniqueName } from '../../../e2e/harness/env.js';
import { startWebhook, type WebhookHandle } from '../../../e2e/harness/webhook.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import { KubeApiError } from '../../../lib/kube/errors.js';
import {
  claim,
  claims,
  expectDenied,
  server,
  servers,
  tenantIdentity,
  whenCached,
  type Identity,
} from './helpers.js';
import { localTargetOnly } from '../../../e2e/harness/target.js';

localTargetOnly(
  'test/integration/webhook/placement-local.int.test.ts',
  "it fakes a maintenance by writing the Server's status as the maintenance controller projects it (the installed controller writes it back), and it stops the only webhook replica (the installed Deployment runs two, and its ReplicaSet replaces a deleted pod at once)",
);

describe('placement (local world)', () => {
  let admin: KubeClient;
  let webhook: WebhookHandle;
  let ns: string;
  let tenant: Identity;

  beforeAll(async () => {
    admin = await adminClient();
    webhook = await startWebhook(admin, { replicas: 1 });
    ns = await freshNamespace(admin, 'placement');
    tenant = await tenantIdentity(admin, ns);
  }, 90_000);
  afterAll(async () => {
    await webhook?.stop();
    await tenant?.client.close();
    await admin?.close();
  });

  const bindServer = (s: string, claimName: string, dryRun = false) =>
    servers(admin).patch(s, { spec: { serverClaimRef: { namespace: ns, name: claimName } } }, { dryRun });

  test('a server in maintenance cannot be bound', async () => {
    const s = await servers(admin).create(server(uniqueName('srv')));
    // As the maintenance controller projects it (Server status is not guarded by the webhook).
    await servers(admin).patch(
      s.metadata.name!,
      { status: { maintenance: { state: 'InMaintenance' } } },
      { subresource: 'status' },
    );
    const c = await claims(tenant.client).create(claim(ns, uniqueName('claim')));
    await whenCached(async () => {
      try {
        return await expectDenied(
          () => bindServer(s.metadata.name!, c.metadata.name!),
          'METAL_ERR_SERVER_IN_MAINTENANCE',
          403,
        );
      } catch (e) {
        // Until the cache sees the status, the binding would pass: undo and retry.
        await servers(admin)
          .patch(s.metadata.name!, { spec: { serverClaimRef: null } })
          .catch(() => undefined);
        throw new KubeApiError('PATCH', '', 429, { message: `METAL_ERR_SERVER_NOT_FOUND (${String(e)})` });
      }
    });
  });

  test('with the webhook down, bindings fail closed while unrelated writes never call it', async () => {
    const s = await servers(admin).create(server(uniqueName('srv')));
    await webhook.kill(0);
    try {
      // Labels, the cordon, a claim without serverRef: the matchConditions keep these off the webhook.
      await servers(admin).patch(s.metadata.name!, { metadata: { labels: { rack: 'r9' } } });
      await servers(admin).patch(s.metadata.name!, { spec: { unclaimable: true } });
      await claims(tenant.client).create(claim(ns, uniqueName('claim')));
      // A binding write needs the webhook: failurePolicy Fail refuses it.
      const err = await bindServer(s.metadata.name!, 'someone').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(KubeApiError);
      expect((err as KubeApiError).status.message).toContain('failed calling webhook');
      expect((await servers(admin).get(s.metadata.name!)).spec.serverClaimRef).toBeUndefined();
    } finally {
      await webhook.restart(0);
    }
    await webhook.waitUntilCalled();
  });
});
