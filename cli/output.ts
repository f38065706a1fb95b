// What the plugin prints: colours (only on a terminal), a line diff, tables.
import Table from 'cli-table3';

export interface Painter {
  green(s: string): string;
  red(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
  bold(s: string): string;
  dim(s: string): string;
}

const wrap = (open: number, close: number) => (s: string) => `\x1b[${open}m${s}\x1b[${close}m`;

export function painter(color: boolean): Painter {
  if (!color) {
    const id = (s: string) => s;
    return { green: id, red: id, yellow: id, cyan: id, bold: id, dim: id };
  }
  return {
    green: wrap(32, 39),
    red: wrap(31, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
    bold: wrap(1, 22),
    dim: wrap(2, 22),
  };
}

/** Colour by default on a terminal; NO_COLOR (https://no-color.org) and --no-color turn it off. */
export function wantsColor(flag: boolean | undefined, stream: NodeJS.WriteStream = process.stdout): boolean {
  if (flag === false || process.env.NO_COLOR) return false;
  return !!stream.isTTY;
}

export interface DiffLine {
  op: ' ' | '+' | '-';
  line: string;
}

/** Line diff by longest common subsequence (the objects we diff are a few dozen lines). */
export function lineDiff(before: readonly string[], after: readonly string[]): DiffLine[] {
  const n = before.length;
  const m = after.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i]![j] =
        before[i] === after[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (before[i] === after[j]) {
      out.push({ op: ' ', line: before[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push({ op: '-', line: before[i++]! });
    else out.push({ op: '+', line: after[j++]! });
  }
  while (i < n) out.push({ op: '-', line: before[i++]! });
  while (j < m) out.push({ op: '+', line: after[j++]! });
  return out;
}

/** Diff lines with `context` unchanged lines around each change; gaps shown as "…". */
export function renderDiff(lines: readonly DiffLine[], p: Painter, indent = '    ', context = 3): string[] {
  const keep = lines.map(() => false);
  lines.forEach((l, i) => {
    if (l.op === ' ') return;
    for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++) keep[k] = true;
  });
  const out: string[] = [];
  let skipped = false;
  lines.forEach((l, i) => {
    if (!keep[i]) {
      if (!skipped) out.push(p.dim(`${indent}  …`));
      skipped = true;
      return;
    }
    skipped = false;
    const text = `${l.op} ${indent}${l.line}`;
    out.push(l.op === '+' ? p.green(text) : l.op === '-' ? p.red(text) : p.dim(text));
  });
  return out;
}

/** A borderless table in kubectl's style. */
export function table(head: string[], rows: (string | number)[][]): string {
  const t = new Table({
    head,
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 3 },
    chars: {
      top: '',
      'top-mid': '',
      'top-left': '',
      'top-right': '',
      bottom: '',
      'bottom-mid': '',
      'bottom-left': '',
      'bottom-right': '',
      left: '',
      'left-mid': '',
      mid: '',
      'mid-mid': '',
      right: '',
      'right-mid': '',
      middle: '',
    },
  });
  for (const r of rows) t.push(r.map(String));
  return t
    .toString()
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n');
}

/** "3s", "5m", "2h", "4d" since an RFC 3339 time, like kubectl's AGE column. */
export function age(since: string | undefined, now = Date.now()): string {
  if (!since) return '-';
  const s = Math.max(0, Math.floor((now - Date.parse(since)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}
