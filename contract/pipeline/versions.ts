// Whether hardware already reached or passed a version hop (IEP-0016: "hardware already at or past a
// hop completes that stage immediately"). Firmware versions are vendor strings ("iLO 6 v1.60",
// "U54 v2.50", "7.10.50.00", "1.46.455b66-rev1"); they compare only when their words agree and their
// numbers line up. Anything else is "unknown": the stage then stamps its child, whose controller reads
// the running version itself, so guessing never skips a real upgrade.

/** Digit runs as numbers, everything else as lower-case words, separators dropped. */
function tokens(version: string): (number | string)[] {
  return (version.toLowerCase().match(/\d+|[a-z]+/g) ?? []).map((t) => (/^\d/.test(t) ? Number(t) : t));
}

/** The words and numbers up to the last word, and the numbers after it. */
function split(version: string): { family: string; numbers: number[] } {
  const t = tokens(version);
  let last = -1;
  t.forEach((x, i) => {
    if (typeof x === 'string') last = i;
  });
  return { family: t.slice(0, last + 1).join(' '), numbers: t.slice(last + 1) as number[] };
}

/**
 * -1, 0 or 1 as a is older, the same or newer than b; undefined when the two do not compare: their
 * families (everything up to the last word: "ilo 6 v", "u54 v") differ, or either has no number after
 * it. A missing trailing number counts as 0 ("1.60" is "1.60.0").
 */
export function compareVersions(a: string, b: string): -1 | 0 | 1 | undefined {
  if (a.trim() === b.trim()) return 0;
  const x = split(a);
  const y = split(b);
  if (x.family !== y.family || x.numbers.length === 0 || y.numbers.length === 0) return undefined;
  for (let i = 0; i < Math.max(x.numbers.length, y.numbers.length); i++) {
    const m = x.numbers[i] ?? 0;
    const n = y.numbers[i] ?? 0;
    if (m !== n) return m < n ? -1 : 1;
  }
  return 0;
}

/** Whether `current` is at or past `target`; false when unknown or incomparable. */
export function hopReached(current: string | undefined, target: string): boolean {
  if (current === undefined || current === '') return false;
  const c = compareVersions(current, target);
  return c === 0 || c === 1;
}
