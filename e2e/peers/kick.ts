// The stand-ins' level-triggered loop: a kick while a pass runs asks for one more pass after it, so
// every burst of watch events and resync ticks coalesces into at most one pass running and one queued.
export class KickLoop {
  readonly #pass: () => Promise<void>;
  #running = Promise.resolve();
  #again = false;
  #busy = false;

  /** `pass`: one look at everything; it must not throw (the stand-ins swallow per-object errors). */
  constructor(pass: () => Promise<void>) {
    this.#pass = pass;
  }

  kick(): void {
    if (this.#busy) {
      this.#again = true;
      return;
    }
    this.#busy = true;
    this.#running = (async () => {
      do {
        this.#again = false;
        await this.#pass();
      } while (this.#again);
      this.#busy = false;
    })();
  }

  /** Settles when the pass under way (and any queued after it) is done. */
  idle(): Promise<void> {
    return this.#running;
  }
}
