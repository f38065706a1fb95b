// Status writes, Events and the Manager against the real API server.
import { adminClient, freshNamespace, uniqueName, waitFor } from '../../../e2e/harness/env.js';
import { StatusWriter, updateWithRetry } from '../../../lib/kube/status-writer.js';
import { EventRecorder } from '../../../lib/kube/events.js';
import { Manager } from '../../../lib/kube/manager.js';
import { Core, resourceOf } from '../../../lib/kube/resources.js';
import { ServerKind, type Server } from '../../../api/metal/v1alpha1/server.js';
import { silentLogger } from '../../../lib/log.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import type { KubeObject } from '../../../api/schema/meta.js';
import type { Lease } from '../../../lib/kube/leader-election.js';

type ConfigMap = KubeObject & { data?: Record<string, string> };
const servers = (c: KubeClient) => c.resource<Server>(resourceOf(ServerKind));
const condition = (type: string, reason: string) => ({
  type,
  status: 'True',
  reason,
  message: reason,
  lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
});

describe('controller runtime', () => {
  let admin: KubeClient;
  beforeAll(async () => {
    admin = await adminClient();
  });
  afterAll(async () => {
    await admin.close();
  });

  test('server-side apply of status merges conditions owned by different managers', async () => {
    const name = uniqueName('srv');
    await servers(admin).create({ metadata: { name }, spec: { systemUUID: name } });
    const a = new StatusWriter('metal-maintenance/test-a');
    const b = new StatusWriter('metal-maintenance/test-b');
    await a.applyStatus(servers(admin), { name }, { conditions: [condition('AReady', 'FromA')] });
    await b.applyStatus(
      servers(admin),
      { name },
      { conditions: [condition('BReady', 'FromB')], maintenance: { state: 'Announced' } },
    );
    let s = await servers(admin).get(name);
    expect(s.status?.conditions?.map((c) => c.type).sort()).toEqual(['AReady', 'BReady']);
    expect(s.status?.maintenance?.state).toBe('Announced');
    // A manager that stops applying a field gives it up; the other manager's fields stay.
    await a.applyStatus(servers(admin), { name }, {});
    s = await servers(admin).get(name);
    expect(s.status?.conditions?.map((c) => c.type)).toEqual(['BReady']);
    expect(await a.applyStatus(servers(admin), { name: uniqueName('missing') }, {})).toBeUndefined();
  });

  test('updateWithRetry makes concurrent read-modify-writes lose no update', async () => {
    const ns = await freshNamespace(admin, 'cas');
    const cms = admin.resource<ConfigMap>(Core.ConfigMap);
    await cms.create({ metadata: { name: 'counter', namespace: ns }, data: { n: '0' } });
    let conflicts = 0;
    await Promise.all(
      Array.from({ length: 20 }, () =>
        updateWithRetry(
          cms,
          { name: 'counter', namespace: ns },
          (cm) => ({ ...cm, data: { n: String(Number(cm.data?.n ?? 0) + 1) } }),
          { attempts: 50, onConflict: () => conflicts++ },
        ),
      ),
    );
    expect((await cms.get('counter', ns)).data?.n).toBe('20');
    expect(conflicts).toBeGreaterThan(0);
  });

  test('a dry-run delete deletes nothing; a delete with a stale uid precondition is refused', async () => {
    const ns = await freshNamespace(admin, 'delete');
    const cms = admin.resource<ConfigMap>(Core.ConfigMap);
    const cm = await cms.create({ metadata: { name: 'keep', namespace: ns } });
    await cms.delete('keep', { namespace: ns, dryRun: true });
    expect((await cms.get('keep', ns)).metadata.uid).toBe(cm.metadata.uid);
    await expect(
      cms.delete('keep', { namespace: ns, preconditions: { uid: 'not-this-one' } }),
    ).rejects.toThrow(/Conflict|Precondition/);
    await cms.delete('keep', { namespace: ns, preconditions: { uid: cm.metadata.uid } });
    expect(await cms.find('keep', ns)).toBeUndefined();
  });

  /** A ConfigMap in a fresh namespace to record Events on, and a recorder with `options`. */
  async function eventSubject(prefix: string, options: { maxInFlight?: number; maxQueued?: number } = {}) {
    const ns = await freshNamespace(admin, prefix);
    const cm = await admin
      .resource<ConfigMap>(Core.ConfigMap)
      .create({ metadata: { name: 'subject', namespace: ns } });
    const rec = new EventRecorder({
      client: admin,
      controller: 'maintenance.metal.ironcore.dev/test',
      instance: 'test-1',
      ...options,
    });
    return { ns, cm, rec };
  }

  test('repeated Events on one object become one Event with a series count', async () => {
    const { ns, cm, rec } = await eventSubject('events');
    rec.warning(
      { ...cm, apiVersion: 'v1', kind: 'ConfigMap' },
      'BudgetExhausted',
      'Admit',
      'budget fleet allows 0',
    );
    await waitFor(
      'first event',
      async () => (await admin.resource(Core.Event).list({ namespace: ns })).items.length === 1,
    );
    for (let i = 0; i < 3; i++) {
      rec.warning(
        { ...cm, apiVersion: 'v1', kind: 'ConfigMap' },
        'BudgetExhausted',
        'Admit',
        'budget fleet allows 0',
      );
      await new Promise((r) => setTimeout(r, 150));
    }
    const ev = await waitFor('series count', async () => {
      const items = (
        await admin
          .resource<KubeObject & { series?: { count: number }; reason: string; regarding: { name: string } }>(
            Core.Event,
          )
          .list({ namespace: ns })
      ).items;
      return items.length === 1 && (items[0]!.series?.count ?? 0) >= 2 ? items[0] : undefined;
    });
    expect(ev.reason).toBe('BudgetExhausted');
    expect(ev.regarding.name).toBe('subject');
  });

  test('a burst of Events is written a few at a time, and only what overflows the queue is dropped', async () => {
    const { ns, cm, rec } = await eventSubject('event-burst', { maxInFlight: 2, maxQueued: 15 });
    const subject = { ...cm, apiVersion: 'v1', kind: 'ConfigMap' };
    for (let i = 0; i < 20; i++) rec.normal(subject, 'Started', 'Start', `maintenance m-${i} started`);
    // Two are written at once and fifteen wait their turn; the three beyond that are dropped and counted.
    expect(rec.dropped).toBe(3);
    const notes = await waitFor('the queued events', async () => {
      const items = (await admin.resource<KubeObject & { note?: string }>(Core.Event).list({ namespace: ns }))
        .items;
      return items.length >= 17 ? items.map((e) => e.note ?? '') : undefined;
    });
    expect(notes).toHaveLength(17);
    expect(notes.sort()).toEqual(Array.from({ length: 17 }, (_, i) => `maintenance m-${i} started`).sort());
  });

  test('a Manager syncs caches, reconciles on events, serves probes and metrics, and releases its Lease on stop', async () => {
    const ns = await freshNamespace(admin, 'manager');
    const reconciled: string[] = [];
    const mgr = new Manager({
      name: 'test-controller',
      client: await adminClient(), // the manager owns (and closes) its client
      logger: silentLogger,
      leaderElection: { namespace: ns },
      ops: { port: 0 },
      onLostLeadership: () => undefined,
    });
    const cms = mgr.informer<ConfigMap>(Core.ConfigMap, { namespace: ns });
    const ctrl = mgr.controller({
      name: 'cm',
      reconcile: (key) => {
        reconciled.push(key);
        return Promise.resolve();
      },
    });
    cms.on({ add: (o) => ctrl.enqueue(`${o.metadata.namespace}/${o.metadata.name}`) });
    await admin.resource<ConfigMap>(Core.ConfigMap).create({ metadata: { name: 'before', namespace: ns } });
    await mgr.start();
    await waitFor('leadership', () => mgr.isLeader, { timeoutMs: 20_000 });
    await admin.resource<ConfigMap>(Core.ConfigMap).create({ metadata: { name: 'after', namespace: ns } });
    await waitFor(
      'both reconciled',
      () => reconciled.includes(`${ns}/before`) && reconciled.includes(`${ns}/after`),
    );

    const base = `http://127.0.0.1:${mgr.opsPort}`;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/metal_reconcile_total\{[^}]*controller="cm"[^}]*result="success"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/metal_leader\{[^}]*\} 1/);

    const otherClient = await adminClient();
    await mgr.stop();
    const lease = await otherClient.resource<Lease>(Core.Lease).get('test-controller', ns);
    expect(lease.spec?.holderIdentity).toBe('');
    await otherClient.close();
  });
});
