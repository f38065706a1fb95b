// What cluster mode deletes after a file: only objects created after the run began and written by
// the run's own field manager.
import { describe, expect, it } from '@jest/globals';
import { isRunObject } from './run-objects.js';

const started = Date.parse('2026-12-04T20:00:00Z');
const obj = (creationTimestamp: string | undefined, managers: string[]) => ({
  metadata: { name: 'x', creationTimestamp, managedFields: managers.map((manager) => ({ manager })) },
});

describe('isRunObject', () => {
  it('is the run’s when created since it began by its manager', () => {
    expect(isRunObject(obj('2026-12-04T20:00:00Z', ['metal-e2e-run-ab']), 'metal-e2e-run-ab', started)).toBe(
      true,
    );
    expect(
      isRunObject(obj('2026-12-04T20:05:00Z', ['kubectl', 'metal-e2e-run-ab']), 'metal-e2e-run-ab', started),
    ).toBe(true);
  });
  it('is not when older than the run beyond clock skew (an object the run only wrote to), by another manager, or undated', () => {
    expect(isRunObject(obj('2026-12-04T19:54:59Z', ['metal-e2e-run-ab']), 'metal-e2e-run-ab', started)).toBe(
      false,
    );
    expect(isRunObject(obj('2026-12-04T20:05:00Z', ['metal-e2e-run-cd']), 'metal-e2e-run-ab', started)).toBe(
      false,
    );
    expect(isRunObject(obj(undefined, ['metal-e2e-run-ab']), 'metal-e2e-run-ab', started)).toBe(false);
  });
});
