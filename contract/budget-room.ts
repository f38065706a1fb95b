// Budget room, the one formula: how many of a domain's servers may be unavailable, and how many more
// may go. The webhook grants by it (on the ledger and the census), the budget controller publishes it
// (status.domains[].allowed, disruptionsAllowed) and the maintenance controller holds attempts back by
// it (on the cached status); each counts what is in use from what it has, and all three round alike.
// The arithmetic is PodDisruptionBudget's.

/**
 * How many of `expected` servers may be unavailable: an integer as is; a percentage rounds UP, as
 * PodDisruptionBudget maxUnavailable does (`ceil(pct * expected / 100)`). A malformed value allows 0.
 */
export function maxAllowedUnavailable(maxUnavailable: number | string | undefined, expected: number): number {
  if (typeof maxUnavailable === 'number')
    return Number.isInteger(maxUnavailable) && maxUnavailable >= 0 ? maxUnavailable : 0;
  const match = /^(\d{1,3})%$/.exec(maxUnavailable ?? '');
  if (!match) return 0;
  const pct = Math.min(100, Number(match[1]));
  return Math.ceil((pct * expected) / 100);
}

export interface Room {
  /** How many may be unavailable (maxAllowedUnavailable of the domain's expected servers). */
  allowed: number;
  /** How many are: unavailable for any reason or granted, each server counted once. */
  inUse: number;
  /** How many more may go; 0 or less when the domain is full. */
  left: number;
}

/** The room of one budget domain of `expected` servers of which `inUse` are unavailable. */
export function roomIn(maxUnavailable: number | string | undefined, expected: number, inUse: number): Room {
  const allowed = maxAllowedUnavailable(maxUnavailable, expected);
  return { allowed, inUse, left: allowed - inUse };
}
