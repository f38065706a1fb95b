// Contract rules and the mutating path through real writes: approvals and deferrals by the tenant's
// ServiceAccount, announcements and ServerMaintenance status only from the controllers' ServiceAccounts,
// ServerBoot inside the server's InMaintenance maintenance, firmware frozen while its maintenance runs,
// deprecated spec.policy and the legacy approval label translated with warnings.
import { adminClient, controlPlane, freshNamespace, uniqueName, waitFor } from '../../../e2e/harness/env.js';
import { startWebhook, type WebhookHandle } from '../../../e2e/harness/webhook.js';
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import { ServerBootKind, type ServerBoot } from '../../../api/maintenance/v1alpha1/serverboot.js';
import { BIOSSettingsKind, type BIOSSettings } from '../../../api/system/v1alpha1/biossettings.js';
import type { ServerClaim } from '../../../api/metal/v1alpha1/serverclaim.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import { KubeApiError } from '../../../lib/kube/errors.js';
import { resourceOf } from '../../../lib/kube/resources.js';
import {
  boundPair,
  claim,
  claims,
  controllerIdentity,
  expectDenied,
  maintenance,
  maintenances,
  once,
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
  'test/integration/webhook/contract.int.test.ts',
  "it plays the maintenance and approval controllers with their ServiceAccounts and counts one replica's metrics; in cluster mode the installed controllers act on the same objects",
);

const boots = (c: KubeClient) => c.resource<ServerBoot>(resourceOf(ServerBootKind));
const bios = (c: KubeClient) => c.resource<BIOSSettings>(resourceOf(BIOSSettingsKind));
const iso = (d: Date) => d.toISOString().replace(/\.\d+Z$/, 'Z');

