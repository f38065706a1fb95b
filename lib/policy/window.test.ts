import fc from 'fast-check';
import { DEFAULT_POLICY, type MaintenanceWindow } from '../../policies/schema.js';
import { inWindow, nextWindowOpening, windowContains, zonedTimeToInstant } from './window.js';

const berlinNights: MaintenanceWindow = {
  name: 'nights',
  days: ['Mon', 'Tue', 'Wed', 'Thu'],
  start: '22:00',
  end: '04:00',
  timeZone: 'Europe/Berlin',
};
const policy = (windows: MaintenanceWindow[]) => ({ ...DEFAULT_POLICY, windows });

describe('maintenance windows', () => {
  it('is always open without windows', () => {
    expect(inWindow(policy([]), new Date('2026-03-01T12:00:00Z'))).toBe(true);
    expect(nextWindowOpening(policy([]), new Date())).toBeUndefined();
  });

  it.each([
    // 2026-01-12 is a Monday; Berlin is UTC+1 in winter.
    ['2026-01-12T21:00:00Z', true], // Mon 22:00 local
    ['2026-01-12T20:59:00Z', false], // Mon 21:59
    ['2026-01-13T02:59:00Z', true], // Tue 03:59, Monday's window
    ['2026-01-13T03:00:00Z', false], // Tue 04:00, closed
    ['2026-01-16T02:00:00Z', true], // Fri 03:00, Thursday's window
    ['2026-01-16T21:30:00Z', false], // Fri 22:30, Friday has no window
    ['2026-01-18T22:30:00Z', false], // Sun 23:30
  ])('Berlin weeknights at %s: open=%s', (iso, open) => {
    expect(windowContains(berlinNights, new Date(iso))).toBe(open);
  });

  it('follows daylight saving time (22:00 Berlin is 20:00 UTC in summer)', () => {
    expect(windowContains(berlinNights, new Date('2026-07-13T20:00:00Z'))).toBe(true);
    expect(windowContains(berlinNights, new Date('2026-07-13T19:59:00Z'))).toBe(false);
  });

  it('finds the next opening across the weekend', () => {
    const fri = new Date('2026-01-16T12:00:00Z');
    expect(nextWindowOpening(policy([berlinNights]), fri)?.toISOString()).toBe('2026-01-19T21:00:00.000Z');
    const open = new Date('2026-01-12T21:30:00Z');
    expect(nextWindowOpening(policy([berlinNights]), open)).toBe(open);
  });

  it('picks the earliest of several windows', () => {
    const utcNoon: MaintenanceWindow = {
      name: 'noon',
      days: ['Sat'],
      start: '12:00',
      end: '13:00',
      timeZone: 'UTC',
    };
    const fri = new Date('2026-01-16T12:00:00Z');
    expect(nextWindowOpening(policy([berlinNights, utcNoon]), fri)?.toISOString()).toBe(
      '2026-01-17T12:00:00.000Z',
    );
  });

  it('converts wall-clock time to instants in a zone', () => {
    expect(new Date(zonedTimeToInstant(2026, 7, 1, 10, 0, 'America/New_York')).toISOString()).toBe(
      '2026-07-01T14:00:00.000Z',
    );
    expect(new Date(zonedTimeToInstant(2026, 1, 1, 10, 0, 'Asia/Kolkata')).toISOString()).toBe(
      '2026-01-01T04:30:00.000Z',
    );
  });

  it('always returns an opening that lies in a window and not before now (property)', () => {
    const zones = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe'];
    const hhmm = fc
      .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
      .map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`);
    const win = fc
      .record({
        days: fc.uniqueArray(fc.constantFrom('Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'), {
          minLength: 1,
        }),
        start: hhmm,
        end: hhmm,
        timeZone: fc.constantFrom(...zones),
      })
      .filter((w) => w.start !== w.end)
      .map((w) => ({ ...w, name: 'w' }));
    fc.assert(
      fc.property(win, fc.integer({ min: Date.UTC(2025, 0, 1), max: Date.UTC(2028, 0, 1) }), (w, t) => {
        const now = new Date(t);
        const next = nextWindowOpening(policy([w]), now);
        expect(next).toBeDefined();
        expect(next!.getTime()).toBeGreaterThanOrEqual(now.getTime());
        // Inside, or at an opening skipped by a DST gap: one minute later it is open.
        expect(windowContains(w, next!) || windowContains(w, new Date(next!.getTime() + 3_600_000))).toBe(
          true,
        );
        expect(next!.getTime() - now.getTime()).toBeLessThanOrEqual(8 * 86_400_000);
      }),
      { numRuns: 300 },
    );
  });
});
