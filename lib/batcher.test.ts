import { describe, expect, it } from '@jest/globals';
import { Batcher } from './batcher.js';

describe('Batcher', () => {
  it('handles what arrives during a batch together in the next one, answering each in order', async () => {
    const batches: number[][] = [];
    const b = new Batcher<number, number>(async (items) => {
      batches.push(items);
      await new Promise((r) => setTimeout(r, 5));
      return items.map((x) => x * 10);
    });
    const out = await Promise.all([1, 2, 3].map((x) => b.submit(x)));
    expect(out).toEqual([10, 20, 30]);
    expect(batches).toEqual([[1], [2, 3]]);
  });

  it('gives every caller of a failed batch its error, and goes on with the next batch', async () => {
    let calls = 0;
    const b = new Batcher<string, string>(async (items) => {
      calls++;
      await new Promise((r) => setTimeout(r, 5));
      if (calls === 1) throw new Error('boom');
      return items;
    });
    const first = b.submit('a');
    const second = b.submit('b');
    await expect(first).rejects.toThrow('boom');
    await expect(second).resolves.toBe('b');
  });
});
