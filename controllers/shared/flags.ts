// Flag parsing shared by the lifecycle controller binaries.
import { defineError } from '../../lib/errors.js';

export const invalidFlag = defineError('METAL_ERR_INVALID_FLAG', (what: string) => what);

/** commander argParser for a positive integer. */
export function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0)
    throw invalidFlag(`expected a positive integer, got ${JSON.stringify(v)}`);
  return n;
}

/** commander argParser for a positive number of seconds, returned in ms. */
export function positiveSeconds(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0)
    throw invalidFlag(`expected a positive number of seconds, got ${JSON.stringify(v)}`);
  return Math.round(n * 1000);
}
