// A de-duplicating work queue with the semantics of client-go's workqueue: a key is held at most
// once while waiting; a key being processed is never handed to a second worker, and if it is added
// again meanwhile it is processed once more afterwards. Retries back off exponentially per key,
// and an overall token bucket keeps a storm of failures from hammering the API server. An urgent add
// puts the key ahead of every normal one: the step a slot or a user waits for is not queued behind a
// thousand routine re-checks.

import { withDefaults } from '../options.js';

export interface WorkQueueOptions {
  /** First retry delay per key. */
  baseDelayMs?: number;
  /** Cap of the per-key retry delay. */
  maxDelayMs?: number;
  /** Overall rate limit for retries: sustained per second and burst. */
  qps?: number;
  burst?: number;
  /** Told how long each key waited in the queue before a worker took it (ms), for metrics. */
  onWait?: (waitedMs: number) => void;
  /** Told how long the overall token bucket delayed a retry (ms, only when it did), for metrics. */
  onRateLimited?: (delayMs: number) => void;
}

export class WorkQueue<K = string> {
  /**
   * Normal keys in order. A key promoted to #front leaves its entry here as a husk (its ticket no longer
   * #live), skipped when reached: promotion is O(1), not a search through thousands of waiting keys.
   */
  readonly #queue: { key: K; ticket: number }[] = [];
  /** The ticket of each key's one live entry in #queue. */
  readonly #live = new Map<K, number>();
  #tickets = 0;
  /** Entries in #queue that are husks. */
  #husks = 0;
  /** Urgent keys, handed out before any in #queue. */
  readonly #front: K[] = [];
  /** Keys being processed that were added again urgently: they go to the front when done. */
  readonly #urgentAgain = new Set<K>();
  readonly #dirty = new Set<K>();
  readonly #processing = new Set<K>();
  readonly #failures = new Map<K, number>();
  readonly #timers = new Map<K, { at: number; timer: NodeJS.Timeout }>();
  /** When each waiting key was added (first add since it was last taken): its wait, for metrics. */
  readonly #queuedAt = new Map<K, number>();
  readonly #waiters: ((key: K | undefined) => void)[] = [];
  readonly #idleWaiters: (() => void)[] = [];
  readonly #opts: Required<Omit<WorkQueueOptions, 'onWait' | 'onRateLimited'>> &
    Pick<WorkQueueOptions, 'onWait' | 'onRateLimited'>;
  #tokens: number;
  #tokensAt = Date.now();
  #shuttingDown = false;
  adds = 0;
  retries = 0;

  constructor(options: WorkQueueOptions = {}) {
    this.#opts = withDefaults({ baseDelayMs: 5, maxDelayMs: 5 * 60_000, qps: 10, burst: 100 }, options);
    this.#tokens = this.#opts.burst;
  }

