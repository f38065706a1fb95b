// Timestamps as the API server writes metav1.Time: RFC 3339, whole seconds, UTC.

export function rfc3339(at: Date | number): string {
  const ms = typeof at === 'number' ? at : at.getTime();
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Milliseconds of an RFC 3339 time, or undefined when absent or malformed. */
export function parseTime(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : t;
}

/** The delay until `at` (never negative), for requeue hints; undefined stays undefined. */
export function delayUntil(at: number | undefined, now: number): number | undefined {
  return at === undefined ? undefined : Math.max(0, at - now);
}

/** The earliest of several optional delays. */
export function earliest(...delays: (number | undefined)[]): number | undefined {
  const set = delays.filter((d): d is number => d !== undefined && Number.isFinite(d));
  return set.length === 0 ? undefined : Math.min(...set);
}
