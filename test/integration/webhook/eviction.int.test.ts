// Eviction (WS2) through real status writes: the maintenance controller's ServiceAccount moves
// ServerMaintenances into InMaintenance and the webhook grants budget room on the budgets' ledgers
// (fleet budgets, per-rack domains, tenant budgets), or refuses with the reason; dry runs reserve nothing;
// approvals come from the tenant's own ServiceAccount and are stamped with its name.
import { adminClient, freshNamespace, uniqueName, waitFor } from '../../../e2e/harness/env.js';
import { startWebhook, type WebhookHandle } from '../../../e2e/harness/webhook.js';
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import { ApiBudgetStore } from '../../../lib/kube/budget-store.js';
import {
  boundPair,
  claims,
  controllerIdentity,
  expectDenied,
  fleetBudgets,
  liveBudget,
  maintenance,
  maintenances,
  once,
  server,
  servers,
  setState,
  tenantBudgets,
  tenantIdentity,
  whenCached,
  type Identity,
} from './helpers.js';
import { releaseGrants } from '../../../webhook/grants/release.js';
import { localTargetOnly } from '../../../e2e/harness/target.js';

localTargetOnly(
  'test/integration/webhook/eviction.int.test.ts',
  'it plays the maintenance and approval controllers with their ServiceAccounts; in cluster mode the installed controllers act on the same objects',
);

