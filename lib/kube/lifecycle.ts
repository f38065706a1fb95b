// Process lifecycle of a binary: on SIGTERM/SIGINT stop gracefully within a bound, and make an
// uncaught error fatal (logged, then exit 1) rather than leaving a half-working controller.
import closeWithGrace from 'close-with-grace';
import type { Logger } from 'pino';

export interface Stoppable {
  stop(drainTimeoutMs?: number): Promise<void>;
}

export function runUntilSignal(target: Stoppable, logger: Logger, graceMs = 15_000): void {
  closeWithGrace({ delay: graceMs }, async ({ signal, err }) => {
    if (err) logger.fatal({ err: err.message, stack: err.stack }, 'fatal error; shutting down');
    else logger.info({ signal }, 'shutting down');
    await target.stop(Math.max(1000, graceMs - 3000));
    logger.flush?.();
  });
}
