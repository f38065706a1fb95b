// Maintenance windows: weekly wall-clock intervals in an IANA time zone, evaluated with Intl (no tz
// database of our own). A window whose end is at or before its start runs past midnight and belongs
// to the day it opens. Pure: `now` is always passed in.
import { WEEKDAYS, type MaintenanceWindow, type Policy, type Weekday } from '../../policies/schema.js';

interface ZonedParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: Weekday;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      weekday: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Wall-clock parts of an instant in a time zone. */
export function zonedParts(instant: number, timeZone: string): ZonedParts {
  const parts: Record<string, string> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(instant))) parts[p.type] = p.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    weekday: parts.weekday as Weekday,
  };
}

/** Offset of the zone from UTC at an instant, in ms (positive east of Greenwich). */
function offsetMs(instant: number, timeZone: string): number {
  const p = zonedParts(instant, timeZone);
  const asUTC = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return asUTC - (instant - (((instant % 1000) + 1000) % 1000));
}

/** The instant at which a wall-clock time occurs in a zone (a time skipped by DST maps just after the gap). */
export function zonedTimeToInstant(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  timeZone: string,
): number {
  const guess = Date.UTC(year, month - 1, day, hour, minute);
  const first = guess - offsetMs(guess, timeZone);
  const second = guess - offsetMs(first, timeZone);
  return second;
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
const previousDay = (d: Weekday): Weekday => WEEKDAYS[(WEEKDAYS.indexOf(d) + 6) % 7] ?? d;

/** Whether one window is open at `now`. */
export function windowContains(window: MaintenanceWindow, now: Date): boolean {
  const p = zonedParts(now.getTime(), window.timeZone);
  const minute = p.hour * 60 + p.minute;
  const start = minutesOf(window.start);
  const end = minutesOf(window.end);
  const days = new Set<string>(window.days);
  if (end > start) return days.has(p.weekday) && minute >= start && minute < end;
  // Past midnight: the evening part belongs to today, the morning part to yesterday's window.
  return (days.has(p.weekday) && minute >= start) || (days.has(previousDay(p.weekday)) && minute < end);
}

/** Whether maintenance may start at `now`: true when no window is defined or any window is open. */
export function inWindow(policy: Pick<Policy, 'windows'>, now: Date): boolean {
  return policy.windows.length === 0 || policy.windows.some((w) => windowContains(w, now));
}

/**
 * The next instant at which some window opens (now, when one is open); undefined when no window is
 * defined. Looks eight days ahead, which covers every weekly window.
 */
export function nextWindowOpening(policy: Pick<Policy, 'windows'>, now: Date): Date | undefined {
  if (policy.windows.length === 0 || inWindow(policy, now))
    return policy.windows.length === 0 ? undefined : now;
  let best: number | undefined;
  for (const w of policy.windows) {
    const today = zonedParts(now.getTime(), w.timeZone);
    const start = minutesOf(w.start);
    for (let offset = 0; offset <= 8; offset++) {
      const date = new Date(Date.UTC(today.year, today.month - 1, today.day + offset));
      const weekday = WEEKDAYS[(date.getUTCDay() + 6) % 7] as Weekday;
      if (!w.days.includes(weekday)) continue;
      const at = zonedTimeToInstant(
        date.getUTCFullYear(),
        date.getUTCMonth() + 1,
        date.getUTCDate(),
        Math.floor(start / 60),
        start % 60,
        w.timeZone,
      );
      if (at > now.getTime()) {
        if (best === undefined || at < best) best = at;
        break;
      }
    }
  }
  return best === undefined ? undefined : new Date(best);
}
