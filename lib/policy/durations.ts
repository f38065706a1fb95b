// Policy durations are validated strings; these helpers read them as milliseconds.
import type { MaintenanceClass } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ClassPolicy, Policy } from '../../policies/schema.js';
import { parseDuration } from '../../policies/validate.js';

const cache = new Map<string, number>();

/** Milliseconds of a duration string that passed policy validation (malformed text reads as 0). */
export function durationMs(text: string): number {
  let ms = cache.get(text);
  if (ms === undefined) {
    ms = parseDuration(text) ?? 0;
    if (cache.size < 1024) cache.set(text, ms);
  }
  return ms;
}

/** The policy of a maintenance class; an unknown class reads as Planned, the most careful one. */
export function classPolicy(policy: Policy, cls: string | undefined): ClassPolicy {
  return policy.classes[(cls ?? 'Planned') as MaintenanceClass] ?? policy.classes.Planned;
}

/** A duration in ms written the way policies write them (90s, 15m, 1h), for messages. */
export function formatMs(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
