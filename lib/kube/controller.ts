// A controller: a work queue of object keys and workers that reconcile them. Reconcile is
// level-triggered: it gets a key, reads the world from caches, decides, writes, and returns when
// (if ever) to look again. A thrown error re-queues the key with backoff, never in a hot loop; one
// that an admission webhook did not answer with a backoff capped at a few seconds.
import type { Logger } from 'pino';
import { silentLogger } from '../log.js';
import { errorMessage } from '../errors.js';
import { WorkQueue, type WorkQueueOptions } from './workqueue.js';
import { isWebhookUnavailable } from './errors.js';
import type { RuntimeMetrics } from './metrics.js';

export interface ReconcileResult {
  /** Look at this key again after this long, even if nothing changes (deadlines, timeouts). */
  requeueAfterMs?: number;
  /** Why it looks again (a metrics label: a small fixed set per controller). */
  reason?: string;
}

export interface ControllerOptions {
  name: string;
  reconcile: (key: string, signal: AbortSignal) => Promise<ReconcileResult | void>;
  workers?: number;
  queue?: WorkQueueOptions;
  logger?: Logger;
  metrics?: RuntimeMetrics;
  /**
   * Longest wait before a key whose reconcile failed on an admission webhook that did not answer is tried
   * again (default 2 s; see WorkQueue.addPeerRetry): its end is the webhook serving again, which no event
   * tells, and a slot may wait for that write.
   */
  peerRetryCapMs?: number;
}

const PEER_RETRY_CAP_MS = 2_000;

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue<string>;
  readonly #o: ControllerOptions;
  readonly #log: Logger;
  readonly #abort = new AbortController();
  #workers: Promise<void>[] = [];

  constructor(options: ControllerOptions) {
    this.name = options.name;
    this.#o = options;
    const m = options.metrics;
    const labels = { controller: options.name };
    this.queue = new WorkQueue<string>({
      ...options.queue,
      ...(m
        ? {
            onWait: (ms: number) => m.queueWait.observe(labels, ms / 1000),
            onRateLimited: (ms: number) => m.rateLimitDelay.observe(labels, ms / 1000),
          }
        : {}),
    });
    this.#log = (options.logger ?? silentLogger).child({ controller: options.name });
  }

  /** `urgent`: ahead of every key waiting normally (see WorkQueue.add). */
  enqueue(key: string, options: { urgent?: boolean } = {}): void {
    this.queue.add(key, options);
  }

  enqueueAfter(key: string, delayMs: number): void {
    this.queue.addAfter(key, delayMs);
  }

  get running(): boolean {
    return this.#workers.length > 0;
  }

  start(): void {
    if (this.#workers.length > 0) return;
    const n = this.#o.workers ?? 2;
    for (let i = 0; i < n; i++) this.#workers.push(this.#work());
    this.#log.info({ workers: n }, 'controller started');
  }

  /** Stops taking keys and waits (bounded) for in-flight reconciles to finish. */
  async stop(drainTimeoutMs = 10_000): Promise<void> {
    const draining = this.queue.shutDown(drainTimeoutMs);
    await draining;
    this.#abort.abort();
    await Promise.race([Promise.all(this.#workers), new Promise((r) => setTimeout(r, 1000).unref?.())]);
    this.#workers = [];
  }

  async #work(): Promise<void> {
    const m = this.#o.metrics;
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      const end = m?.reconcileDuration.startTimer({ controller: this.name });
      try {
        const result = await this.#o.reconcile(key, this.#abort.signal);
        this.queue.forget(key);
        if (result?.requeueAfterMs !== undefined) {
          this.queue.addAfter(key, result.requeueAfterMs);
          m?.reconciles.inc({ controller: this.name, result: 'requeue' });
          m?.requeues.inc({ controller: this.name, reason: result.reason ?? 'unspecified' });
        } else {
          m?.reconciles.inc({ controller: this.name, result: 'success' });
        }
      } catch (e) {
        this.#failed(key, e);
      } finally {
        end?.();
        this.queue.done(key);
        m?.queueDepth.set({ controller: this.name }, this.queue.length);
      }
    }
  }

  /** A reconcile threw: the key is tried again with backoff (capped when a webhook did not answer). */
  #failed(key: string, e: unknown): void {
    const m = this.#o.metrics;
    const attempt = this.queue.numRequeues(key) + 1;
    this.#log.warn({ key, attempt, err: errorMessage(e) }, 'reconcile failed; retrying with backoff');
    if (isWebhookUnavailable(e)) this.queue.addPeerRetry(key, this.#o.peerRetryCapMs ?? PEER_RETRY_CAP_MS);
    else this.queue.addRateLimited(key);
    m?.reconciles.inc({ controller: this.name, result: 'error' });
    m?.queueRetries.inc({ controller: this.name });
  }
}
