// Structured logging (pino). Each binary creates one root logger; modules take child loggers with
// their own bindings. Fields that may carry credentials are redacted at the source.
import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'password',
  '*.password',
  '*.Password',
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'headers["x-auth-token"]',
  '*.headers.authorization',
  '*.headers["x-auth-token"]',
  'data',
  'stringData',
  '*.stringData',
];

export function createLogger(name: string, options: LoggerOptions = {}): Logger {
  return pino({
    name,
    level: process.env.LOG_LEVEL ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    ...options,
  });
}

/** A logger that drops everything, for tests and libraries used without one. */
export const silentLogger: Logger = pino({ level: 'silent' });
