// The part of an informer cache the InformerWorld reads: lookups by key, secondary indexes, change
// handlers and the sync state. lib/kube's Informer satisfies it as is; MemorySource is the same shape
// over a Map, so the benchmark and the parity tests can fill a world without an API server.
import type { KubeObject } from '../api/schema/meta.js';
import { objectsAt, type IndexFunc, type InformerHandlers } from '../lib/kube/informer.js';
import { objectKey } from '../lib/kube/resources.js';

export interface CacheSource<T extends KubeObject> {
  getByName(name: string, namespace?: string): T | undefined;
  list(): T[];
  byIndex(index: string, value: string): T[];
  on(handlers: InformerHandlers<T>): void;
  hasSynced(): boolean;
}

/** An in-memory CacheSource with the Informer's semantics (indexes, add/update/delete handlers). */
export class MemorySource<T extends KubeObject> implements CacheSource<T> {
  readonly #store = new Map<string, T>();
  readonly #indexers: Record<string, IndexFunc<T>>;
  readonly #indexes = new Map<string, Map<string, Set<string>>>();
  readonly #handlers: InformerHandlers<T>[] = [];
  #synced = true;

  constructor(indexers: Record<string, IndexFunc<T>> = {}, items: readonly T[] = []) {
    this.#indexers = indexers;
    for (const name of Object.keys(indexers)) this.#indexes.set(name, new Map());
    for (const item of items) this.upsert(item);
  }

  getByName(name: string, namespace?: string): T | undefined {
    return this.#store.get(objectKey({ name, namespace }));
  }

  list(): T[] {
    return [...this.#store.values()];
  }

  byIndex(index: string, value: string): T[] {
    const idx = this.#indexes.get(index);
    if (!idx) throw new Error(`source has no index ${index}`);
    // The Informer's lookup: the benchmark's world should cost what the binary's does.
    return objectsAt(this.#store, idx.get(value));
  }

  on(handlers: InformerHandlers<T>): void {
    this.#handlers.push(handlers);
    if (handlers.add) for (const obj of this.#store.values()) handlers.add(obj);
  }

  hasSynced(): boolean {
    return this.#synced;
  }

  setSynced(synced: boolean): void {
    this.#synced = synced;
  }

  /** Adds or replaces an object (by namespace/name) and tells the handlers. */
  upsert(obj: T): void {
    const key = objectKey(obj.metadata);
    const old = this.#store.get(key);
    if (old) this.#index(key, old, false);
    this.#store.set(key, obj);
    this.#index(key, obj, true);
    for (const h of this.#handlers) {
      if (old) h.update?.(old, obj);
      else h.add?.(obj);
    }
  }

  /** Removes an object (by namespace/name) and tells the handlers. */
  remove(meta: { name?: string; namespace?: string }): void {
    const key = objectKey(meta);
    const old = this.#store.get(key);
    if (!old) return;
    this.#index(key, old, false);
    this.#store.delete(key);
    for (const h of this.#handlers) h.delete?.(old);
  }

  #index(key: string, obj: T, add: boolean): void {
    for (const [name, fn] of Object.entries(this.#indexers)) {
      const idx = this.#indexes.get(name)!;
      for (const value of fn(obj)) {
        let keys = idx.get(value);
        if (!keys && add) idx.set(value, (keys = new Set()));
        if (add) keys!.add(key);
        else if (keys) {
          keys.delete(key);
          if (keys.size === 0) idx.delete(value);
        }
      }
    }
  }
}