describe('contract', () => {
  let admin: KubeClient;
  let webhook: WebhookHandle;
  let mc: Identity;
  let ac: Identity;
  let tenant: Identity;
  let ns: string;

  beforeAll(async () => {
    admin = await adminClient();
    webhook = await startWebhook(admin, { replicas: 1 });
    mc = await controllerIdentity(admin, 'maintenance-controller');
    ac = await controllerIdentity(admin, 'approval-controller');
    ns = await freshNamespace(admin, 'contract');
    tenant = await tenantIdentity(admin, ns);
  }, 90_000);
  afterAll(async () => {
    await webhook?.stop();
    for (const who of [mc, ac, tenant]) await who?.client.close();
    await admin?.close();
  });

  /** A bound claim with `m` announced to it by the approval controller, deadline in a week. */
  async function announced(): Promise<{ claim: ServerClaim; m: ServerMaintenance; deadline: Date }> {
    const pair = await boundPair(admin, ns);
    const m = await maintenances(admin).create(maintenance(ns, uniqueName('m'), pair.server.metadata.name!));
    const deadline = new Date(Date.now() + 7 * 24 * 3600_000);
    const c = await claims(ac.client).patch(
      pair.claim.metadata.name!,
      {
        status: {
          maintenance: {
            announcements: [
              {
                maintenanceUID: m.metadata.uid,
                maintenanceName: m.metadata.name,
                maintenanceNamespace: ns,
                reason: 'FirmwareUpdate',
                class: 'Planned',
                announcedAt: iso(new Date()),
                deadline: iso(deadline),
                state: 'Announced',
              },
            ],
          },
        },
      },
      { namespace: ns, subresource: 'status' },
    );
    return { claim: c, m, deadline };
  }

  const patchClaim = (name: string, patch: unknown) =>
    claims(tenant.client).patch(name, patch, { namespace: ns });

  test('an approval must name a maintenance announced to the claim', async () => {
    const { claim: c, m } = await announced();
    const other = await maintenances(admin).create(maintenance(ns, uniqueName('m'), 'elsewhere'));
    const err = await expectDenied(
      () =>
        patchClaim(c.metadata.name!, {
          spec: { maintenance: { approvals: [{ maintenanceUID: other.metadata.uid }] } },
        }),
      'METAL_ERR_APPROVAL_NOT_ANNOUNCED',
      403,
    );
    expect(err.status.details?.causes?.[0]?.field).toBe('spec.maintenance.approvals');
    const ok = await patchClaim(c.metadata.name!, {
      spec: { maintenance: { approvals: [{ maintenanceUID: m.metadata.uid }] } },
    });
    expect(ok.spec.maintenance?.approvals?.[0]).toMatchObject({
      maintenanceUID: m.metadata.uid,
      approvedBy: tenant.username,
    });
  });

  test('a deferral must stay within the deadline and is stamped with the requester', async () => {
    const { claim: c, m, deadline } = await announced();
    await expectDenied(
      () =>
        patchClaim(c.metadata.name!, {
          spec: {
            maintenance: {
              deferrals: [
                { maintenanceUID: m.metadata.uid, until: iso(new Date(deadline.getTime() + 3600_000)) },
              ],
            },
          },
        }),
      'METAL_ERR_DEFER_PAST_DEADLINE',
      403,
    );
    const until = iso(new Date(deadline.getTime() - 3600_000));
    const ok = await patchClaim(c.metadata.name!, {
      spec: {
        maintenance: { deferrals: [{ maintenanceUID: m.metadata.uid, until, requestedBy: 'someone-else' }] },
      },
    });
    expect(ok.spec.maintenance?.deferrals?.[0]).toMatchObject({ until, requestedBy: tenant.username });
  });

  test('only the approval controller writes announcements; other claim status stays free', async () => {
    const { claim: c } = await announced();
    await expectDenied(
      () =>
        claims(tenant.client).patch(
          c.metadata.name!,
          { status: { maintenance: { announcements: [] } } },
          { namespace: ns, subresource: 'status' },
        ),
      'METAL_ERR_FORBIDDEN_WRITER',
      403,
    );
    // metal-operator's phase is not the contract's business.
    const phased = await claims(admin).patch(
      c.metadata.name!,
      { status: { phase: 'Bound' } },
      { namespace: ns, subresource: 'status' },
    );
    expect(phased.status?.phase).toBe('Bound');
    expect(phased.status?.maintenance?.announcements).toHaveLength(1);
  });

  /** Every decision the (single) replica has made so far, from its metrics. */
  async function decisions(): Promise<number> {
    const { body } = await webhook.get(0, '/metrics');
    return [...body.matchAll(/^metal_webhook_decisions_total\{[^}]*\} (\d+)$/gm)].reduce(
      (sum, m) => sum + Number(m[1]),
      0,
    );
  }

  test('only the maintenance controllers write ServerMaintenance status', async () => {
    const m = await maintenances(admin).create(maintenance(ns, uniqueName('m'), uniqueName('srv')));
    await expectDenied(() => setState(admin, m, { state: 'Announced' }), 'METAL_ERR_FORBIDDEN_WRITER', 403);
    // The controllers' own writes are admitted by the webhook configuration, without a call.
    const before = await decisions();
    expect((await setState(mc.client, m, { state: 'Announced' })).status?.state).toBe('Announced');
    expect((await setState(ac.client, m, { state: 'Approved' })).status?.state).toBe('Approved');
    expect(await decisions()).toBe(before);
    await expectDenied(() => setState(admin, m, { state: 'Pending' }), 'METAL_ERR_FORBIDDEN_WRITER', 403);
    expect(await decisions()).toBe(before + 1);
  });

  test('a ServerBoot on a claimed server must run inside its InMaintenance maintenance', async () => {
    const { server: s } = await boundPair(admin, ns);
    const m = await maintenances(admin).create(
      maintenance(ns, uniqueName('m'), s.metadata.name!, { approval: { required: false } }),
    );
    const boot = (name: string, maintenanceRef?: string): ServerBoot => ({
      metadata: { name, namespace: ns },
      spec: {
        serverRef: { name: s.metadata.name! },
        ...(maintenanceRef ? { maintenanceRef: { name: maintenanceRef } } : {}),
        method: 'VirtualMedia',
        image: 'https://images.example.com/maintenance.iso',
      },
    });
    await whenCached(() =>
      expectDenied(
        () => boots(admin).create(boot(uniqueName('boot'))),
        'METAL_ERR_BOOT_NEEDS_MAINTENANCE',
        403,
      ),
    );
    const pending = await expectDenied(
      () => boots(admin).create(boot(uniqueName('boot'), m.metadata.name)),
      'METAL_ERR_BOOT_NEEDS_MAINTENANCE',
      403,
    );
    expect(pending.status.message).toContain('is Pending');
    await whenCached(() => setState(mc.client, m, { state: 'InMaintenance' }));
    const created = await once(
      'the webhook to see the maintenance InMaintenance',
      () => boots(admin).create(boot(uniqueName('boot'), m.metadata.name)),
      /METAL_ERR_BOOT_NEEDS_MAINTENANCE/,
    );
    expect(created.spec.maintenanceRef?.name).toBe(m.metadata.name);
    // An unclaimed server needs no maintenance to boot an image.
    const free = await servers(admin).create(server(uniqueName('srv')));
    const unclaimed = await whenCached(() =>
      boots(admin).create({
        ...boot(uniqueName('boot')),
        spec: { ...boot('x').spec, serverRef: { name: free.metadata.name! } },
      }),
    );
    expect(unclaimed.metadata.uid).toBeDefined();
  });

  test('firmware settings are frozen while their maintenance is InMaintenance', async () => {
    const s = await servers(admin).create(server(uniqueName('srv')));
    const m = await maintenances(admin).create(maintenance(ns, uniqueName('m'), s.metadata.name!));
    const settings = await bios(admin).create({
      metadata: { name: uniqueName('bios') },
      spec: {
        serverRef: { name: s.metadata.name! },
        version: '1.0',
        serverMaintenanceRef: { namespace: ns, name: m.metadata.name! },
      },
    });
    const change = (dryRun = false, annotations?: Record<string, string>) =>
      bios(admin).patch(
        settings.metadata.name!,
        { metadata: { annotations }, spec: { version: '2.0' } },
        { dryRun },
      );
    // Pending maintenance: changes are fine.
    expect((await change(true)).spec.version).toBe('2.0');
    await whenCached(() => setState(mc.client, m, { state: 'InMaintenance' }));
    await waitFor('the webhook to see the maintenance InMaintenance', async () => {
      try {
        await change(true);
        return false;
      } catch (e) {
        return e instanceof KubeApiError && e.status.message?.includes('METAL_ERR_FIRMWARE_LOCKED');
      }
    });
    await expectDenied(() => change(), 'METAL_ERR_FIRMWARE_LOCKED', 403);
    await expectDenied(() => bios(admin).delete(settings.metadata.name!), 'METAL_ERR_FIRMWARE_LOCKED', 403);
    // Upstream's escape hatch still works, answered with a warning.
    const res = await rawRequest(
      controlPlane().kubeconfig,
      'PATCH',
      `/apis/system.metal.ironcore.dev/v1alpha1/biossettings/${settings.metadata.name}`,
      {
        metadata: { annotations: { 'metal.ironcore.dev/operation': 'allow-in-progress-update' } },
        spec: { version: '3.0' },
      },
      'application/merge-patch+json',
    );
    expect(res.status).toBe(200);
    expect(res.warnings.join('\n')).toContain('allow-in-progress-update');
  });

  test('deprecated spec.policy is translated into spec.approval.required, with a warning', async () => {
    const res = await rawRequest(
      controlPlane().kubeconfig,
      'POST',
      `/apis/maintenance.metal.ironcore.dev/v1alpha1/namespaces/${ns}/servermaintenances`,
      {
        apiVersion: 'maintenance.metal.ironcore.dev/v1alpha1',
        kind: 'ServerMaintenance',
        ...maintenance(ns, uniqueName('m'), 'any', { policy: 'OwnerApproval' }),
      },
    );
    expect(res.status).toBe(201);
    expect((res.body as ServerMaintenance).spec.approval?.required).toBe(true);
    expect(res.warnings.join('\n')).toMatch(/spec\.policy.*deprecated|deprecated.*spec\.policy/i);
  });

  test('the legacy approval label becomes typed approvals of what is announced', async () => {
    const { claim: c, m } = await announced();
    const res = await rawRequest(
      tenant.kubeconfig,
      'PATCH',
      `/apis/metal.ironcore.dev/v1alpha1/namespaces/${ns}/serverclaims/${c.metadata.name}`,
      { metadata: { labels: { 'metal.ironcore.dev/maintenance-approved': 'true' } } },
      'application/merge-patch+json',
    );
    expect(res.status).toBe(200);
    expect(res.warnings.join('\n')).toContain('translated');
    const approvals = (res.body as ServerClaim).spec.maintenance?.approvals ?? [];
    expect(approvals).toEqual([
      expect.objectContaining({ maintenanceUID: m.metadata.uid, approvedBy: tenant.username }),
    ]);
  });

  test('a claim write that does not touch the contract is left alone', async () => {
    const created = await claims(tenant.client).create(claim(ns, uniqueName('claim')));
    const labelled = await patchClaim(created.metadata.name!, { metadata: { labels: { team: 'x' } } });
    expect(labelled.metadata.labels).toEqual({ team: 'x' });
    expect(labelled.spec.maintenance).toBeUndefined();
  });
});