describe('eviction', () => {
  let admin: KubeClient;
  let webhook: WebhookHandle;
  let mc: Identity;
  let ac: Identity;
  let ops: string;

  beforeAll(async () => {
    admin = await adminClient();
    webhook = await startWebhook(admin, { replicas: 1 });
    mc = await controllerIdentity(admin, 'maintenance-controller');
    ac = await controllerIdentity(admin, 'approval-controller');
    ops = await freshNamespace(admin, 'ops');
  }, 90_000);
  afterAll(async () => {
    await webhook?.stop();
    await mc?.client.close();
    await ac?.client.close();
    await admin?.close();
  });

  /** Servers carrying a label only this test's budgets select. */
  async function fleet(count: number, extra: (i: number) => Record<string, string> = () => ({})) {
    const label = { 'test.metal.ironcore.dev/run': uniqueName('r') };
    const created = [];
    for (let i = 0; i < count; i++)
      created.push(await servers(admin).create(server(uniqueName('srv'), { ...label, ...extra(i) })));
    const sms = [];
    for (const s of created)
      sms.push(await maintenances(admin).create(maintenance(ops, uniqueName('m'), s.metadata.name!)));
    return { label, servers: created, sms };
  }

  const enter = (m: ServerMaintenance, dryRun = false) =>
    setState(mc.client, m, { state: 'InMaintenance' }, dryRun);
  const ledger = async (name: string) =>
    ((await fleetBudgets(admin).get(name)).status?.grants ?? []).map((g) => g.maintenanceUID);

  test('a fleet budget grants up to its limit on its ledger, then refuses naming it', async () => {
    const f = await fleet(3);
    const name = uniqueName('fleet');
    await liveBudget(
      admin,
      mc.client,
      { metadata: { name }, spec: { serverSelector: { matchLabels: f.label }, maxUnavailable: 2 } },
      f.sms[0]!,
    );
    const [m0, m1, m2] = f.sms as [ServerMaintenance, ServerMaintenance, ServerMaintenance];
    expect((await whenCached(() => enter(m0))).status?.state).toBe('InMaintenance');
    await whenCached(() => enter(m1));
    expect((await ledger(name)).sort()).toEqual([m0.metadata.uid, m1.metadata.uid].sort());
    const err = await whenCached(() => expectDenied(() => enter(m2), 'METAL_ERR_BUDGET_EXHAUSTED', 429));
    expect(err.status.message).toContain(`ServerDisruptionBudget ${name}: 2 unavailable, 2 allowed`);
    expect(err.status.details?.retryAfterSeconds).toBe(30);
    // The API server passes the cause that names the budget on to the writer (the controller waits on it).
    expect(err.status.details?.causes).toContainEqual(
      expect.objectContaining({ reason: 'DisruptionBudget', field: `ServerDisruptionBudget//${name}` }),
    );
    expect((await maintenances(admin).get(m2.metadata.name!, ops)).status?.state).toBeUndefined();
    expect(await ledger(name)).toHaveLength(2);
  });

  test('a dry run decides without reserving, and a released grant frees the room', async () => {
    const f = await fleet(2);
    const name = uniqueName('fleet');
    await liveBudget(
      admin,
      mc.client,
      { metadata: { name }, spec: { serverSelector: { matchLabels: f.label }, maxUnavailable: 1 } },
      f.sms[0]!,
    );
    const [m0, m1] = f.sms as [ServerMaintenance, ServerMaintenance];
    const dry = await whenCached(() => enter(m0, true));
    expect(dry.status?.state).toBe('InMaintenance');
    expect(await ledger(name)).toEqual([]);
    expect((await maintenances(admin).get(m0.metadata.name!, ops)).status?.state).toBeUndefined();

    await whenCached(() => enter(m0));
    expect(await ledger(name)).toEqual([m0.metadata.uid]);
    // A dry run is refused like the real write would be, and still reserves nothing.
    await whenCached(() => expectDenied(() => enter(m1, true), 'METAL_ERR_BUDGET_EXHAUSTED', 429));
    expect(await ledger(name)).toEqual([m0.metadata.uid]);

    // Done: the maintenance controller completes m0 and gives the grant back (its finalizer's job).
    await setState(mc.client, m0, { state: 'Completed' });
    const released = await releaseGrants(
      new ApiBudgetStore(mc.client),
      [{ kind: 'ServerDisruptionBudget', name }],
      m0.metadata.uid!,
    );
    expect(released.failed).toEqual([]);
    await whenCached(() => enter(m1));
    expect(await ledger(name)).toEqual([m1.metadata.uid]);
  });

  test('a topologyKey budget limits each rack on its own', async () => {
    const f = await fleet(3, (i) => ({ rack: i < 2 ? 'a' : 'b' }));
    const name = uniqueName('racks');
    await liveBudget(
      admin,
      mc.client,
      {
        metadata: { name },
        spec: { serverSelector: { matchLabels: f.label }, maxUnavailable: 1, topologyKey: 'rack' },
      },
      f.sms[0]!,
    );
    const [a0, a1, b0] = f.sms as [ServerMaintenance, ServerMaintenance, ServerMaintenance];
    await whenCached(() => enter(a0));
    const err = await whenCached(() => expectDenied(() => enter(a1), 'METAL_ERR_BUDGET_EXHAUSTED', 429));
    expect(err.status.message).toContain('(domain "a")');
    await whenCached(() => enter(b0));
    const grants = (await fleetBudgets(admin).get(name)).status?.grants ?? [];
    expect(grants.map((g) => [g.server, g.domain]).sort()).toEqual(
      [
        [f.servers[0]!.metadata.name, 'a'],
        [f.servers[2]!.metadata.name, 'b'],
      ].sort(),
    );
  });

  test('one maintenance per server: a second one is refused while the first holds the grant', async () => {
    const f = await fleet(1);
    const s = f.servers[0]!;
    const second = await maintenances(admin).create(maintenance(ops, uniqueName('m'), s.metadata.name!));
    await liveBudget(
      admin,
      mc.client,
      {
        metadata: { name: uniqueName('fleet') },
        spec: { serverSelector: { matchLabels: f.label }, maxUnavailable: 5 },
      },
      f.sms[0]!,
    );
    await whenCached(() => enter(f.sms[0]!));
    const err = await expectDenied(() => enter(second), 'METAL_ERR_SERVER_BUSY', 429);
    expect(err.status.message).toContain(f.sms[0]!.metadata.name);
  });

  test('only the maintenance controllers may start a maintenance; a refused writer takes no room', async () => {
    const f = await fleet(1);
    const name = uniqueName('fleet');
    await liveBudget(
      admin,
      mc.client,
      { metadata: { name }, spec: { serverSelector: { matchLabels: f.label }, maxUnavailable: 1 } },
      f.sms[0]!,
    );
    // Cluster admin is no controller: the contract and the eviction guard both refuse.
    await expectDenied(
      () => setState(admin, f.sms[0]!, { state: 'InMaintenance' }),
      'METAL_ERR_FORBIDDEN_WRITER',
      403,
    );
    expect(await ledger(name)).toEqual([]);
  });

  test('a claimed server needs its owner: refused until the tenant approves, then granted', async () => {
    const tenantNs = await freshNamespace(admin, 'tenant');
    const tenant = await tenantIdentity(admin, tenantNs);
    try {
      const { server: s, claim: c } = await boundPair(admin, tenantNs);
      const m = await maintenances(admin).create(
        maintenance(ops, uniqueName('m'), s.metadata.name!, { class: 'Planned' }),
      );
      const announcedAt = new Date();
      const deadline = new Date(announcedAt.getTime() + 7 * 24 * 3600_000);
      // The approval controller announces it on the claim.
      await claims(ac.client).patch(
        c.metadata.name!,
        {
          status: {
            maintenance: {
              announcements: [
                {
                  maintenanceUID: m.metadata.uid,
                  maintenanceName: m.metadata.name,
                  maintenanceNamespace: ops,
                  reason: 'FirmwareUpdate',
                  class: 'Planned',
                  announcedAt: announcedAt.toISOString().replace(/\.\d+Z$/, 'Z'),
                  deadline: deadline.toISOString().replace(/\.\d+Z$/, 'Z'),
                  state: 'Announced',
                },
              ],
            },
          },
        },
        { namespace: tenantNs, subresource: 'status' },
      );
      await waitFor('the webhook to see the announcement', async () => {
        try {
          await enter(m, true);
          return false;
        } catch (e) {
          return (e as Error).message.includes('has not approved this maintenance');
        }
      });
      const err = await expectDenied(() => enter(m), 'METAL_ERR_APPROVAL_MISSING', 429);
      expect(err.status.message).toContain(deadline.toISOString().slice(0, 16));

      // The tenant approves; a forged approver is overwritten with the tenant's own identity.
      const approved = await claims(tenant.client).patch(
        c.metadata.name!,
        { spec: { maintenance: { approvals: [{ maintenanceUID: m.metadata.uid, approvedBy: 'mallory' }] } } },
        { namespace: tenantNs },
      );
      expect(approved.spec.maintenance?.approvals?.[0]?.approvedBy).toBe(tenant.username);
      expect(approved.spec.maintenance?.approvals?.[0]?.approvedAt).toMatch(/Z$/);
      const started = await once(
        'the webhook to see the approval',
        () => enter(m),
        /METAL_ERR_APPROVAL_MISSING/,
      );
      expect(started.status?.state).toBe('InMaintenance');
    } finally {
      await tenant.client.close();
    }
  });

  test('a tenant budget limits the tenant claims it selects', async () => {
    const tenantNs = await freshNamespace(admin, 'tenant');
    const pairs = [
      await boundPair(admin, tenantNs, {}, { app: 'db' }),
      await boundPair(admin, tenantNs, {}, { app: 'db' }),
      await boundPair(admin, tenantNs, {}, { app: 'web' }),
    ];
    // No approval needed (as for an Emergency), so only the budget decides.
    const sms: ServerMaintenance[] = [];
    for (const p of pairs)
      sms.push(
        await maintenances(admin).create(
          maintenance(ops, uniqueName('m'), p.server.metadata.name!, { approval: { required: false } }),
        ),
      );
    const name = uniqueName('db');
    await liveBudget(
      admin,
      mc.client,
      {
        metadata: { name, namespace: tenantNs },
        spec: { claimSelector: { matchLabels: { app: 'db' } }, maxUnavailable: 1 },
      },
      sms[0]!,
    );
    await whenCached(() => enter(sms[0]!));
    const err = await whenCached(() => expectDenied(() => enter(sms[1]!), 'METAL_ERR_BUDGET_EXHAUSTED', 429));
    expect(err.status.message).toContain(
      `ServerClaimDisruptionBudget ${tenantNs}/${name}: 1 unavailable, 1 allowed`,
    );
    // The web claim is not in the db budget.
    await whenCached(() => enter(sms[2]!));
    const grants = (await tenantBudgets(admin).get(name, tenantNs)).status?.grants ?? [];
    expect(grants.map((g) => g.claim?.name)).toEqual([pairs[0]!.claim.metadata.name]);
  });
});
