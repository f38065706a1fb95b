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
