// API plumbing of a contention run (budget-contention.ts): raw watches, batched creates, retries while a
// webhook replica is down, and reading the webhook's denial code off a refusal.
import {
  ServerMaintenanceKind,
  type ServerMaintenance,
} from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { KubeClient, ResourceClient } from '../../lib/kube/client.js';
import { KubeApiError } from '../../lib/kube/errors.js';
import { errorMessage } from '../../lib/errors.js';
import { resourceOf } from '../../lib/kube/resources.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WatchEvent } from './contention-checker.js';

export async function inBatches<T>(
  items: T[],
  size: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

/** A raw watch from `resourceVersion`, recording every event until aborted. */
export async function record<T>(
  client: KubeClient,
  path: string,
  resourceVersion: string,
  signal: AbortSignal,
  onEvent: (e: WatchEvent<T>) => void,
): Promise<void> {
  const stream = client.stream(path, {
    query: { watch: 1, resourceVersion, timeoutSeconds: 600 },
    inactivityMs: 600_000,
    signal,
  });
  for await (const raw of stream) {
    const e = raw as WatchEvent<T>;
    if (e.type === 'ERROR') throw new Error(`watch ${path} failed: ${JSON.stringify(e.object)}`);
    onEvent(e);
  }
}

export function denialCode(e: unknown): string | undefined {
  if (!(e instanceof KubeApiError)) return undefined;
  return /METAL_ERR_[A-Z_]+/.exec(e.status.message ?? '')?.[0];
}

/** Retries `fn` on any error until `deadline` (transient failures while a replica is down). */
export async function persist<T>(what: string, deadline: number, fn: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`${what}: ${errorMessage(e)}`, { cause: e });
      await sleep(50);
    }
  }
}

/** Retries a dry-run transition of `m` until the webhook refuses it with `code`. */
export async function waitForDenial(
  client: KubeClient,
  m: ServerMaintenance,
  code: string,
  timeoutMs: number,
) {
  const sm: ResourceClient<ServerMaintenance> = client.resource(resourceOf(ServerMaintenanceKind));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await sm.patch(
        m.metadata.name!,
        { status: { state: 'InMaintenance' } },
        {
          namespace: m.metadata.namespace,
          subresource: 'status',
          dryRun: true,
        },
      );
    } catch (e) {
      if (denialCode(e) === code) return;
    }
    if (Date.now() > deadline)
      throw new Error(`the webhook did not answer ${code} for ${m.metadata.name} in time`);
    await sleep(100);
  }
}
