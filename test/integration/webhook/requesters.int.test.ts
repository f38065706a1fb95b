// Who may request maintenance of which server (contract/requesters.ts), with real ServiceAccount
// identities and tokens: an operator the policy names, two tenants and a stranger, each allowed by
// RBAC to create ServerMaintenances in its own namespace. RBAC lets each of them name any server; the
// webhook is what keeps tenant B off tenant A's server and off skipping an owner's approval.
import { adminClient, freshNamespace, uniqueName, waitFor } from '../../../e2e/harness/env.js';
import { defaultPolicyData, startWebhook, type WebhookHandle } from '../../../e2e/harness/webhook.js';
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import type { KubeObject } from '../../../api/schema/meta.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import { KubeApiError } from '../../../lib/kube/errors.js';
import { Core } from '../../../lib/kube/resources.js';
import { POLICY_CONFIGMAP } from '../../../policies/schema.js';
import {
  boundPair,
  expectDenied,
  maintenance,
  maintenances,
  requesterIdentity,
  server,
  servers,
  type Identity,
} from './helpers.js';

const CODE = 'METAL_ERR_REQUESTER_FORBIDDEN';
type ConfigMap = KubeObject & { data?: Record<string, string> };

describe('who may request maintenance of which server', () => {
  let admin: KubeClient;
  let webhook: WebhookHandle;
  let operator: Identity, tenantA: Identity, tenantB: Identity, stranger: Identity;
  let nsOps: string, nsA: string, nsB: string, nsStranger: string;
  let serverA: string, claimA: string, serverB: string, unclaimed: string;

  const policy = (data: Record<string, string>) =>
    admin
      .resource<ConfigMap>(Core.ConfigMap)
      .patch(POLICY_CONFIGMAP.name, { data }, { namespace: POLICY_CONFIGMAP.namespace });

  /** Creates `m` as `who`; returns the error, or undefined when it was admitted (and deletes it). */
  async function attempt(
    who: Identity,
    m: ServerMaintenance,
    dryRun = true,
  ): Promise<KubeApiError | undefined> {
    try {
      await maintenances(who.client).create(m, { dryRun });
      return undefined;
    } catch (e) {
      if (e instanceof KubeApiError) return e;
      throw e;
    }
  }

  beforeAll(async () => {
    admin = await adminClient();
    webhook = await startWebhook(admin, { replicas: 1 });
    nsOps = await freshNamespace(admin, 'ops');
    nsA = await freshNamespace(admin, 'tenant-a');
    nsB = await freshNamespace(admin, 'tenant-b');
    nsStranger = await freshNamespace(admin, 'stranger');
    operator = await requesterIdentity(admin, nsOps, 'operator');
    tenantA = await requesterIdentity(admin, nsA, 'tenant');
    tenantB = await requesterIdentity(admin, nsB, 'tenant');
    stranger = await requesterIdentity(admin, nsStranger, 'stranger');
    const a = await boundPair(admin, nsA);
    const b = await boundPair(admin, nsB);
    serverA = a.server.metadata.name!;
    claimA = a.claim.metadata.name!;
    serverB = b.server.metadata.name!;
    unclaimed = (await servers(admin).create(server(uniqueName('srv')))).metadata.name!;
    await policy({
      [POLICY_CONFIGMAP.key]: `requesters:\n  operators:\n    users: [${operator.username}]\n    groups: [system:masters]\n`,
    });
    // Until both are true the webhook has not seen the policy, or the bindings, yet.
    await waitFor('the webhook to know the operator and both claims', async () => {
      const asOperator = await attempt(operator, maintenance(nsOps, uniqueName('m'), serverA));
      const asOwnerB = await attempt(tenantB, maintenance(nsB, uniqueName('m'), serverB));
      return asOperator === undefined && asOwnerB === undefined;
    });
  }, 120_000);

  afterAll(async () => {
    await policy(defaultPolicyData()).catch(() => undefined);
    await webhook?.stop();
    for (const who of [operator, tenantA, tenantB, stranger]) await who?.client.close();
    await admin?.close();
  });

  test("tenant B cannot take tenant A's server: not with Emergency and approval.required false, not at all", async () => {
    const name = uniqueName('m');
    const err = await expectDenied(
      () =>
        maintenances(tenantB.client).create(
          maintenance(nsB, name, serverA, { class: 'Emergency', approval: { required: false } }),
        ),
      CODE,
      403,
    );
    expect(err.status.message).toContain(`"${tenantB.username}"`);
    expect(err.status.message).toContain(`server ${serverA}`);
    expect(err.status.message).toContain(`claimed by ${nsA}/${claimA}`);
    expect(err.status.details?.causes).toEqual([expect.objectContaining({ field: 'spec.serverRef' })]);
    // Nothing was written.
    await expect(maintenances(admin).get(name, nsB)).rejects.toMatchObject({ statusCode: 404 });
    // Even asking for A's approval is not B's to ask: the request must come from A's namespace.
    await expectDenied(
      () => maintenances(tenantB.client).create(maintenance(nsB, uniqueName('m'), serverA)),
      CODE,
      403,
    );
    // RBAC keeps B out of A's namespace in the first place.
    const rbac = await attempt(tenantB, maintenance(nsA, uniqueName('m'), serverA));
    expect(rbac?.statusCode).toBe(403);
    expect(rbac?.status.reason).toBe('Forbidden');
  });

  test("tenant B cannot skip its own claim's approval, by required false or by class, nor on an update", async () => {
    const skip = await expectDenied(
      () =>
        maintenances(tenantB.client).create(
          maintenance(nsB, uniqueName('m'), serverB, { approval: { required: false } }),
        ),
      CODE,
      403,
    );
    expect(skip.status.message).toContain('spec.approval.required is false');
    expect(skip.status.details?.causes).toEqual([
      expect.objectContaining({ field: 'spec.approval.required' }),
    ]);
    const emergency = await expectDenied(
      () =>
        maintenances(tenantB.client).create(
          maintenance(nsB, uniqueName('m'), serverB, { class: 'Emergency' }),
        ),
      CODE,
      403,
    );
    expect(emergency.status.message).toContain('class Emergency needs no approval');
    // With its approval required, B may ask for maintenance of its own server...
    const m = await maintenances(tenantB.client).create(
      maintenance(nsB, uniqueName('m'), serverB, { class: 'Emergency', approval: { required: true } }),
    );
    // ...and may not turn the requirement off afterwards.
    await expectDenied(
      () =>
        maintenances(tenantB.client).patch(
          m.metadata.name!,
          { spec: { approval: { required: false } } },
          { namespace: nsB },
        ),
      CODE,
      403,
    );
    expect((await maintenances(admin).get(m.metadata.name!, nsB)).spec.approval?.required).toBe(true);
    await maintenances(admin).delete(m.metadata.name!, { namespace: nsB });
  });

  test("the operator may maintain tenant A's server and skip the approval; the stranger may do neither", async () => {
    const byOperator = await maintenances(operator.client).create(
      maintenance(nsOps, uniqueName('m'), serverA, { class: 'Emergency', approval: { required: false } }),
    );
    expect(byOperator.metadata.uid).toBeDefined();
    await maintenances(admin).delete(byOperator.metadata.name!, { namespace: nsOps });
    expect(await attempt(operator, maintenance(nsOps, uniqueName('m'), unclaimed))).toBeUndefined();

    const onA = await expectDenied(
      () => maintenances(stranger.client).create(maintenance(nsStranger, uniqueName('m'), serverA)),
      CODE,
      403,
    );
    expect(onA.status.message).toContain(`"${stranger.username}"`);
    const onFree = await expectDenied(
      () => maintenances(stranger.client).create(maintenance(nsStranger, uniqueName('m'), unclaimed)),
      CODE,
      403,
    );
    expect(onFree.status.message).toContain(`server ${unclaimed}: it is not claimed`);
  });

  test('tenant A may ask for maintenance of its own server, its approval required', async () => {
    expect(await attempt(tenantA, maintenance(nsA, uniqueName('m'), serverA), false)).toBeUndefined();
  });
});
