// Kubernetes Events (events.k8s.io/v1) for the objects our controllers act on, so
// `kubectl describe` tells an operator what happened and why. Repeats of the same event on the
// same object within the series window update one Event's series count instead of creating new
// ones, and recording never blocks or fails a reconcile. Events are written a few at a time: no
// decision waits for them, and a burst of them (a wave of maintenances ending together) would
// otherwise compete at the API server with the writes that the next maintenances do wait for.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { KubeObject } from '../../api/schema/meta.js';
import { silentLogger } from '../log.js';
import type { KubeClient, ResourceClient } from './client.js';
import { Core } from './resources.js';
import { microTime } from './leader-election.js';
import { withDefaults } from '../options.js';

export type EventType = 'Normal' | 'Warning';

interface KubeEvent extends KubeObject {
  eventTime: string;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  note?: string;
  type: EventType;
  regarding: {
    apiVersion?: string;
    kind?: string;
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
  };
  series?: { count: number; lastObservedTime: string };
}

export interface EventRecorderOptions {
  client: KubeClient;
  /** reportingController, e.g. maintenance.metal.ironcore.dev/maintenance-controller */
  controller: string;
  /** reportingInstance, e.g. the pod name */
  instance: string;
  logger?: Logger;
  /** Same object+reason+note within this window updates the series instead of a new Event. */
  seriesWindowMs?: number;
  /** Events written at once; the others wait their turn (eventTime is when they were recorded). */
  maxInFlight?: number;
  /** Events waiting their turn; beyond this new ones are dropped (and counted). */
  maxQueued?: number;
}

interface SeriesEntry {
  name: string;
  namespace: string;
  count: number;
  firstAt: number;
  writing: boolean;
}

export class EventRecorder {
  readonly #events: ResourceClient<KubeEvent>;
  readonly #o: Required<Omit<EventRecorderOptions, 'client'>>;
  readonly #recent = new Map<string, SeriesEntry>();
  readonly #log: Logger;
  readonly #waiting: { event: KubeEvent; entry: SeriesEntry }[] = [];
  #inFlight = 0;
  dropped = 0;

  constructor(options: EventRecorderOptions) {
    this.#events = options.client.resource<KubeEvent>(Core.Event);
    this.#o = withDefaults(
      { logger: silentLogger, seriesWindowMs: 10 * 60_000, maxInFlight: 4, maxQueued: 1000 },
      options,
    );
    this.#log = this.#o.logger.child({ component: 'events' });
  }

  normal(obj: KubeObject, reason: string, action: string, note: string): void {
    this.record(obj, 'Normal', reason, action, note);
  }

  warning(obj: KubeObject, reason: string, action: string, note: string): void {
    this.record(obj, 'Warning', reason, action, note);
  }

  record(obj: KubeObject, type: EventType, reason: string, action: string, note: string): void {
    const namespace = obj.metadata.namespace || 'default';
    const key = `${obj.metadata.uid ?? obj.metadata.name}|${type}|${reason}|${note}`;
    const now = Date.now();
    const seen = this.#recent.get(key);
    if (seen && now - seen.firstAt < this.#o.seriesWindowMs) {
      seen.count++;
      if (!seen.writing) void this.#updateSeries(seen, now);
      return;
    }
    if (this.#waiting.length >= this.#o.maxQueued) {
      this.dropped++;
      return;
    }
    const name = `${obj.metadata.name ?? 'object'}.${createHash('sha1').update(`${key}|${now}`).digest('hex').slice(0, 12)}`;
    const entry = { name, namespace, count: 1, firstAt: now, writing: true };
    this.#recent.set(key, entry);
    this.#prune(now);
    const event: KubeEvent = {
      metadata: { name, namespace },
      eventTime: microTime(now),
      reportingController: this.#o.controller,
      reportingInstance: this.#o.instance,
      action,
      reason,
      note: note.slice(0, 1024),
      type,
      regarding: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name: obj.metadata.name,
        namespace: obj.metadata.namespace,
        uid: obj.metadata.uid,
        resourceVersion: obj.metadata.resourceVersion,
      },
    };
    this.#waiting.push({ event, entry });
    this.#pump();
  }

  #pump(): void {
    while (this.#inFlight < this.#o.maxInFlight && this.#waiting.length > 0) {
      const { event, entry } = this.#waiting.shift()!;
      this.#inFlight++;
      this.#events
        .create(event, { timeoutMs: 10_000 })
        .catch((e: Error) =>
          this.#log.warn({ err: e.message, reason: event.reason }, 'could not record event'),
        )
        .finally(() => {
          this.#inFlight--;
          entry.writing = false;
          this.#pump();
        });
    }
  }

  async #updateSeries(entry: SeriesEntry, now: number): Promise<void> {
    entry.writing = true;
    try {
      await this.#events.patch(
        entry.name,
        { series: { count: entry.count, lastObservedTime: microTime(now) } },
        { namespace: entry.namespace, type: 'merge', timeoutMs: 10_000 },
      );
    } catch (e) {
      this.#log.debug({ err: (e as Error).message }, 'could not update event series');
    } finally {
      entry.writing = false;
    }
  }

  #prune(now: number): void {
    if (this.#recent.size < 5000) return;
    for (const [k, v] of this.#recent) if (now - v.firstAt >= this.#o.seriesWindowMs) this.#recent.delete(k);
  }
}
