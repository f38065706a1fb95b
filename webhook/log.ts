// The webhook's logger: lib/log.ts's settings (redaction, ISO time, pid), but written through a buffer.
// A denial is logged at info, and under load the webhook refuses hundreds of writes a second; one
// write(2) per line then costs more of the request thread than the decision itself (bench/webhook.ts).
// Lines are flushed when 4 KiB accumulate, every `flushMs`, and on flush() (lifecycle events, shutdown),
// so at most `flushMs` of lines is lost if the process is killed outright.
import { pino, type Logger } from 'pino';
import { REDACT_PATHS } from '../lib/log.js';

export interface BufferedLogger {
  logger: Logger;
  /** Writes out what is buffered (synchronously: safe on the way out). */
  flush(): void;
  /** Stops the flush timer after a last flush. */
  close(): void;
}

export function bufferedLogger(
  name: string,
  options: { level?: string; dest?: number | string; flushMs?: number } = {},
): BufferedLogger {
  // Synchronous like pino's default stdout destination, but in 4 KiB chunks: one write(2) per chunk on
  // this thread, no hand-off to the threadpool per line.
  const destination = pino.destination({ dest: options.dest ?? 1, sync: true, minLength: 4096 });
  const logger = pino(
    {
      name,
      level: options.level ?? process.env.LOG_LEVEL ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
  const flush = () => {
    try {
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
