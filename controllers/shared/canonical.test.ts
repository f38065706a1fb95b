import { describe, expect, it } from '@jest/globals';
import { canonicalJSON } from './canonical.js';

describe('canonicalJSON', () => {
  it('does not depend on key order at any depth, as the API server sorts them', () => {
    const ours = { type: 'Ready', status: 'True', nested: { b: 1, a: [{ y: 2, x: 1 }] } };
    const stored = { nested: { a: [{ x: 1, y: 2 }], b: 1 }, status: 'True', type: 'Ready' };
    expect(canonicalJSON(ours)).toBe(canonicalJSON(stored));
  });

  it('still sees a changed value, and drops undefined fields like JSON.stringify', () => {
    expect(canonicalJSON({ a: 1 })).not.toBe(canonicalJSON({ a: 2 }));
    expect(canonicalJSON({ a: 1, b: undefined })).toBe(canonicalJSON({ a: 1 }));
    expect(canonicalJSON([1, 2])).not.toBe(canonicalJSON([2, 1]));
  });
});
