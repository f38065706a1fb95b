import { describe, expect, it } from '@jest/globals';
import { perTurn } from './per-turn.js';

const nextCheckPhase = () => new Promise((r) => setImmediate(r));

describe('perTurn', () => {
  it('runs what one turn hands in as one batch, after that turn, in order', async () => {
    const batches: number[][] = [];
    const add = perTurn<number>((batch) => batches.push(batch));
    add(1);
    add(2);
    add(3);
    expect(batches).toEqual([]);
    await nextCheckPhase();
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('puts what is handed in during a batch into the next one', async () => {
    const batches: string[][] = [];
    const add = perTurn<string>((batch) => {
      batches.push(batch);
      if (batch.includes('a')) add('late');
    });
    add('a');
    await nextCheckPhase();
    expect(batches).toEqual([['a']]);
    await nextCheckPhase();
    expect(batches).toEqual([['a'], ['late']]);
  });

  it('keeps the batches of two turns apart', async () => {
    const batches: number[][] = [];
    const add = perTurn<number>((batch) => batches.push(batch));
    add(1);
    await nextCheckPhase();
    add(2);
    add(3);
    await nextCheckPhase();
    expect(batches).toEqual([[1], [2, 3]]);
  });
});
