// One resource type through a KubeClient: typed get, list (all pages), create, update, patch in
// every content type, status writes, delete with preconditions, watch. Paths come from the
// resource's type, never from strings at the call site.
import type { KubeObject } from '../../api/schema/meta.js';
import type { KubeClient, RequestOptions } from './client.js';
import { KubeApiError } from './errors.js';
import { apiVersionOf, resourcePath, type ResourceType } from './resources.js';

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

export const CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  timeoutMs?: number;
}

export interface ObjectList<T> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion: string; continue?: string };
  items: T[];
}

export interface WriteOptions {
  dryRun?: boolean;
  fieldManager?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface DeleteOptions {
  namespace?: string;
  dryRun?: boolean;
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  preconditions?: { uid?: string; resourceVersion?: string };
  gracePeriodSeconds?: number;
}

/** Typed CRUD on one resource type. */
export class ResourceClient<T extends KubeObject> {
  readonly client: KubeClient;
  readonly type: ResourceType;

  constructor(client: KubeClient, type: ResourceType) {
    this.client = client;
    this.type = type;
  }

  path(namespace?: string, name?: string, subresource?: string): string {
    return resourcePath(this.type, namespace, name, subresource);
  }

  get(
    name: string,
    namespace?: string,
    options: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<T> {
    return this.client.request<T>('GET', this.path(namespace, name), options);
  }

  /** Like get, but undefined for 404. */
  async find(name: string, namespace?: string): Promise<T | undefined> {
    try {
      return await this.get(name, namespace);
    } catch (e) {
      if (e instanceof KubeApiError && e.statusCode === 404) return undefined;
      throw e;
    }
  }

  list(options: ListOptions = {}): Promise<ObjectList<T>> {
    return this.client.request<ObjectList<T>>('GET', this.path(options.namespace), {
      query: {
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
        limit: options.limit,
        continue: options.continue,
        resourceVersion: options.resourceVersion,
      },
      timeoutMs: options.timeoutMs,
    });
  }

  /** Lists every page; the resourceVersion is the first page's (a consistent snapshot). */
  async listAll(options: Omit<ListOptions, 'continue'> = {}): Promise<ObjectList<T>> {
    const items: T[] = [];
    let page = await this.list({ limit: 500, ...options });
    const resourceVersion = page.metadata.resourceVersion;
    items.push(...page.items);
    while (page.metadata.continue) {
      page = await this.list({ limit: 500, ...options, continue: page.metadata.continue });
      items.push(...page.items);
    }
    return { metadata: { resourceVersion }, items };
  }

  #withKind(obj: T): T {
    return { apiVersion: apiVersionOf(this.type), kind: this.type.kind, ...obj };
  }

  create(obj: T, options: WriteOptions = {}): Promise<T> {
    return this.client.request<T>('POST', this.path(obj.metadata.namespace), {
      body: this.#withKind(obj),
      query: writeQuery(options),
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
  }

  /** PUT with the object's resourceVersion as the precondition (a stale one gets 409 Conflict). */
  replace(obj: T, options: WriteOptions = {}): Promise<T> {
    return this.client.request<T>('PUT', this.path(obj.metadata.namespace, obj.metadata.name), {
      body: this.#withKind(obj),
      query: writeQuery(options),
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
  }

  replaceStatus(obj: T, options: WriteOptions = {}): Promise<T> {
    return this.client.request<T>('PUT', this.path(obj.metadata.namespace, obj.metadata.name, 'status'), {
      body: this.#withKind(obj),
      query: writeQuery(options),
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
  }

  patch(
    name: string,
    patch: unknown,
    options: WriteOptions & {
      namespace?: string;
      type?: PatchType;
      subresource?: 'status';
      force?: boolean;
    } = {},
  ): Promise<T> {
    const type = options.type ?? 'merge';
    return this.client.request<T>('PATCH', this.path(options.namespace, name, options.subresource), {
      body: patch,
      contentType: CONTENT_TYPES[type],
      query: { ...writeQuery(options), force: type === 'apply' ? (options.force ?? true) : undefined },
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
  }

  /** Server-side apply of `obj` (which carries only the fields this manager owns). */
  apply(
    obj: T,
    options: WriteOptions & { fieldManager: string; force?: boolean; subresource?: 'status' },
  ): Promise<T> {
    return this.patch(obj.metadata.name ?? '', this.#withKind(obj), {
      ...options,
      namespace: obj.metadata.namespace,
      type: 'apply',
    });
  }

  delete(name: string, options: DeleteOptions = {}): Promise<unknown> {
    const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
    if (options.propagationPolicy) body.propagationPolicy = options.propagationPolicy;
    if (options.preconditions) body.preconditions = options.preconditions;
    if (options.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = options.gracePeriodSeconds;
    // With a DeleteOptions body the API server takes dryRun from the body and ignores the query.
    if (options.dryRun) body.dryRun = ['All'];
    return this.client.request('DELETE', this.path(options.namespace, name), { body });
  }
}

function writeQuery(options: WriteOptions): RequestOptions['query'] {
  return { dryRun: options.dryRun ? 'All' : undefined, fieldManager: options.fieldManager };
}
