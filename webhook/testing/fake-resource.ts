// A ResourceClient stand-in for Informer tests: a fixed list, then the watch events a test pushes.
import type { KubeObject } from '../../api/schema/meta.js';
import type { ResourceClient } from '../../lib/kube/client.js';

export interface Pushable {
  push(event: { type: string; object: KubeObject }): void;
}

/** A ResourceClient stand-in: a fixed list, then the watch events a test pushes. */
export function fakeResource(
  plural: string,
  items: KubeObject[],
): { resource: ResourceClient<KubeObject> } & Pushable {
  const waiting: ((e: unknown) => void)[] = [];
  const queued: unknown[] = [];
  let rv = 100;
  const stamp = (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, resourceVersion: String(++rv) } });
  const resource = {
    type: { group: 'test', version: 'v1', plural, kind: plural, namespaced: true },
    path: () => `/test/${plural}`,
    list: () => Promise.resolve({ metadata: { resourceVersion: String(rv) }, items: items.map(stamp) }),
    client: {
      async *stream(_path: string, options: { signal?: AbortSignal }) {
        while (!options.signal?.aborted) {
          const next =
            queued.shift() ??
            (await new Promise((resolve) => {
              waiting.push(resolve);
              options.signal?.addEventListener('abort', () => resolve(undefined), { once: true });
            }));
          if (next) yield next;
        }
      },
    },
  } as unknown as ResourceClient<KubeObject>;
  return {
    resource,
    push(event) {
      const e = { type: event.type, object: stamp(event.object) };
      const w = waiting.shift();
      if (w) w(e);
      else queued.push(e);
    },
  };
}

/** Polls `check` every 5 ms until it holds, or throws after `timeoutMs`. */
export async function waitUntil(check: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
}
