// A list+watch cache of one resource type, the TypeScript counterpart of client-go's reflector and
// indexer. It keeps a local copy of every object, with secondary indexes, and calls handlers on
// add, update and delete.
//
// Recovery: a 410 Gone (the watch's resourceVersion was compacted away) relists; any other watch
// failure reconnects with backoff from the last resourceVersion seen (relisting if that too is
// gone); a watch that stays silent longer than the inactivity deadline is abandoned and reopened;
// and a full relist runs periodically so a missed event can never stick. A relist diffs against
// the cache and emits the adds, updates and deletes it finds.
import type { Logger } from 'pino';
import type { KubeObject } from '../../api/schema/meta.js';
import { silentLogger } from '../log.js';
import type { ResourceClient } from './client.js';
import { KubeApiError } from './errors.js';
import { objectKey } from './resources.js';
import { Backoff, sleep } from './backoff.js';
import { withDefaults } from '../options.js';

export type IndexFunc<T> = (obj: T) => string[];

export interface InformerHandlers<T> {
  add?: (obj: T) => void;
  update?: (oldObj: T, newObj: T) => void;
  delete?: (obj: T) => void;
}

export interface InformerOptions<T> {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Full relist period; default 10 minutes. */
  resyncIntervalMs?: number;
  /** Server-side watch timeout range (seconds), randomised per watch like client-go. */
  watchTimeoutSeconds?: [number, number];
  /** Abandon a watch that sent nothing (not even a bookmark) for this long. */
  inactivityMs?: number;
  indexers?: Record<string, IndexFunc<T>>;
  /**
   * Applied to every object before it is cached or handed to handlers (list and watch alike), to keep
   * only what the readers need: e.g. withoutManagedFields, or a projection. It must keep
   * metadata.name, namespace, uid and resourceVersion. Opt-in: by default objects are cached as sent.
   */
  transform?: (obj: T) => T;
  /** Page size of the list. */
  listPageSize?: number;
  logger?: Logger;
}

/** The stored objects under `keys` (an index entry), skipping any gone; a plain loop, as it runs per lookup. */
export function objectsAt<T>(store: ReadonlyMap<string, T>, keys: Iterable<string> | undefined): T[] {
  const out: T[] = [];
  if (!keys) return out;
  for (const k of keys) {
    const obj = store.get(k);
    if (obj) out.push(obj);
  }
  return out;
}

/**
 * Drops metadata.managedFields, the largest part of most objects, which no reader of a cache needs
 * (server-side apply computes ownership on the API server). In place: the object was just parsed.
 */
export function withoutManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata?.managedFields) delete obj.metadata.managedFields;
  return obj;
}

/**
 * Keeps of metadata.managedFields only who wrote the object (each manager's name once), for readers
 * that ask "did this manager write it" but never which fields. In place, like withoutManagedFields.
 */
export function withManagerNamesOnly<T extends KubeObject>(obj: T): T {
  const fields = obj.metadata?.managedFields;
  if (!fields) return obj;
  const names = [...new Set(fields.flatMap((f) => (f.manager ? [f.manager] : [])))];
  if (names.length > 0) obj.metadata.managedFields = names.map((manager) => ({ manager }));
  else delete obj.metadata.managedFields;
  return obj;
}

export interface InformerStats {
  lists: number;
  relistsAfterGone: number;
  watchRestarts: number;
  events: number;
  lastEventAt: number;
  lastListAt: number;
}

interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T & { code?: number; reason?: string; message?: string };
}

class GoneError extends Error {}
class RelistRequested extends Error {}

export class Informer<T extends KubeObject> {
  readonly #resource: ResourceClient<T>;
  readonly #opts: Required<
    Omit<InformerOptions<T>, 'namespace' | 'labelSelector' | 'fieldSelector' | 'indexers' | 'transform'>
  > &
    InformerOptions<T>;
  readonly #log: Logger;
  readonly #store = new Map<string, T>();
  readonly #indexers: Record<string, IndexFunc<T>>;
  /** index name → index value → keys */
  readonly #indexes = new Map<string, Map<string, Set<string>>>();
  readonly #handlers: InformerHandlers<T>[] = [];
  readonly #syncWaiters: (() => void)[] = [];
  #resourceVersion = '';
  #synced = false;
  #abort: AbortController | undefined;
  #watchAbort: AbortController | undefined;
  #running: Promise<void> | undefined;
  #relistRequested = false;
  readonly stats: InformerStats = {
    lists: 0,
    relistsAfterGone: 0,
    watchRestarts: 0,
    events: 0,
    lastEventAt: 0,
    lastListAt: 0,
  };

