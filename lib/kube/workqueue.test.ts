import { jest } from '@jest/globals';
import { WorkQueue } from './workqueue.js';

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
