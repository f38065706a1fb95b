// SIMULATOR helpers for tests: fast timings, a client for BMC i, a log sink to inspect.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { REDACT_PATHS, type Logger } from '../../../lib/log.js';
import { connectBmc, type Bmc, type ConnectOptions } from '../../../lib/redfish/index.js';
import type { SimTiming } from './model.js';
import type { SimProfileName } from './profiles.js';
import { startBmcSimulator, type BmcSimulator } from './server.js';
import { generateTls, type SimTls } from './tls.js';

export const FAST_TIMING: Partial<SimTiming> = {
  powerOnMs: 40,
  forceOffMs: 20,
  gracefulShutdownMs: 40,
  restartMs: 40,
  updateMs: 120,
  managerResetOutageMs: 300,
};

/** Fast waits for tests against the simulator. */
export const FAST_WAIT = { timeoutMs: 3_000, pollMs: 15 };

let sharedTls: SimTls | undefined;
/** One CA per test process: generating certificates costs ~50 ms each time. */
export function testTls(): SimTls {
  sharedTls ??= generateTls();
  return sharedTls;
}

/** A simulator with `per` BMCs of each profile in turn (fast timings), and the index of the k-th. */
export async function startProfileSim<P extends SimProfileName>(
  profiles: readonly P[],
  per: number,
): Promise<{ sim: BmcSimulator; idx: (profile: P, k: number) => number }> {
  const sim = await startBmcSimulator({
    count: profiles.length * per,
    profile: (i) => profiles[Math.floor(i / per)]!,
    tls: testTls(),
    timing: FAST_TIMING,
  });
  return { sim, idx: (profile, k) => profiles.indexOf(profile) * per + k };
}

export function openSimBmc(sim: BmcSimulator, i: number, extra: Partial<ConnectOptions> = {}): Promise<Bmc> {
  return connectBmc({
    endpoint: sim.endpoint(i),
    tls: { ca: sim.ca },
    credentials: sim.credentials,
    timeoutMs: 2_000,
    retryDelayMs: 20,
    ...extra,
  });
}

/** A debug-level logger (with the project's redaction) whose lines a test can read. */
export function captureLogger(): { logger: Logger; text: () => string } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const logger = pino({ level: 'debug', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink);
  return { logger, text: () => lines.join('') };
}