  add(key: K, options: { urgent?: boolean } = {}): void {
    if (this.#shuttingDown) return;
    const urgent = options.urgent === true;
    if (this.#dirty.has(key)) {
      if (urgent) this.#promote(key);
      return;
    }
    this.adds++;
    this.#dirty.add(key);
    if (!this.#queuedAt.has(key)) this.#queuedAt.set(key, Date.now());
    if (this.#processing.has(key)) {
      if (urgent) this.#urgentAgain.add(key);
      return;
    }
    const waiter = this.#waiters.shift();
    if (waiter) {
      this.#dirty.delete(key);
      this.#processing.add(key);
      this.#took(key);
      waiter(key);
    } else if (urgent) {
      this.#front.push(key);
    } else {
      const ticket = ++this.#tickets;
      this.#queue.push({ key, ticket });
      this.#live.set(key, ticket);
    }
  }

  /** A waiting key added again urgently moves to the front. */
  #promote(key: K): void {
    if (this.#processing.has(key)) {
      this.#urgentAgain.add(key);
      return;
    }
    if (!this.#live.delete(key)) return; // already at the front
    this.#husks++;
    this.#front.push(key);
  }

  /** Adds the key after `delayMs`; an earlier pending add for the same key wins. */
  addAfter(key: K, delayMs: number): void {
    if (this.#shuttingDown) return;
    if (delayMs <= 0) return this.add(key);
    const at = Date.now() + delayMs;
    const existing = this.#timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.#timers.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref?.();
    this.#timers.set(key, { at, timer });
  }

  /** Re-adds after a failure, with per-key exponential backoff and the overall rate limit. */
  addRateLimited(key: K): void {
    const n = this.#failures.get(key) ?? 0;
    this.#failures.set(key, n + 1);
    this.retries++;
    const perKey = Math.min(this.#opts.maxDelayMs, this.#opts.baseDelayMs * 2 ** n);
    const bucket = this.#bucketDelay();
    if (bucket > 0) this.#opts.onRateLimited?.(bucket);
    this.addAfter(key, Math.max(perKey, bucket));
  }

  /**
   * Re-adds after a failure that ends once a peer serves again, which no watch event tells (an admission
   * webhook down: the API server refuses every write it reviews). The per-key backoff of addRateLimited,
   * capped at `capMs`, and not charged to the overall bucket. Uncapped, a key failing all through an
   * outage of t seconds next tried up to t seconds after the peer was back (5 ms doubling: the tries
   * land at 5, 15, 35 … ms); charged to the bucket, an outage that failed a few hundred writes left a
   * debt of seconds on every retry after it. Bounded all the same: one try per key per `capMs`.
   */
  addPeerRetry(key: K, capMs: number): void {
    const n = this.#failures.get(key) ?? 0;
    this.#failures.set(key, n + 1);
    this.retries++;
    this.addAfter(key, Math.min(capMs, this.#opts.maxDelayMs, this.#opts.baseDelayMs * 2 ** n));
  }

  /** Forgets a key's failure history (call after a success). */
  forget(key: K): void {
    this.#failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.#failures.get(key) ?? 0;
  }

  /** The next key to process; undefined once the queue is shut down and empty. */
  get(): Promise<K | undefined> {
    const key = this.#front.shift() ?? this.#nextNormal();
    if (key !== undefined) {
      this.#dirty.delete(key);
      this.#processing.add(key);
      this.#took(key);
      return Promise.resolve(key);
    }
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  done(key: K): void {
    this.#processing.delete(key);
    const urgent = this.#urgentAgain.delete(key);
    if (this.#dirty.has(key)) {
      this.#dirty.delete(key);
      this.add(key, { urgent });
    }
    if (this.#processing.size === 0 && (this.length === 0 || this.#shuttingDown)) {
      for (const w of this.#idleWaiters.splice(0)) w();
    }
  }

  get length(): number {
    return this.#front.length + this.#queue.length - this.#husks;
  }

  get inFlight(): number {
    return this.#processing.size;
  }

  get pendingRetries(): number {
    return this.#timers.size;
  }

  /**
   * Stops handing out new keys; resolves once in-flight keys are done or `drainTimeoutMs` passed.
   * Keys still waiting are dropped: a controller restarts from a full relist anyway.
   */
  async shutDown(drainTimeoutMs = 10_000): Promise<void> {
    this.#shuttingDown = true;
    for (const { timer } of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    this.#queue.length = 0;
    this.#live.clear();
    this.#husks = 0;
    this.#front.length = 0;
    this.#urgentAgain.clear();
    this.#queuedAt.clear();
    this.#dirty.clear();
    for (const w of this.#waiters.splice(0)) w(undefined);
    if (this.#processing.size === 0) return;
    await Promise.race([
      new Promise<void>((resolve) => this.#idleWaiters.push(resolve)),
      new Promise<void>((resolve) => setTimeout(resolve, drainTimeoutMs).unref?.()),
    ]);
  }

  get isShuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** The first live key of #queue, dropping the husks before it. */
  #nextNormal(): K | undefined {
    for (let entry = this.#queue.shift(); entry; entry = this.#queue.shift()) {
      if (this.#live.get(entry.key) === entry.ticket) {
        this.#live.delete(entry.key);
        return entry.key;
      }
      this.#husks--;
    }
    return undefined;
  }

  #took(key: K): void {
    const at = this.#queuedAt.get(key);
    this.#queuedAt.delete(key);
    if (at !== undefined) this.#opts.onWait?.(Date.now() - at);
  }

  #bucketDelay(): number {
    const now = Date.now();
    this.#tokens = Math.min(
      this.#opts.burst,
      this.#tokens + ((now - this.#tokensAt) / 1000) * this.#opts.qps,
    );
    this.#tokensAt = now;
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : (-this.#tokens / this.#opts.qps) * 1000;
  }
}
