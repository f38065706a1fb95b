// Read-your-writes over an informer cache. A controller that just wrote an object keeps the copy the
// API server returned and prefers it until the cache has caught up, so a reconcile that runs before
// the watch event arrives never acts on the state before its own write (e.g. start a second
// maintenance on a server because the first still looks Approved).
import type { KubeObject } from '../../api/schema/meta.js';
import { fresher, isNewer, objectKey } from '../../lib/kube/resources.js';

export class WriteOverlay<T extends KubeObject> {
  readonly #written = new Map<string, T>();
  readonly #transform: (obj: T) => T;

  /** `transform`: what the informer it overlays does to objects, so both hold the same shape. */
  constructor(transform: (obj: T) => T = (obj) => obj) {
    this.#transform = transform;
  }

  /** Remembers what a write returned. */
  wrote(written: T | undefined): void {
    if (!written) return;
    const obj = this.#transform(written);
    const key = objectKey(obj.metadata);
    const prev = this.#written.get(key);
    if (!prev || isNewer(obj.metadata.resourceVersion, prev.metadata.resourceVersion))
      this.#written.set(key, obj);
  }

  /** The fresher of the cached object and our last write of it (same uid only). */
  fresh(cached: T | undefined): T | undefined {
    if (!cached) return cached;
    const key = objectKey(cached.metadata);
    const mine = this.#written.get(key);
    const use = fresher(cached, mine);
    if (mine && use !== mine) this.#written.delete(key); // the cache caught up
    return use;
  }

  /** Drops what we know of an object (it was deleted). */
  forget(meta: { namespace?: string; name?: string }): void {
    this.#written.delete(objectKey(meta));
  }

  get size(): number {
    return this.#written.size;
  }
}
