// The demo's terminal: pure renderers (fleet grid by rack, tables, a progress bar) and LiveArea,
// which keeps a block of lines redrawn in place at the bottom while log lines scroll above it.
// Without a terminal (CI, a pipe) the live block is printed only now and then, as plain text.
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { painter, type Painter } from '../../cli/output.js';
import { RACK_LABEL } from '../sim/fleet/decisions.js';

export interface Glyph {
  symbol: string;
  paint: keyof Painter | 'magenta' | 'plain';
}

const MAINTENANCE_GLYPHS: Record<string, Glyph> = {
  InMaintenance: { symbol: 'M', paint: 'magenta' },
  Failed: { symbol: '!', paint: 'red' },
  Approved: { symbol: '✓', paint: 'cyan' },
  Announced: { symbol: 'A', paint: 'yellow' },
};

const SERVER_GLYPHS: Record<string, Glyph> = {
  Parked: { symbol: 'P', paint: 'magenta' },
  Reserved: { symbol: '●', paint: 'green' },
  Available: { symbol: '○', paint: 'plain' },
  Error: { symbol: '!', paint: 'red' },
};

/** One symbol per server: what matters most about it right now. */
export function glyphOf(server: Server, maintenance: ServerMaintenance | undefined): Glyph {
  if (maintenance?.metadata.deletionTimestamp) return { symbol: '◌', paint: 'dim' };
  if (maintenance)
    return MAINTENANCE_GLYPHS[maintenance.status?.state ?? ''] ?? { symbol: 'p', paint: 'yellow' };
  const state = server.status?.state ?? '';
  if (state !== 'Parked' && server.spec.unclaimable) return { symbol: '✕', paint: 'red' };
  return SERVER_GLYPHS[state] ?? { symbol: '·', paint: 'dim' };
}

export const LEGEND =
  '· booting  ○ free  ● claimed  ✕ cordoned  p pending  A announced  ✓ approved  M in maintenance  ◌ finishing';

function paintGlyph(p: Painter, color: boolean, g: Glyph): string {
  if (g.paint === 'plain') return g.symbol;
  if (g.paint === 'magenta') return color ? `\x1b[35m${g.symbol}\x1b[39m` : g.symbol;
  return p[g.paint](g.symbol);
}

/** The active (or next) maintenance of each server: InMaintenance first, then the most advanced. */
export function maintenanceByServer(
  maintenances: readonly ServerMaintenance[],
): Map<string, ServerMaintenance> {
  const rank = (m: ServerMaintenance) =>
    ['InMaintenance', 'Approved', 'Announced', 'Pending', 'Failed'].indexOf(m.status?.state ?? 'Pending');
  const out = new Map<string, ServerMaintenance>();
  for (const m of maintenances) {
    const cur = out.get(m.spec.serverRef.name);
    if (!cur || rank(m) < rank(cur)) out.set(m.spec.serverRef.name, m);
  }
  return out;
}

/** One line per rack: "rack-1  ● ● ○ …". */
export function renderRacks(
  servers: readonly Server[],
  maintenances: readonly ServerMaintenance[],
  color: boolean,
): string[] {
  const p = painter(color);
  const byServer = maintenanceByServer(maintenances);
  const racks = new Map<string, Server[]>();
  for (const s of servers) {
    const rack = s.metadata.labels?.[RACK_LABEL] ?? '-';
    racks.set(rack, [...(racks.get(rack) ?? []), s]);
  }
  return [...racks.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([rack, list]) => {
      const cells = list
        .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))
        .map((s) => paintGlyph(p, color, glyphOf(s, byServer.get(s.metadata.name ?? ''))));
      return `${rack.padEnd(8)} ${cells.join(' ')}`;
    });
}

export function progressBar(done: number, total: number, width = 30): string {
  const filled = total > 0 ? Math.round((done / total) * width) : 0;
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${done}/${total}`;
}

/** mm:ss since start. */
export function clock(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}

/** Fixed-width columns, left-aligned, cut to width. */
export function columns(rows: readonly (readonly string[])[], widths: readonly number[]): string[] {
  return rows.map((r) =>
    r
      .map((cell, i) => {
        const w = widths[i] ?? 12;
        return cell.length > w ? `${cell.slice(0, w - 1)}…` : cell.padEnd(w);
      })
      .join(' ')
      .trimEnd(),
  );
}

/**
 * A block of lines at the bottom of a terminal, redrawn in place; log() prints above it. On a
 * non-terminal, render() prints the block at most every `plainEveryMs`.
 */
export class LiveArea {
  readonly #out: NodeJS.WriteStream;
  readonly #tty: boolean;
  readonly #plainEveryMs: number;
  #lines: string[] = [];
  #drawn = 0;
  #lastPlain = 0;

  constructor(out: NodeJS.WriteStream = process.stdout, plainEveryMs = 10_000) {
    this.#out = out;
    this.#tty = !!out.isTTY;
    this.#plainEveryMs = plainEveryMs;
  }

  get isTTY(): boolean {
    return this.#tty;
  }

  #clear(): void {
    if (this.#drawn > 0) this.#out.write(`\x1b[${this.#drawn}A\x1b[0J`);
    this.#drawn = 0;
  }

  #draw(): void {
    const width = this.#out.columns || 120;
    const text = this.#lines.map((l) => cut(l, width)).join('\n');
    this.#out.write(`${text}\n`);
    this.#drawn = this.#lines.length;
  }

  render(lines: string[], force = false): void {
    this.#lines = lines;
    if (this.#tty) {
      this.#clear();
      this.#draw();
      return;
    }
    if (!force && Date.now() - this.#lastPlain < this.#plainEveryMs) return;
    this.#lastPlain = Date.now();
    this.#out.write(`${lines.join('\n')}\n`);
  }

  log(line: string): void {
    if (!this.#tty) {
      this.#out.write(`${line}\n`);
      return;
    }
    this.#clear();
    this.#out.write(`${line}\n`);
    this.#draw();
  }

  /** Leaves the last block on screen (terminal) and stops redrawing. */
  done(): void {
    this.#drawn = 0;
  }
}

/** Cuts a line to `width` visible characters, keeping ANSI colour codes intact. */
export function cut(line: string, width: number): string {
  let visible = 0;
  let out = '';
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '\x1b') {
      const end = line.indexOf('m', i);
      if (end > 0) {
        out += line.slice(i, end + 1);
        i = end;
        continue;
      }
    }
    if (visible >= width) continue;
    out += line[i];
    visible++;
  }
  return out;
}
