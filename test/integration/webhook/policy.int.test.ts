// The policy ConfigMap against the real webhook: an invalid one is refused naming the field, a valid
// change is hot-reloaded and enforced at once, and a replica that starts on an invalid one (written
// while no webhook was up, which the Ignore failure policy allows) fails closed until it is fixed.
import { adminClient, freshNamespace, uniqueName, waitFor } from '../../../e2e/harness/env.js';
import { defaultPolicyData, startWebhook, type WebhookHandle } from '../../../e2e/harness/webhook.js';
import type { KubeObject } from '../../../api/schema/meta.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import { KubeApiError } from '../../../lib/kube/errors.js';
import { Core } from '../../../lib/kube/resources.js';
import { DEFAULT_POLICY, POLICY_CONFIGMAP } from '../../../policies/schema.js';
import {
  claims,
  claim,
  controllerIdentity,
  expectDenied,
  maintenance,
  maintenances,
  otherWriterIdentity,
  setState,
  tenantIdentity,
  type Identity,
} from './helpers.js';
import { localTargetOnly } from '../../../e2e/harness/target.js';

localTargetOnly(
  'test/integration/webhook/policy.int.test.ts',
  'it writes an invalid policy while no replica runs and then starts one on it; in a cluster the ReplicaSet replaces a deleted pod at once, so there is no moment without a webhook',
);

type ConfigMap = KubeObject & { data?: Record<string, string> };
const KEY = POLICY_CONFIGMAP.key;

describe('policy ConfigMap', () => {
  let admin: KubeClient;
  let webhook: WebhookHandle;
  let tenant: Identity;
  let ac: Identity;
  let other: Identity;
  let ns: string;

  const configMaps = () => admin.resource<ConfigMap>(Core.ConfigMap);
  const writePolicy = (text: string) =>
    configMaps().patch(
      POLICY_CONFIGMAP.name,
      { data: { [KEY]: text } },
      { namespace: POLICY_CONFIGMAP.namespace },
    );
  const restoreDefault = () =>
    configMaps().patch(
      POLICY_CONFIGMAP.name,
      { data: defaultPolicyData() },
      { namespace: POLICY_CONFIGMAP.namespace },
    );

  /** A dry-run claim write that sets the legacy label: its fate shows the legacy-label mode in force. */
  const setLegacyLabel = async () => {
    const c = await claims(tenant.client).create(claim(ns, uniqueName('claim')));
    return claims(tenant.client).patch(
      c.metadata.name!,
      { metadata: { labels: { 'metal.ironcore.dev/maintenance-approved': 'true' } } },
      { namespace: ns, dryRun: true },
    );
  };
  const legacyDenied = async () => {
    try {
      await setLegacyLabel();
      return false;
    } catch (e) {
      if (e instanceof KubeApiError && e.status.message?.includes('METAL_ERR_LEGACY_LABEL_DENIED'))
        return true;
      throw e;
    }
  };

  beforeAll(async () => {
    admin = await adminClient();
    webhook = await startWebhook(admin, { replicas: 1 });
    ns = await freshNamespace(admin, 'policy');
    tenant = await tenantIdentity(admin, ns);
    ac = await controllerIdentity(admin, 'approval-controller');
    other = await otherWriterIdentity(admin);
  }, 90_000);
  afterAll(async () => {
    // Later test files share the control plane: leave the default policy in force.
    await restoreDefault().catch(() => undefined);
    await webhook?.stop();
    await tenant?.client.close();
    await ac?.client.close();
    await other?.client.close();
    await admin?.close();
  });

  test('an invalid policy is refused with the field it gets wrong', async () => {
    const err = await expectDenied(
      () => writePolicy('grants:\n  ttl: two minutes\n'),
      'METAL_ERR_POLICY_INVALID',
      422,
    );
    expect(err.status.details?.causes?.map((c) => c.field)).toEqual([`data["${KEY}"].grants.ttl`]);
    expect(err.status.message).toContain(`data["${KEY}"].grants.ttl`);
    const unknownField = await expectDenied(
      () => writePolicy('grant: {ttl: 1m}\n'),
      'METAL_ERR_POLICY_INVALID',
      422,
    );
    expect(unknownField.status.message).toContain('grant');
    const stored = await configMaps().get(POLICY_CONFIGMAP.name, POLICY_CONFIGMAP.namespace);
    expect(stored.data?.[KEY]).not.toContain('two minutes');
  });

  test('an empty policy is refused, not taken as "every setting back to its default"', async () => {
    for (const text of ['', '# all defaults?\n']) {
      const err = await expectDenied(() => writePolicy(text), 'METAL_ERR_POLICY_INVALID', 422);
      expect(err.status.details?.causes).toEqual([
        expect.objectContaining({
          field: `data["${KEY}"]`,
          message: expect.stringContaining('write {} to mean'),
        }),
      ]);
    }
  });

  test('a valid change is hot-reloaded: the webhook enforces it without a restart', async () => {
    expect(await legacyDenied()).toBe(false);
    await writePolicy('legacyLabels:\n  mode: deny\n');
    await waitFor('the webhook to deny the legacy label', legacyDenied);
    // The writers list is policy too: another automation may write status once the policy names it.
    const m = await maintenances(admin).create(maintenance(ns, uniqueName('m'), uniqueName('srv')));
    const mayWrite = async () => {
      try {
        await setState(other.client, m, { state: 'Announced' }, true);
        return true;
      } catch (e) {
        if (e instanceof KubeApiError && e.status.message?.includes('METAL_ERR_FORBIDDEN_WRITER'))
          return false;
        throw e;
      }
    };
    expect(await mayWrite()).toBe(false);
    const writers = [...DEFAULT_POLICY.writers.maintenanceStatus, other.username];
    await writePolicy(
      `legacyLabels: {mode: deny}\nwriters:\n  maintenanceStatus: ${JSON.stringify(writers)}\n`,
    );
    await waitFor('the webhook to admit the writer the policy added', mayWrite);
    // A refused update changes nothing: deny mode is still in force.
    await expectDenied(
      () => writePolicy('legacyLabels: {mode: sometimes}\n'),
      'METAL_ERR_POLICY_INVALID',
      422,
    );
    expect(await legacyDenied()).toBe(true);
    expect(await mayWrite()).toBe(true);
    await restoreDefault();
    await waitFor('the default policy back in force', async () => !(await legacyDenied()));
    expect(await mayWrite()).toBe(false);
    expect((await setState(ac.client, m, { state: 'Announced' })).status?.state).toBe('Announced');
  });

  test('a replica that starts on an invalid policy fails closed until the policy is fixed', async () => {
    await webhook.kill(0);
    try {
      // Nobody answers: the policy check is Ignore (the stores guard themselves), guarded writes fail.
      await writePolicy('grants:\n  ttl: soon\n');
      const down = await setLegacyLabel().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((down as KubeApiError).status.message).toContain('failed calling webhook');
    } finally {
      await webhook.restart(0);
    }
    const ready = await webhook.get(0, '/readyz');
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body)).toMatchObject({ cachesSynced: true, policyLoaded: false });
    await expectDenied(() => setLegacyLabel(), 'METAL_ERR_NO_POLICY', 503);
    // The fix goes through (the policy check needs no policy) and is picked up.
    await restoreDefault();
    await waitFor('readiness', async () => (await webhook.get(0, '/readyz')).status === 200);
    expect((await setLegacyLabel()).metadata.labels?.['metal.ironcore.dev/maintenance-approved']).toBe(
      'true',
    );
  });
});
