// Exponential backoff with full jitter, and a sleep that wakes early when aborted.

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  factor?: number;
}

export class Backoff {
  readonly #opts: Required<BackoffOptions>;
  #attempt = 0;

  constructor(opts: BackoffOptions) {
    this.#opts = { factor: 2, ...opts };
  }

  /** The next delay: a random point in [d/2, d] where d grows by `factor` per call up to maxMs. */
  next(): number {
    const { initialMs, maxMs, factor } = this.#opts;
    const d = Math.min(maxMs, initialMs * factor ** this.#attempt);
    this.#attempt++;
    return d / 2 + Math.random() * (d / 2);
  }

  reset(): void {
    this.#attempt = 0;
  }

  get attempts(): number {
    return this.#attempt;
  }
}

/** Resolves after `ms`, or early (without throwing) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
