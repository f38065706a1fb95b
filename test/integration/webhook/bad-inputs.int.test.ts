// The webhook-side bad inputs of webhook/testdata/bad-inputs.yaml through the real API server, read as
// kubectl reads them (status code and Warning headers): a claim's serverRef to a server that does not
// exist is admitted with a warning on create and on update (never a 429 kubectl would retry for 100 s),
// and deleting a budget that holds grants or a Server in maintenance says what will happen.
import { adminClient, controlPlane, freshNamespace, uniqueName, waitFor } from '../../../e2e/harness/env.js';
import { startWebhook, type WebhookHandle } from '../../../e2e/harness/webhook.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import {
  claim,
  claims,
  controllerIdentity,
  createFleetBudget,
  fleetBudgets,
  maintenance,
  maintenances,
  rawRequest,
  server,
  servers,
  setState,
  tenantIdentity,
  whenCached,
  type Identity,
} from './helpers.js';
import { localTargetOnly } from '../../../e2e/harness/target.js';

localTargetOnly(
  'test/integration/webhook/bad-inputs.int.test.ts',
  "it plays the maintenance controller with that controller's ServiceAccount; in cluster mode the installed controllers act on the same objects",
);

const METAL = '/apis/metal.ironcore.dev/v1alpha1';
const MAINT = '/apis/maintenance.metal.ironcore.dev/v1alpha1';

describe('bad inputs the webhook answers', () => {
  let admin: KubeClient;
  let webhook: WebhookHandle;
  let tenant: Identity;
  let mc: Identity;
  let adminKubeconfig: string;
  let ns: string;

  beforeAll(async () => {
    admin = await adminClient();
    webhook = await startWebhook(admin, { replicas: 1 });
    ns = await freshNamespace(admin, 'bad-inputs');
    tenant = await tenantIdentity(admin, ns);
    mc = await controllerIdentity(admin, 'maintenance-controller');
    adminKubeconfig = controlPlane().kubeconfig;
  }, 90_000);
  afterAll(async () => {
    await webhook?.stop();
    for (const who of [tenant, mc]) await who?.client.close();
    await admin?.close();
  });

  test('a claim for a server that does not exist is admitted with a warning, on create and on update', async () => {
    const created = await rawRequest(tenant.kubeconfig, 'POST', `${METAL}/namespaces/${ns}/serverclaims`, {
      apiVersion: 'metal.ironcore.dev/v1alpha1',
      kind: 'ServerClaim',
      ...claim(ns, 'asks-for-nosuch', { serverRef: { name: 'nosuch' } }),
    });
    expect(created.status).toBe(201);
    expect(created.warnings.join('\n')).toContain('server nosuch does not exist (yet)');

    const plain = await claims(tenant.client).create(claim(ns, uniqueName('claim')));
    const updated = await rawRequest(
      tenant.kubeconfig,
      'PATCH',
      `${METAL}/namespaces/${ns}/serverclaims/${plain.metadata.name}`,
      { spec: { serverRef: { name: 'nosuch-either' } } },
      'application/merge-patch+json',
    );
    expect(updated.status).toBe(200);
    expect(updated.warnings.join('\n')).toContain('server nosuch-either does not exist (yet)');
  });

  test('deleting a budget that holds grants says the grants go with it and the maintenances run on', async () => {
    const name = uniqueName('sdb');
    const b = await createFleetBudget(admin, {
      metadata: { name },
      spec: { serverSelector: { matchLabels: { nothing: name } }, maxUnavailable: 1 },
    });
    await fleetBudgets(admin).replaceStatus({
      ...b,
      status: {
        ...b.status,
        grants: [
          {
            maintenanceUID: 'uid-1',
            maintenance: { namespace: ns, name: 'm1' },
            server: 'srv-1',
            grantedAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          },
        ],
      },
    });
    const res = await rawRequest(adminKubeconfig, 'DELETE', `${MAINT}/serverdisruptionbudgets/${name}`, {});
    expect(res.status).toBe(200);
    expect(res.warnings.join('\n')).toContain(
      `ServerDisruptionBudget ${name} holds 1 grant(s) (${ns}/m1): those maintenances keep running`,
    );
    // Without grants, a delete goes without a word.
    const quiet = uniqueName('sdb');
    await createFleetBudget(admin, {
      metadata: { name: quiet },
      spec: { serverSelector: {}, maxUnavailable: 1 },
    });
    const silent = await rawRequest(
      adminKubeconfig,
      'DELETE',
      `${MAINT}/serverdisruptionbudgets/${quiet}`,
      {},
    );
    expect(silent.status).toBe(200);
    expect(silent.warnings).toEqual([]);
  });

  test('deleting a Server in maintenance says its maintenance will fail', async () => {
    const s = await servers(admin).create(server(uniqueName('srv'), { purpose: 'bad-inputs' }));
    const name = s.metadata.name!;
    const m = await maintenances(admin).create(maintenance(ns, uniqueName('m'), name));
    await whenCached(() => setState(mc.client, m, { state: 'InMaintenance' }));
    const path = `${METAL}/servers/${name}`;
    // The webhook's index learns the InMaintenance state from a watch event: probe with dry runs.
    const warned = await waitFor('the delete warning', async () => {
      const r = await rawRequest(adminKubeconfig, 'DELETE', path, { dryRun: ['All'] });
      return r.warnings.length > 0 ? r : undefined;
    });
    expect(warned.status).toBe(200);
    const res = await rawRequest(adminKubeconfig, 'DELETE', path, {});
    expect(res.status).toBe(200);
    expect(res.warnings.join('\n')).toContain(
      `server ${name} is in maintenance ${ns}/${m.metadata.name}: it will be marked Failed (reason ServerDeleted)`,
    );
  });
});
