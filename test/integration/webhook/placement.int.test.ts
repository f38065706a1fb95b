// Placement (WS1) through real API writes: binding a claim to a cordoned or tainted server is refused,
// whoever binds (metal-operator's admin identity binding the Server, a tenant setting the claim's
// serverRef); a claim created against a cordoned server is admitted with a warning; the cordon itself
// never depends on the webhook. Runs in both targets; the in-maintenance and webhook-down cases need
// the local world (placement-local.int.test.ts).
import { adminClient, freshNamespace, uniqueName } from '../../../e2e/harness/env.js';
import { startWebhook, type WebhookHandle } from '../../../e2e/harness/webhook.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import { KubeApiError } from '../../../lib/kube/errors.js';
import { MAINTENANCE_TAINT_KEY } from '../../../contract/names.js';
import {
  claim,
  claims,
  expectDenied,
  rawRequest,
  server,
  servers,
  tenantIdentity,
  whenCached,
  type Identity,
} from './helpers.js';

describe('placement', () => {
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

  test('binding a claim to a cordoned server is refused; to a free one admitted', async () => {
    const cordoned = await servers(admin).create(server(uniqueName('srv'), {}, { unclaimable: true }));
    const free = await servers(admin).create(server(uniqueName('srv')));
    const c = await claims(tenant.client).create(claim(ns, uniqueName('claim')));
    const err = await whenCached(() =>
      expectDenied(
        () => bindServer(cordoned.metadata.name!, c.metadata.name!),
        'METAL_ERR_SERVER_UNCLAIMABLE',
        403,
      ),
    );
    expect(err.status.details?.causes?.[0]?.message).toContain('cordoned');
    expect((await servers(admin).get(cordoned.metadata.name!)).spec.serverClaimRef).toBeUndefined();
    const bound = await whenCached(() => bindServer(free.metadata.name!, c.metadata.name!));
    expect(bound.spec.serverClaimRef?.name).toBe(c.metadata.name);
  });

  test('a claim tolerating the maintenance taint is refused naming the field, on create and on update', async () => {
    const reserved = { key: MAINTENANCE_TAINT_KEY, operator: 'Exists' as const };
    const err = await expectDenied(
      () => claims(tenant.client).create(claim(ns, uniqueName('claim'), { tolerations: [reserved] })),
      'METAL_ERR_TOLERATION_RESERVED',
      403,
    );
    expect(err.status.details?.causes).toEqual([
      expect.objectContaining({ field: 'spec.tolerations[0].key', reason: 'FieldValueForbidden' }),
    ]);
    const ok = await claims(tenant.client).create(
      claim(ns, uniqueName('claim'), { tolerations: [{ key: 'example.com/other', operator: 'Exists' }] }),
    );
    await expectDenied(
      () =>
        claims(tenant.client).patch(
          ok.metadata.name!,
          { spec: { tolerations: [reserved] } },
          { namespace: ns },
        ),
      'METAL_ERR_TOLERATION_RESERVED',
      403,
    );
    expect((await claims(admin).get(ok.metadata.name!, ns)).spec.tolerations).toEqual([
      { key: 'example.com/other', operator: 'Exists' },
    ]);
  });

  test('a dry-run binding is judged the same way and stores nothing', async () => {
    const cordoned = await servers(admin).create(server(uniqueName('srv'), {}, { unclaimable: true }));
    const free = await servers(admin).create(server(uniqueName('srv')));
    await whenCached(() =>
      expectDenied(
        () => bindServer(cordoned.metadata.name!, 'anyone', true),
        'METAL_ERR_SERVER_UNCLAIMABLE',
        403,
      ),
    );
    const dry = await whenCached(() => bindServer(free.metadata.name!, 'anyone', true));
    expect(dry.spec.serverClaimRef?.name).toBe('anyone');
    expect((await servers(admin).get(free.metadata.name!)).spec.serverClaimRef).toBeUndefined();
  });

  test('a NoBind taint blocks a claim that does not tolerate it, not one that does', async () => {
    const taint = { key: 'example.com/gpu', value: 'broken', effect: 'NoBind' as const };
    const tainted = await servers(admin).create(server(uniqueName('srv'), {}, { taints: [taint] }));
    const intolerant = await claims(tenant.client).create(claim(ns, uniqueName('claim')));
    const tolerant = await claims(tenant.client).create(
      claim(ns, uniqueName('claim'), { tolerations: [{ key: 'example.com/gpu', operator: 'Exists' }] }),
    );
    await whenCached(() =>
      expectDenied(
        () => bindServer(tainted.metadata.name!, intolerant.metadata.name!),
        'METAL_ERR_SERVER_TAINTED',
        403,
      ),
    );
    // The webhook reads the claim's tolerations from its cache: wait until it has the tolerant claim.
    const bound = await whenCached(async () => {
      try {
        return await bindServer(tainted.metadata.name!, tolerant.metadata.name!);
      } catch (e) {
        if (e instanceof KubeApiError && e.status.message?.includes('METAL_ERR_SERVER_TAINTED'))
          throw new KubeApiError('PATCH', '', 429, { message: 'METAL_ERR_CLAIM_NOT_FOUND (cache lag)' });
        throw e;
      }
    });
    expect(bound.spec.serverClaimRef?.name).toBe(tolerant.metadata.name);
  });

  test('a tenant creating a claim for a cordoned server is admitted with a warning and stays unbound', async () => {
    const cordoned = await servers(admin).create(server(uniqueName('srv'), {}, { unclaimable: true }));
    const name = uniqueName('claim');
    const res = await whenCached(async () => {
      const r = await rawRequest(
        tenant.kubeconfig,
        'POST',
        `/apis/metal.ironcore.dev/v1alpha1/namespaces/${ns}/serverclaims`,
        {
          apiVersion: 'metal.ironcore.dev/v1alpha1',
          kind: 'ServerClaim',
          ...claim(ns, name, { serverRef: { name: cordoned.metadata.name! } }),
        },
      );
      // The server may not be in the cache yet: then the warning says it does not exist.
      if (r.warnings.some((w) => w.includes('does not exist'))) {
        await claims(admin).delete(name, { namespace: ns });
        throw new KubeApiError('POST', '', 429, { message: 'METAL_ERR_SERVER_NOT_FOUND' });
      }
      return r;
    });
    expect(res.status).toBe(201);
    expect(res.warnings.join('\n')).toContain('stays unbound');
    expect(res.warnings.join('\n')).toContain('cordoned');
    expect((await servers(admin).get(cordoned.metadata.name!)).spec.serverClaimRef).toBeUndefined();
  });

  test('a tenant pointing an existing claim at a cordoned server is refused', async () => {
    const cordoned = await servers(admin).create(server(uniqueName('srv'), {}, { unclaimable: true }));
    const c = await claims(tenant.client).create(claim(ns, uniqueName('claim')));
    await whenCached(() =>
      expectDenied(
        () =>
          claims(tenant.client).patch(
            c.metadata.name!,
            { spec: { serverRef: { name: cordoned.metadata.name } } },
            { namespace: ns },
          ),
        'METAL_ERR_SERVER_UNCLAIMABLE',
        403,
      ),
    );
  });

  test('cordoning a bound server is always allowed and leaves the binding alone', async () => {
    const s = await servers(admin).create(server(uniqueName('srv')));
    const c = await claims(tenant.client).create(claim(ns, uniqueName('claim')));
    await whenCached(() => bindServer(s.metadata.name!, c.metadata.name!));
    const cordoned = await servers(admin).patch(s.metadata.name!, { spec: { unclaimable: true } });
    expect(cordoned.spec.unclaimable).toBe(true);
    expect(cordoned.spec.serverClaimRef?.name).toBe(c.metadata.name);
  });
});
