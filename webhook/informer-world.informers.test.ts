// The InformerWorld built over real lib/kube Informers (fed by a stand-in resource): it builds its
// indexes from their lists and follows their watch events, answering as MemoryWorld does.
import type { Server } from '../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { KubeObject } from '../api/schema/meta.js';
import { Informer } from '../lib/kube/informer.js';
import { InformerWorld, WORLD_INDEXERS, type WorldSources } from './informer-world.js';
import { fakeResource, waitUntil } from './testing/fake-resource.js';
import { MemoryWorld } from './testing/memory-world.js';
import { census, keys } from './testing/world-checks.js';
import { loadWorld } from './testdata/load.js';
import type { WorldView } from './world.js';

type Kind = keyof WorldSources;

describe('InformerWorld over lib/kube Informers', () => {
  it('builds its indexes from the informers and follows their watch events', async () => {
    const fixtures = loadWorld();
    const budget: ServerDisruptionBudget = {
      metadata: { name: 'racks' },
      spec: { serverSelector: {}, maxUnavailable: 1, topologyKey: 'rack' },
    };
    const fakes = {
      servers: fakeResource('servers', fixtures.servers),
      claims: fakeResource('serverclaims', fixtures.claims),
      maintenances: fakeResource('servermaintenances', fixtures.maintenances),
      serverBudgets: fakeResource('serverdisruptionbudgets', [budget]),
      claimBudgets: fakeResource('serverclaimdisruptionbudgets', []),
      bmcs: fakeResource('bmcs', []),
    };
    const informers = Object.fromEntries(
      (Object.keys(fakes) as Kind[]).map((k) => [
        k,
        new Informer(fakes[k].resource, { indexers: WORLD_INDEXERS[k] as never }),
      ]),
    ) as unknown as { [K in Kind]: Informer<KubeObject> };
    const world = new InformerWorld(informers as unknown as WorldSources);
    expect(world.hasSynced()).toBe(false);
    for (const inf of Object.values(informers)) inf.start();
    try {
      await Promise.all(Object.values(informers).map((i) => i.waitForSync(5000)));
      expect(world.hasSynced()).toBe(true);
      const ref = () =>
        new MemoryWorld({
          servers: informers.servers.list() as Server[],
          claims: informers.claims.list() as ServerClaim[],
          maintenances: informers.maintenances.list() as ServerMaintenance[],
          serverBudgets: informers.serverBudgets.list() as ServerDisruptionBudget[],
        });
      const rackCensus = (w: WorldView) => ['r1', 'r2'].map((d) => census(w.serverBudgetCensus('racks', d)));
      expect(rackCensus(world)).toEqual(rackCensus(ref()));
      expect(keys(world.maintenancesByServer('srv-claimed'))).toEqual(['ops/m1']);

      // A server breaks and a maintenance moves: both arrive as watch events.
      fakes.servers.push({
        type: 'MODIFIED',
        object: { ...fixtures.servers[0]!, status: { state: 'Error' } } as Server,
      });
      fakes.maintenances.push({
        type: 'MODIFIED',
        object: {
          ...fixtures.maintenances[0]!,
          spec: { serverRef: { name: 'srv-free' } },
        } as ServerMaintenance,
      });
      await waitUntil(() => world.maintenancesByServer('srv-free').length === 2);
      await waitUntil(() => world.serverBudgetCensus('racks', 'r1').unavailable.includes('srv-free'));
      expect(rackCensus(world)).toEqual(rackCensus(ref()));
      expect(keys(world.maintenancesByServer('srv-claimed'))).toEqual([]);
    } finally {
      await Promise.all(Object.values(informers).map((i) => i.stop()));
    }
  });
});
