// The informer against a real API server: it must never miss a change, whatever happens to its
// watch: a network partition across an etcd compaction (410 Gone) or an API server restart.
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient } from '../../../lib/kube/client.js';
import { Informer } from '../../../lib/kube/informer.js';
import { Core } from '../../../lib/kube/resources.js';
import type { KubeObject } from '../../../api/schema/meta.js';
import { adminClient, controlPlane, freshNamespace, waitFor } from '../../../e2e/harness/env.js';
import { compactEtcd, startApiserver, stopApiserver } from '../../../e2e/harness/control-plane.js';
import { startTcpProxy, type TcpProxy } from '../../../e2e/harness/proxy.js';

type Obj = KubeObject & { template?: unknown; data?: Record<string, string> };

function clientThrough(port: number): Promise<KubeClient> {
  const text = readFileSync(controlPlane().kubeconfig, 'utf8').replace(
    /server: https:\/\/127\.0\.0\.1:\d+/,
    `server: https://127.0.0.1:${port}`,
  );
  const file = join(mkdtempSync(join(tmpdir(), 'metal-kc-')), 'kubeconfig');
  writeFileSync(file, text, { mode: 0o600 });
  return KubeClient.fromFile(file);
}

/** Records the event stream so the test can check it tells the same story as the API. */
function track(inf: Informer<Obj>) {
  const seen = { adds: [] as string[], updates: [] as string[], deletes: [] as string[] };
  inf.on({
    add: (o) => seen.adds.push(o.metadata.name!),
    update: (_o, n) => seen.updates.push(n.metadata.name!),
    delete: (o) => seen.deletes.push(o.metadata.name!),
  });
  return seen;
}

async function expectCacheMatchesApi(
  inf: Informer<Obj>,
  api: KubeClient,
  rt: (typeof Core)['PodTemplate'] | (typeof Core)['ConfigMap'],
  ns: string,
) {
  await waitFor('informer cache to match the API server', async () => {
    const truth = await api.resource<Obj>(rt).list({ namespace: ns });
    const want = truth.items.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort();
    const have = inf
      .list(ns)
      .map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`)
      .sort();
    return JSON.stringify(want) === JSON.stringify(have);
  });
}

const template = {
  metadata: { labels: { app: 'x' } },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
};

describe('informer', () => {
  let admin: KubeClient;
  beforeAll(async () => {
    admin = await adminClient();
  });
  afterAll(async () => {
    await admin.close();
  });

  test('relists after a 410 Gone when its resourceVersion was compacted away during a partition', async () => {
    const ns = await freshNamespace(admin, 'informer-gone');
    const proxy: TcpProxy = await startTcpProxy(controlPlane().apiserverPort);
    const viaProxy = await clientThrough(proxy.port);
    const pts = admin.resource<Obj>(Core.PodTemplate);
    await pts.create({ metadata: { name: 'a', namespace: ns }, template });
    await pts.create({ metadata: { name: 'b', namespace: ns }, template });
    const inf = new Informer<Obj>(viaProxy.resource<Obj>(Core.PodTemplate), { namespace: ns });
    const seen = track(inf);
    inf.start();
    try {
      await inf.waitForSync(10_000);
      expect(
        inf
          .list(ns)
          .map((o) => o.metadata.name)
          .sort(),
      ).toEqual(['a', 'b']);

      proxy.cut();
      await pts.create({ metadata: { name: 'c', namespace: ns }, template });
      await pts.patch('b', { metadata: { labels: { changed: 'yes' } } }, { namespace: ns });
      await pts.delete('a', { namespace: ns });
      await compactEtcd(controlPlane());
      proxy.heal();

      await expectCacheMatchesApi(inf, admin, Core.PodTemplate, ns);
      expect(inf.stats.relistsAfterGone).toBeGreaterThanOrEqual(1);
      expect(seen.adds).toContain('c');
      expect(seen.deletes).toEqual(['a']);
      expect(seen.updates).toContain('b');
      expect(inf.getByName('b', ns)?.metadata.labels?.changed).toBe('yes');
    } finally {
      await inf.stop();
      await proxy.close();
      await viaProxy.close();
    }
  });

  test('survives an API server restart without missing a change', async () => {
    const ns = await freshNamespace(admin, 'informer-restart');
    const cms = admin.resource<Obj>(Core.ConfigMap);
    await cms.create({ metadata: { name: 'keep', namespace: ns }, data: { v: '1' } });
    await cms.create({ metadata: { name: 'gone', namespace: ns }, data: { v: '1' } });
    const client = await adminClient();
    const inf = new Informer<Obj>(client.resource<Obj>(Core.ConfigMap), { namespace: ns });
    const seen = track(inf);
    inf.start();
    try {
      await inf.waitForSync(10_000);
      const cp = controlPlane();
      await stopApiserver(cp.dir);
      await startApiserver(cp.dir);
      // Changes right after the restart, while the informer may still be reconnecting.
      await cms.patch('keep', { data: { v: '2' } }, { namespace: ns });
      await cms.delete('gone', { namespace: ns });
      await cms.create({ metadata: { name: 'new', namespace: ns }, data: { v: '1' } });

      await expectCacheMatchesApi(inf, admin, Core.ConfigMap, ns);
      expect(inf.stats.watchRestarts + inf.stats.relistsAfterGone).toBeGreaterThanOrEqual(1);
      expect(inf.getByName('keep', ns)?.data?.v).toBe('2');
      expect(seen.deletes).toEqual(['gone']);
      expect(seen.adds).toContain('new');
    } finally {
      await inf.stop();
      await client.close();
    }
  }, 180_000);

  test('secondary indexes follow adds, updates and deletes', async () => {
    const ns = await freshNamespace(admin, 'informer-index');
    const cms = admin.resource<Obj>(Core.ConfigMap);
    const inf = new Informer<Obj>(admin.resource<Obj>(Core.ConfigMap), {
      namespace: ns,
      indexers: { byServer: (o) => (o.data?.server ? [o.data.server] : []) },
    });
    inf.start();
    try {
      await inf.waitForSync(10_000);
      await cms.create({ metadata: { name: 'm1', namespace: ns }, data: { server: 's1' } });
      await cms.create({ metadata: { name: 'm2', namespace: ns }, data: { server: 's1' } });
      await waitFor('both in index s1', () => inf.byIndex('byServer', 's1').length === 2);
      await cms.patch('m2', { data: { server: 's2' } }, { namespace: ns });
      await waitFor(
        'm2 moved to s2',
        () => inf.byIndex('byServer', 's2').length === 1 && inf.byIndex('byServer', 's1').length === 1,
      );
      await cms.delete('m1', { namespace: ns });
      await waitFor('s1 empty', () => inf.byIndex('byServer', 's1').length === 0);
      expect(inf.byIndex('byServer', 's2').map((o) => o.metadata.name)).toEqual(['m2']);
    } finally {
      await inf.stop();
    }
  });
});
