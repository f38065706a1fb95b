import { Informer, withManagerNamesOnly, withoutManagedFields } from './informer.js';
import type { ResourceClient, ObjectList } from './client.js';
import type { KubeObject } from '../../api/schema/meta.js';

type Obj = KubeObject & { data?: string };

const obj = (name: string, rv: string, data = name): Obj => ({
  metadata: { name, uid: name, resourceVersion: rv, managedFields: [{ manager: 'm', fieldsV1: {} }] },
  data,
});

/** A resource whose list answers in pages and whose watch yields the given events, then stays open. */
function fakeResource(pages: Obj[][], events: { type: string; object: Obj }[] = []) {
  const lists: (string | undefined)[] = [];
  const resource = {
    type: { group: 'g', version: 'v1', plural: 'things', kind: 'Thing', namespaced: false },
    path: () => '/apis/g/v1/things',
    list: (o: { continue?: string }): Promise<ObjectList<Obj>> => {
      lists.push(o.continue);
      const i = o.continue ? Number(o.continue) : 0;
      return Promise.resolve({
        metadata: { resourceVersion: '10', ...(i + 1 < pages.length ? { continue: String(i + 1) } : {}) },
        items: pages[i]!.map((x) => structuredClone(x)),
      });
    },
    client: {
      async *stream(_path: string, options: { signal?: AbortSignal }) {
        for (const e of events) yield structuredClone(e);
        // stop() may have aborted before the informer got here.
        if (!options.signal?.aborted)
          await new Promise((resolve) => options.signal?.addEventListener('abort', resolve, { once: true }));
      },
    },
  };
  return { resource: resource as unknown as ResourceClient<Obj>, lists };
}

describe('Informer transform', () => {
  test('applies to every page of the list and every watch event, before handlers see them', async () => {
    const { resource, lists } = fakeResource(
      [[obj('a', '1'), obj('b', '2')], [obj('c', '3')]],
      [
        { type: 'MODIFIED', object: obj('a', '11', 'a2') },
        { type: 'ADDED', object: obj('d', '12') },
      ],
    );
    const seen: Obj[] = [];
    const inf = new Informer<Obj>(resource, {
      transform: (o) => ({ ...withoutManagedFields(o), data: o.data?.toUpperCase() }),
    });
    inf.on({ add: (o) => seen.push(o), update: (_old, o) => seen.push(o) });
    inf.start();
    await inf.waitForSync(1000);
    for (let i = 0; i < 20 && inf.size < 4; i++) await new Promise((r) => setTimeout(r, 5));
    await inf.stop();
    expect(lists).toEqual([undefined, '1']);
    expect(inf.keys().sort()).toEqual(['a', 'b', 'c', 'd']);
    expect(inf.get('a')).toEqual({ metadata: { name: 'a', uid: 'a', resourceVersion: '11' }, data: 'A2' });
    expect(
      seen.every((o) => o.metadata.managedFields === undefined && o.data === o.data?.toUpperCase()),
    ).toBe(true);
  });

  test('without a transform, objects are cached as sent', async () => {
    const { resource } = fakeResource([[obj('a', '1')]]);
    const inf = new Informer<Obj>(resource);
    inf.start();
    await inf.waitForSync(1000);
    await inf.stop();
    expect(inf.get('a')?.metadata.managedFields).toHaveLength(1);
  });
});

describe('cache shapes', () => {
  it('withManagerNamesOnly keeps each writer once and no fields', () => {
    const o: Obj = {
      metadata: {
        name: 'x',
        managedFields: [
          { manager: 'a', operation: 'Apply', fieldsV1: { 'f:spec': {} } },
          { manager: 'a', operation: 'Update', subresource: 'status', fieldsV1: {} },
          { manager: 'b', operation: 'Update', fieldsV1: {} },
          { operation: 'Update', fieldsV1: {} },
        ],
      },
    };
    expect(withManagerNamesOnly(o).metadata.managedFields).toEqual([{ manager: 'a' }, { manager: 'b' }]);
    expect(withManagerNamesOnly({ metadata: { name: 'y', managedFields: [{}] } }).metadata).toEqual({
      name: 'y',
    });
  });
});
