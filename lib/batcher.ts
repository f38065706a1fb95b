// Calls that arrive while a batch is being handled wait, and are handled together in the next one:
// one write for many callers, where each would otherwise take its own turn at a compare-and-swap on
// the same object (a budget's ledger: grants in the webhook, releases in the maintenance controller).

interface Pending<I, O> {
  item: I;
  resolve: (out: O) => void;
  reject: (e: unknown) => void;
}

export class Batcher<I, O> {
  readonly #handle: (items: I[]) => Promise<O[]>;
  #waiting: Pending<I, O>[] = [];
  #running = false;

  /** `handle` answers a batch, one output per item, in order; when it throws, each caller gets the error. */
  constructor(handle: (items: I[]) => Promise<O[]>) {
    this.#handle = handle;
  }

  /** Resolves with this item's output once the batch it went into is handled. */
  submit(item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      if (!this.#running) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#running = true;
    try {
      while (this.#waiting.length > 0) {
        const batch = this.#waiting;
        this.#waiting = [];
        try {
          const out = await this.#handle(batch.map((p) => p.item));
          batch.forEach((p, i) => p.resolve(out[i]!));
        } catch (e) {
          for (const p of batch) p.reject(e);
        }
      }
    } finally {
      this.#running = false;
    }
  }
}
