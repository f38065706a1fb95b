// Writing status. Two ways, for two kinds of ownership:
// - applyStatus: server-side apply on /status with this binary's field manager. For fields one
//   controller owns outright (conditions it sets, its state); SSA merges with other managers'
//   fields (metal-operator's status, another controller's conditions) instead of overwriting them.
// - updateWithRetry: read, modify, write with the resourceVersion precondition, retried on
//   conflict. For compare-and-swap on data several writers change (a budget's grant ledger).
import type { KubeObject } from '../../api/schema/meta.js';
import type { ResourceClient } from './client.js';
import { isConflict, isNotFound } from './errors.js';
import { apiVersionOf } from './resources.js';
import { sleep } from './backoff.js';

export interface StatusWriterMetrics {
  onConflict?: (resource: string) => void;
}

export class StatusWriter {
  readonly fieldManager: string;
  readonly #metrics: StatusWriterMetrics;

  constructor(fieldManager: string, metrics: StatusWriterMetrics = {}) {
    this.fieldManager = fieldManager;
    this.#metrics = metrics;
  }

  /**
   * Applies `status` (only the fields this manager owns) to the object's status subresource.
   * Returns undefined when the object no longer exists.
   */
  async applyStatus<T extends KubeObject>(
    resource: ResourceClient<T>,
    ref: { name: string; namespace?: string },
    status: unknown,
  ): Promise<T | undefined> {
    const body = {
      apiVersion: apiVersionOf(resource.type),
      kind: resource.type.kind,
      metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
      status,
    } as unknown as T;
    try {
      return await resource.apply(body, {
        fieldManager: this.fieldManager,
        force: true,
        subresource: 'status',
      });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /** Server-side apply of spec/metadata fields this manager owns (e.g. its own taint). */
  async apply<T extends KubeObject>(resource: ResourceClient<T>, obj: T): Promise<T | undefined> {
    try {
      return await resource.apply(obj, { fieldManager: this.fieldManager, force: true });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /** See updateWithRetry; counts conflicts under this writer's metrics. */
  updateWithRetry<T extends KubeObject>(
    resource: ResourceClient<T>,
    ref: { name: string; namespace?: string },
    mutate: (current: T) => T | undefined,
    options: UpdateOptions = {},
  ): Promise<T | undefined> {
    return updateWithRetry(resource, ref, mutate, {
      ...options,
      fieldManager: this.fieldManager,
      onConflict: () => this.#metrics.onConflict?.(resource.type.plural),
    });
  }
}

export interface UpdateOptions {
  subresource?: 'status';
  attempts?: number;
  fieldManager?: string;
  dryRun?: boolean;
  onConflict?: () => void;
  /** Start from this copy (e.g. from a cache) instead of a fresh read; a conflict re-reads. */
  initial?: KubeObject;
}

/**
 * Read-modify-write with optimistic concurrency. `mutate` returns the new object, or undefined when
 * nothing needs to change. Retries on 409 Conflict with a fresh read (jittered, bounded); returns
 * undefined if the object is gone or nothing changed.
 */
export async function updateWithRetry<T extends KubeObject>(
  resource: ResourceClient<T>,
  ref: { name: string; namespace?: string },
  mutate: (current: T) => T | undefined,
  options: UpdateOptions = {},
): Promise<T | undefined> {
  const attempts = options.attempts ?? 10;
  let current = options.initial as T | undefined;
  for (let i = 0; ; i++) {
    if (!current) {
      current = await resource.find(ref.name, ref.namespace);
      if (!current) return undefined;
    }
    const next = mutate(structuredClone(current));
    if (!next) return undefined;
    try {
      const write =
        options.subresource === 'status'
          ? resource.replaceStatus.bind(resource)
          : resource.replace.bind(resource);
      return await write(next, { fieldManager: options.fieldManager, dryRun: options.dryRun });
    } catch (e) {
      if (!isConflict(e) || i + 1 >= attempts) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
      options.onConflict?.();
      current = undefined;
      await sleep(Math.random() * Math.min(1000, 25 * 2 ** i));
    }
  }
}