  constructor(resource: ResourceClient<T>, options: InformerOptions<T> = {}) {
    this.#resource = resource;
    this.#opts = withDefaults(
      {
        resyncIntervalMs: 10 * 60_000,
        watchTimeoutSeconds: [300, 600] as [number, number],
        inactivityMs: 120_000,
        listPageSize: 500,
        logger: silentLogger,
      },
      options,
    );
    this.#log = this.#opts.logger.child({ informer: resource.type.plural });
    this.#indexers = options.indexers ?? {};
    for (const name of Object.keys(this.#indexers)) this.#indexes.set(name, new Map());
  }

  get resourceType() {
    return this.#resource.type;
  }

  on(handlers: InformerHandlers<T>): void {
    this.#handlers.push(handlers);
    // Late subscribers see the current state, like a client-go handler registered after start.
    if (this.#synced && handlers.add) for (const obj of this.#store.values()) handlers.add(obj);
  }

  hasSynced(): boolean {
    return this.#synced;
  }

  /** Resolves once the first list has filled the cache; rejects after `timeoutMs`. */
  waitForSync(timeoutMs = 60_000): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.#resource.type.plural} cache did not sync within ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.#syncWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  get(key: string): T | undefined {
    return this.#store.get(key);
  }

  getByName(name: string, namespace?: string): T | undefined {
    return this.#store.get(objectKey({ name, namespace }));
  }

  list(namespace?: string): T[] {
    const all = [...this.#store.values()];
    return namespace === undefined ? all : all.filter((o) => o.metadata.namespace === namespace);
  }

  keys(): string[] {
    return [...this.#store.keys()];
  }

  get size(): number {
    return this.#store.size;
  }

  byIndex(index: string, value: string): T[] {
    const idx = this.#indexes.get(index);
    if (!idx) throw new Error(`informer ${this.#resource.type.plural} has no index ${index}`);
    return objectsAt(this.#store, idx.get(value));
  }

  get lastResourceVersion(): string {
    return this.#resourceVersion;
  }

  start(): void {
    if (this.#running) return;
    this.#abort = new AbortController();
    this.#running = this.#run(this.#abort.signal);
  }

  async stop(): Promise<void> {
    this.#abort?.abort();
    this.#watchAbort?.abort();
    await this.#running;
    this.#running = undefined;
  }

  /** Drops the current watch and relists now (used by tests and by operators via a signal). */
  requestRelist(): void {
    this.#relistRequested = true;
    this.#watchAbort?.abort();
  }

  async #run(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff({ initialMs: 500, maxMs: 30_000 });
    let needList = true;
    while (!signal.aborted) {
      try {
        if (
          needList ||
          this.#relistRequested ||
          Date.now() - this.stats.lastListAt > this.#opts.resyncIntervalMs
        ) {
          this.#relistRequested = false;
          await this.#listAndReplace();
          needList = false;
        }
        await this.#watch(signal);
        backoff.reset();
      } catch (e) {
        if (signal.aborted) break;
        if (e instanceof GoneError) {
          this.stats.relistsAfterGone++;
          this.#log.info(
            { resourceVersion: this.#resourceVersion },
            'watch resourceVersion expired (410 Gone); relisting',
          );
          needList = true;
          continue;
        }
        if (e instanceof RelistRequested) continue;
        this.stats.watchRestarts++;
        const delay = backoff.next();
        this.#log.warn({ err: errText(e), retryInMs: Math.round(delay) }, 'list/watch failed; retrying');
        await sleep(delay, signal);
      }
    }
  }

  /**
   * Every page of a consistent list (the first page's resourceVersion), each transformed as it
   * arrives, so at most one page of whole objects is held at a time however large the cache.
   */
  async #listAll(): Promise<{ resourceVersion: string; items: T[] }> {
    const query = {
      namespace: this.#opts.namespace,
      labelSelector: this.#opts.labelSelector,
      fieldSelector: this.#opts.fieldSelector,
      limit: this.#opts.listPageSize,
    };
    const items: T[] = [];
    let page = await this.#resource.list(query);
    const resourceVersion = page.metadata.resourceVersion;
    for (;;) {
      for (const obj of page.items) items.push(this.#transform(obj));
      if (!page.metadata.continue) break;
      page = await this.#resource.list({ ...query, continue: page.metadata.continue });
    }
    return { resourceVersion, items };
  }

  #transform(obj: T): T {
    return this.#opts.transform ? this.#opts.transform(obj) : obj;
  }

  async #listAndReplace(): Promise<void> {
    const list = await this.#listAll();
    this.stats.lists++;
    this.stats.lastListAt = Date.now();
    const seen = new Set<string>();
    for (const obj of list.items) {
      const key = objectKey(obj.metadata);
      seen.add(key);
      this.#upsert(key, obj);
    }
    for (const [key, obj] of [...this.#store]) {
      if (!seen.has(key)) this.#remove(key, obj);
    }
    this.#resourceVersion = list.resourceVersion;
    if (!this.#synced) {
      this.#synced = true;
      for (const w of this.#syncWaiters.splice(0)) w();
    }
  }

  async #watch(signal: AbortSignal): Promise<void> {
    const [lo, hi] = this.#opts.watchTimeoutSeconds;
    const timeoutSeconds = Math.round(lo + Math.random() * (hi - lo));
    const watchAbort = new AbortController();
    this.#watchAbort = watchAbort;
    const onAbort = () => watchAbort.abort();
    // stop() during the list aborted before this listener existed: the watch must not outlive it.
    if (signal.aborted) return;
    signal.addEventListener('abort', onAbort, { once: true });
    const untilRelist = setTimeout(
      () => this.requestRelist(),
      Math.max(1000, this.#opts.resyncIntervalMs - (Date.now() - this.stats.lastListAt)),
    );
    try {
      const events = this.#resource.client.stream(this.#resource.path(this.#opts.namespace), {
        query: {
          watch: 1,
          resourceVersion: this.#resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds,
          labelSelector: this.#opts.labelSelector,
          fieldSelector: this.#opts.fieldSelector,
        },
        inactivityMs: this.#opts.inactivityMs,
        timeoutMs: 30_000,
        signal: watchAbort.signal,
      });
      for await (const raw of events) {
        this.#apply(raw as WatchEvent<T>);
      }
    } catch (e) {
      if (e instanceof KubeApiError && e.statusCode === 410) throw new GoneError();
      if (watchAbort.signal.aborted && !signal.aborted) throw new RelistRequested();
      throw e;
    } finally {
      clearTimeout(untilRelist);
      signal.removeEventListener('abort', onAbort);
    }
    if (this.#relistRequested && !signal.aborted) throw new RelistRequested();
  }

  #apply(ev: WatchEvent<T>): void {
    this.stats.events++;
    this.stats.lastEventAt = Date.now();
    if (ev.type === 'ERROR') {
      const code = ev.object?.code;
      if (code === 410) throw new GoneError();
      throw new Error(`watch error event: ${ev.object?.reason ?? ''} ${ev.object?.message ?? ''}`.trim());
    }
    const rv = ev.object?.metadata?.resourceVersion;
    if (ev.type === 'BOOKMARK') {
      if (rv) this.#resourceVersion = rv;
      return;
    }
    const obj = this.#transform(ev.object);
    const key = objectKey(obj.metadata);
    if (ev.type === 'DELETED') {
      const old = this.#store.get(key);
      this.#remove(key, old ?? obj);
    } else {
      this.#upsert(key, obj);
    }
    if (rv) this.#resourceVersion = rv;
  }

  #upsert(key: string, obj: T): void {
    const old = this.#store.get(key);
    if (old && old.metadata.resourceVersion === obj.metadata.resourceVersion) return;
    if (old) this.#unindex(key, old);
    this.#store.set(key, obj);
    this.#index(key, obj);
    for (const h of this.#handlers) {
      this.#call(() => (old ? h.update?.(old, obj) : h.add?.(obj)));
    }
  }

  #remove(key: string, obj: T): void {
    if (!this.#store.has(key)) return;
    this.#unindex(key, this.#store.get(key)!);
    this.#store.delete(key);
    for (const h of this.#handlers) this.#call(() => h.delete?.(obj));
  }

  #index(key: string, obj: T): void {
    for (const [name, fn] of Object.entries(this.#indexers)) {
      const idx = this.#indexes.get(name)!;
      for (const value of fn(obj)) {
        let keys = idx.get(value);
        if (!keys) idx.set(value, (keys = new Set()));
        keys.add(key);
      }
    }
  }

  #unindex(key: string, obj: T): void {
    for (const [name, fn] of Object.entries(this.#indexers)) {
      const idx = this.#indexes.get(name)!;
      for (const value of fn(obj)) {
        const keys = idx.get(value);
        if (!keys) continue;
        keys.delete(key);
        if (keys.size === 0) idx.delete(value);
      }
    }
  }

  #call(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.#log.error({ err: errText(e) }, 'informer handler threw');
    }
  }
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
