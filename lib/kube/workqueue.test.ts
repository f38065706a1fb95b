import fc from 'fast-check';
import { jest } from '@jest/globals';
import { WorkQueue } from './workqueue.js';

/** The queue's order rules spelled out plainly (a search per promotion), to check the real one against. */
class ModelQueue {
  readonly front: string[] = [];
  readonly queue: string[] = [];
  readonly dirty = new Set<string>();
  readonly processing = new Set<string>();
  readonly urgentAgain = new Set<string>();

  add(key: string, urgent: boolean): void {
    if (this.dirty.has(key)) {
      if (!urgent) return;
      if (this.processing.has(key)) this.urgentAgain.add(key);
      else if (this.queue.includes(key)) {
        this.queue.splice(this.queue.indexOf(key), 1);
        this.front.push(key);
      }
      return;
    }
    this.dirty.add(key);
    if (this.processing.has(key)) {
      if (urgent) this.urgentAgain.add(key);
      return;
    }
    (urgent ? this.front : this.queue).push(key);
  }

  get(): string | undefined {
    const key = this.front.shift() ?? this.queue.shift();
    if (key === undefined) return undefined;
    this.dirty.delete(key);
    this.processing.add(key);
    return key;
  }

  done(key: string): void {
    this.processing.delete(key);
    const urgent = this.urgentAgain.delete(key);
    if (this.dirty.delete(key)) this.add(key, urgent);
  }

  get length(): number {
    return this.front.length + this.queue.length;
  }
}

describe('WorkQueue', () => {
  test('holds a waiting key once however often it is added', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('a');
    q.add('b');
    expect(q.length).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
  });

  test('never hands a key being processed to a second worker, but processes it again afterwards', async () => {
    const q = new WorkQueue();
    q.add('a');
    const first = await q.get();
    q.add('a'); // changed while processing
    expect(q.length).toBe(0);
    let second: string | undefined;
    void q.get().then((k) => (second = k));
    await new Promise((r) => setImmediate(r));
    expect(second).toBeUndefined();
    q.done(first!);
    await new Promise((r) => setImmediate(r));
    expect(second).toBe('a');
  });

  test('hands out urgent keys before normal ones, and moves a waiting key forward when it turns urgent', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    q.add('c', { urgent: true });
    q.add('b', { urgent: true });
    q.add('a'); // a normal add again changes nothing
    expect(q.length).toBe(3);
    expect([await q.get(), await q.get(), await q.get()]).toEqual(['c', 'b', 'a']);
  });

  test('hands keys out in the order of a plain model, however adds, urgent adds, takes and dones interleave', async () => {
    const key = fc.constantFrom('a', 'b', 'c', 'd', 'e');
    const op = fc.oneof(
      fc.record({ op: fc.constant('add' as const), key, urgent: fc.boolean() }),
      fc.record({ op: fc.constant('get' as const) }),
      fc.record({ op: fc.constant('done' as const), pick: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 60 }), async (ops) => {
        const q = new WorkQueue();
        const model = new ModelQueue();
        for (const o of ops) {
          if (o.op === 'add') {
            q.add(o.key, { urgent: o.urgent });
            model.add(o.key, o.urgent);
          } else if (o.op === 'get') {
            if (model.length === 0) continue; // an empty queue's get waits: not a step here
            expect(await q.get()).toBe(model.get());
          } else {
            const busy = [...model.processing];
            if (busy.length === 0) continue;
            const k = busy[o.pick % busy.length]!;
            q.done(k);
            model.done(k);
          }
          expect(q.length).toBe(model.length);
        }
        // What is left comes out in the model's order, each key once.
        const rest: string[] = [];
        while (model.length > 0) rest.push(model.get()!);
        const got: string[] = [];
        for (let i = 0; i < rest.length; i++) got.push((await q.get())!);
        expect(got).toEqual(rest);
        expect(q.length).toBe(0);
      }),
      { numRuns: 500 },
    );
  });

  test('a key added urgently while it is processed goes to the front when done', async () => {
    const q = new WorkQueue();
    q.add('a');
    const a = await q.get();
    q.add('b');
    q.add('a', { urgent: true });
    q.done(a!);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
  });

  test('backs off per key exponentially and forgets on success', () => {
    jest.useFakeTimers();
    try {
      const q = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 1000, qps: 1000, burst: 1000 });
      q.addRateLimited('a');
      expect(q.numRequeues('a')).toBe(1);
      jest.advanceTimersByTime(99);
      expect(q.length).toBe(0);
      jest.advanceTimersByTime(1);
      expect(q.length).toBe(1);
      void q.get();
      q.done('a');
      q.addRateLimited('a'); // 200 ms
      q.addRateLimited('a'); // 400 ms, but the earlier pending add wins
      jest.advanceTimersByTime(200);
      expect(q.length).toBe(1);
      q.forget('a');
      expect(q.numRequeues('a')).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });

  test('caps the per-key delay', () => {
    jest.useFakeTimers();
    try {
      const q = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 500, qps: 1000, burst: 1000 });
      // 100, 200, 400, then 500 for ever: each retry is back within 500 ms.
      for (let i = 0; i < 8; i++) {
        q.addRateLimited('y');
        jest.advanceTimersByTime(500);
        expect(q.length).toBe(1);
        void q.get();
        q.done('y');
      }
    } finally {
      jest.useRealTimers();
    }
  });

  test('the overall token bucket spaces out a storm of retries', () => {
    jest.useFakeTimers();
    try {
      const q = new WorkQueue({ baseDelayMs: 1, maxDelayMs: 1, qps: 10, burst: 2 });
      for (let i = 0; i < 5; i++) q.addRateLimited(`k${i}`);
      jest.advanceTimersByTime(5);
      expect(q.length).toBe(2); // the burst
      jest.advanceTimersByTime(100);
      expect(q.length).toBe(3);
      jest.advanceTimersByTime(200);
      expect(q.length).toBe(5);
    } finally {
      jest.useRealTimers();
    }
  });

  test('reports how long each key waited, and the token bucket delays', async () => {
    jest.useFakeTimers();
    try {
      const waits: number[] = [];
      const delays: number[] = [];
      const q = new WorkQueue({
        baseDelayMs: 1,
        maxDelayMs: 1,
        qps: 10,
        burst: 1,
        onWait: (ms) => waits.push(ms),
        onRateLimited: (ms) => delays.push(ms),
      });
      q.add('a');
      jest.advanceTimersByTime(30);
      q.add('a'); // already waiting: its wait counts from the first add
      jest.advanceTimersByTime(20);
      expect(await q.get()).toBe('a');
      expect(waits).toEqual([50]);
      q.addRateLimited('b'); // the burst
      q.addRateLimited('c'); // delayed 100 ms by the bucket
      expect(delays).toEqual([100]);
    } finally {
      jest.useRealTimers();
    }
  });

  test('shutDown wakes idle workers and waits for in-flight keys', async () => {
    const q = new WorkQueue();
    const idle = q.get();
    q.add('a');
    expect(await idle).toBe('a');
    const waiting = q.get();
    let drained = false;
    const shut = q.shutDown(5000).then(() => (drained = true));
    expect(await waiting).toBeUndefined();
    await new Promise((r) => setImmediate(r));
    expect(drained).toBe(false); // 'a' still in flight
    q.done('a');
    await shut;
    expect(drained).toBe(true);
    q.add('b');
    expect(q.length).toBe(0);
  });
});
