// The benchmarks' wait: polls `probe` until it holds, failing after `timeoutMs` with what it waited for.
import { setTimeout as sleep } from 'node:timers/promises';

export async function waitFor(
  what: string,
  probe: () => boolean | Promise<boolean>,
  timeoutMs: number,
  everyMs = 250,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await sleep(everyMs);
  }
}
