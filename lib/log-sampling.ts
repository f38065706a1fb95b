// Sampling of the webhook's per-review denial line and the controllers' decision lines, as zap samples in production (controller-runtime's default
// logger): in each one-second window, the first `initial` lines of a key are written, then every
// `thereafter`-th. A key is a route's denial code. A storm of refused retries (a controller binding to a
// cordoned server in a hot loop) would otherwise spend the request thread, whose timeout the API server
// counts, on writing the same line thousands of times a second. Every denial still reaches its caller,
// the decision counters and the API server's audit log; the line written next says how many of its key
// went unlogged (docs/webhook.md, "Logs").
import { InvalidArgumentError } from 'commander';

export interface LogSampling {
  /** Lines of a key written in full in each window. */
  initial: number;
  /** After those, every this-many-th line of the key is written. */
  thereafter: number;
}

export const DEFAULT_LOG_SAMPLING: Readonly<LogSampling> = { initial: 100, thereafter: 100 };

/** Per key: undefined to leave the line out, or how many lines of the key were left out since the last. */
export type LineSampler = (key: string) => number | undefined;

interface KeyWindow {
  window: number;
  seen: number;
  leftOut: number;
}

/** `now` in ms; a step of the clock just starts a window early or late. */
export function lineSampler(
  sampling: LogSampling,
  now: () => number = Date.now,
  windowMs = 1000,
): LineSampler {
  const { initial, thereafter } = sampling;
  // Keys are a route's denial codes: a fixed, small set.
  const windows = new Map<string, KeyWindow>();
  return (key) => {
    const window = Math.floor(now() / windowMs);
    let w = windows.get(key);
    if (!w) windows.set(key, (w = { window, seen: 0, leftOut: 0 }));
    else if (w.window !== window) {
      w.window = window;
      w.seen = 0;
    }
    const n = ++w.seen;
    if (n > initial && (n - initial) % thereafter !== 0) {
      w.leftOut++;
      return undefined;
    }
    const leftOut = w.leftOut;
    w.leftOut = 0;
    return leftOut;
  };
}

/** A sampler that writes every line. */
export const EVERY_LINE: LineSampler = () => 0;

/**
 * `--log-sampling`'s value: `INITIAL:THEREAFTER` (both integers ≥ 1), or `off` for every line. Throws
 * commander's InvalidArgumentError, which commander reports as a usage error naming the flag.
 */
export function parseLogSampling(text: string): LogSampling | false {
  if (text === 'off') return false;
  const m = /^(\d+):(\d+)$/.exec(text);
  const initial = m ? Number(m[1]) : Number.NaN;
  const thereafter = m ? Number(m[2]) : Number.NaN;
  if (!(initial >= 1 && thereafter >= 1 && Number.isSafeInteger(initial) && Number.isSafeInteger(thereafter)))
    throw new InvalidArgumentError(
      `expected INITIAL:THEREAFTER with integers >= 1 (e.g. 100:100: per rule and ` +
        `denial code, the first 100 lines a second, then every 100th) or "off", got ${JSON.stringify(text)}`,
    );
  return { initial, thereafter };
}

type LogFn = (fields: Record<string, unknown>, msg: string) => void;

/** One decision line, as a controller's pure mapping from a decision to its log line returns it. */
export interface DecisionLine {
  level: 'info' | 'warn';
  /** The sampling key and the line's `decision` field. */
  key: string;
  fields: Record<string, unknown>;
  msg: string;
}

/**
 * Decision lines at info (a maintenance admitted, waiting for a budget, failed), sampled per key as the
 * webhook's denials are: when a rack's fifty maintenances all wait on one budget, the first lines of
 * each key in a second are written, then every `thereafter`-th, and the next line written says how
 * many of its key were left out (`unlogged`). The key is the decision (and reason); the fields name
 * the object, so an operator can grep for one maintenance.
 */
export class DecisionLog {
  readonly #sample: LineSampler;

  constructor(
    readonly log: { info: LogFn; warn: LogFn },
    sampling: LogSampling | false = DEFAULT_LOG_SAMPLING,
    now: () => number = Date.now,
  ) {
    this.#sample = sampling ? lineSampler(sampling, now) : EVERY_LINE;
  }

  info(key: string, fields: Record<string, unknown>, msg: string): void {
    this.#line('info', key, fields, msg);
  }

  warn(key: string, fields: Record<string, unknown>, msg: string): void {
    this.#line('warn', key, fields, msg);
  }

  write(line: DecisionLine): void {
    this.#line(line.level, line.key, line.fields, line.msg);
  }

  #line(level: 'info' | 'warn', key: string, fields: Record<string, unknown>, msg: string): void {
    const leftOut = this.#sample(`${level}/${key}`);
    if (leftOut === undefined) return;
    this.log[level](
      leftOut > 0 ? { ...fields, decision: key, unlogged: leftOut } : { ...fields, decision: key },
      msg,
    );
  }
}
