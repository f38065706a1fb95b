// The webhook's logger: lib/log.ts's settings (redaction, ISO time, pid), but written through a buffer.
// A denial is logged at info, and under load the webhook refuses hundreds of writes a second; one
// write(2) per line then costs more of the request thread than the decision itself (bench/webhook.ts).
// Lines are flushed when 4 KiB accumulate, every `flushMs`, and on flush() (lifecycle events, shutdown),
// so at most `flushMs` of lines is lost if the process is killed outright.
import { pino, type DestinationStream, type Logger } from 'pino';
import { REDACT_PATHS } from '../lib/log.js';

export interface BufferedLogger {
  logger: Logger;
  /** Writes out what is buffered (synchronously: safe on the way out). */
  flush(): void;
  /** Stops the flush timer after a last flush. */
  close(): void;
}

/** Lines are collected here and handed to the destination 4 KiB at a time. */
const CHUNK_CHARS = 4096;

/**
 * Holds lines and hands them to `out` joined, one write per ~4 KiB. sonic-boom's own buffering
 * (minLength) measures the whole pending buffer's UTF-8 length on every line, ~1.3 µs a line; this
 * counts characters (a flush threshold needs no exact byte count) and leaves sonic-boom one string per
 * chunk to write, with its handling of partial writes and EAGAIN.
 */
class LineBuffer implements DestinationStream {
  #lines: string[] = [];
  #chars = 0;
  constructor(private readonly out: DestinationStream) {}

  write(line: string): void {
    this.#lines.push(line);
    this.#chars += line.length;
    if (this.#chars >= CHUNK_CHARS) this.drain();
  }

  /** Hands what is held to the destination. */
  drain(): void {
    if (this.#lines.length === 0) return;
    const chunk = this.#lines.join('');
    this.#lines = [];
    this.#chars = 0;
    this.out.write(chunk);
  }
}

/**
 * pino's isoTime, with the date and time up to the second formatted once a second: new
 * Date().toISOString() on every line costs ~0.4 µs. Same output (`,"time":"…Z"`).
 */
export function isoTimeCached(now: () => number = Date.now): () => string {
  let second = Number.NaN;
  let prefix = '';
  return () => {
    const t = now();
    const ms = t % 1000;
    if (t - ms !== second) {
      second = t - ms;
      prefix = new Date(second).toISOString().slice(0, -4);
    }
    return `,"time":"${prefix}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z"`;
  };
}

export function bufferedLogger(
  name: string,
  options: { level?: string; dest?: number | string; flushMs?: number } = {},
): BufferedLogger {
  // Synchronous like pino's default stdout destination, but in 4 KiB chunks: one write(2) per chunk on
  // this thread, no hand-off to the threadpool per line.
  const destination = pino.destination({ dest: options.dest ?? 1, sync: true });
  const lines = new LineBuffer(destination);
  const logger = pino(
    {
      name,
      level: options.level ?? process.env.LOG_LEVEL ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { pid: process.pid },
      timestamp: isoTimeCached(),
    },
    lines,
  );
  const flush = () => {
    try {
      lines.drain();
      destination.flushSync();
    } catch {
      // not ready yet (the file is still opening) or already closed: the next flush writes it
    }
  };
  const timer = setInterval(flush, options.flushMs ?? 250);
  timer.unref();
  return {
    logger,
    flush,
    close() {
      clearInterval(timer);
      flush();
    },
  };
}

/**
 * The logger for the server's one line per review: `logger` without the redaction pass. That line holds
 * strings, numbers, booleans and a list of field names under fixed keys, none of them a redacted path,
 * so redaction never changes it; with wildcard paths (`*.password`) it would still run a censor check
 * on every field of every line. Anything else keeps logging through `logger`.
 */
export function reviewLogger(logger: Logger): Logger {
  return logger.child({}, { redact: [] });
}
