// The image's files (/app) that the suites start binaries from, built by scripts/build-dist.sh (the
// Dockerfile's own steps) and never stale: a build records the digest of its inputs (every file
// the Dockerfile copies from the repository) in .inputs, and prepareDist rebuilds whenever the
// checkout's digest differs, so an edit is always what the next test runs, and an unchanged
// checkout reuses the build across runs (a developer running one file after another pays for it
// once). Outside the repository on purpose: beside its node_modules a production dependency the
// image lacks would still resolve.
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './control-plane.js';

const run = promisify(execFile);
const SCRIPT = join(REPO_ROOT, 'scripts', 'build-dist.sh');

/** Upper bound for a suite's setup when it may be the one that builds the dist (prepareDist). */
export const SETUP_TIMEOUT_MS = 20 * 60_000;

/** Lease flags for binaries the e2e suites kill: a successor takes over seconds after a kill -9, not 15 s. */
export const SHORT_LEASE_ARGS = ['--lease-duration=3', '--renew-deadline=2', '--retry-period=0.5'] as const;

/**
 * METAL_TEST_DIST when set (any directory outside a Node project), else one directory per checkout
 * under the system's temporary directory, kept between runs.
 */
export function distDir(): string {
  const given = process.env.METAL_TEST_DIST;
  if (given) return resolve(given);
  const checkout = createHash('sha256').update(REPO_ROOT).digest('hex').slice(0, 12);
  return join(tmpdir(), `metal-maintenance-app-${checkout}`);
}

/** The digest of the checkout's build inputs, as build-dist.sh computes it. */
export function inputsDigest(): string {
  return execFileSync('bash', [SCRIPT, '--digest'], { encoding: 'utf8', timeout: 60_000 }).trim();
}

/** The digest `dir` was built from; undefined if no build finished there. */
export function builtDigest(dir: string): string | undefined {
  const stamp = join(dir, '.inputs');
  return existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() : undefined;
}

/** The nearest node_modules above `dir`, which Node's resolution would fall back on. */
export function enclosingNodeModules(dir: string): string | undefined {
  for (let d = dirname(resolve(dir)); ; d = dirname(d)) {
    if (existsSync(join(d, 'node_modules'))) return join(d, 'node_modules');
    if (dirname(d) === d) return undefined;
  }
}

let prepared: string | undefined;

/**
 * The image's files for the checkout as it is now: reused when built from the same inputs, else
 * (re)built under a lock, so concurrent Jest processes build once and the second reuses it. A
 * build takes a few minutes: suites that may do it allow SETUP_TIMEOUT_MS for their setup
 * (scripts/test.sh builds it as a step of its own first).
 */
export async function prepareDist(): Promise<string> {
  const out = distDir();
  const above = enclosingNodeModules(out);
  if (above)
    throw new Error(
      `the image files' directory ${out} lies below ${above}: a production dependency the image lacks ` +
        'would resolve from there. Set METAL_TEST_DIST to a directory outside any Node project.',
    );
  const want = inputsDigest();
  if (builtDigest(out) !== want) {
    try {
      // flock: the second process waits, then finds the first one's build current and skips it.
      await run(
        'flock',
        [
          `${out}.lock`,
          'bash',
          '-c',
          '[[ "$(cat "$1/.inputs" 2>/dev/null)" == "$3" ]] || bash "$2" "$1" >/dev/null',
          '_',
          out,
          SCRIPT,
          want,
        ],
        { encoding: 'utf8', timeout: 18 * 60_000, maxBuffer: 64 * 1024 * 1024 },
      );
    } catch (e) {
      const err = e as { stderr?: string; message: string };
      throw new Error(`scripts/build-dist.sh ${out} failed: ${err.stderr || err.message}`, { cause: e });
    }
    const got = builtDigest(out);
    if (got !== want)
      throw new Error(
        `${out} was built from other inputs (${got}) than the checkout's (${want}): ` +
          'were sources edited during the build? Run the test again.',
      );
  }
  prepared = out;
  return out;
}

/** The image's files once prepareDist() has made them current in this process. */
export function sharedDist(): string {
  if (!prepared)
    throw new Error('no current image files: await prepareDist() before starting a binary from them');
  return prepared;
}
