// scripts/demo.sh as a user runs it: --keep leaves a system to explore, one Ctrl-C stops it, and
// nothing is left behind (no directory under TMPDIR, no process). A small fleet and acts 1, 2 and 5,
// so it stays short; the full scenario is what the acts' own checks cover.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../harness/control-plane.js';
import { waitFor } from '../harness/env.js';

/** Pids whose command line mentions `text`. */
function processesMentioning(text: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('scripts/demo.sh --keep', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'demo-keep-test-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('keeps the system up until one Ctrl-C, then stops it and removes everything it made', async () => {
    const demo = spawn(
      'bash',
      [
        join(REPO_ROOT, 'scripts', 'demo.sh'),
        ...['--servers', '6', '--racks', '2', '--tenants', '2', '--webhook-replicas', '1'],
        ...['--acts', '1,2,5', '--keep'],
      ],
      { cwd: REPO_ROOT, env: { ...process.env, TMPDIR: tmp, NO_COLOR: '1' }, stdio: 'pipe' },
    );
    let out = '';
    demo.stdout.on('data', (b: Buffer) => (out += b.toString()));
    demo.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const exited = new Promise<number | null>((resolve) => demo.on('exit', (code) => resolve(code)));
    try {
      const kubeconfig = await waitFor(
        'the --keep instructions',
        () => /export KUBECONFIG=(\S+)/.exec(out)?.[1],
        { timeoutMs: 240_000, intervalMs: 500 },
      );
      const dir = readdirSync(tmp).find((d) => d.startsWith('metal-demo-'));
      expect(dir).toBeDefined();
      expect(kubeconfig.startsWith(join(tmp, dir!))).toBe(true);
      expect(out).toContain('kubectl metal status');
      expect(out).toMatch(/logs: one file per binary in \S+\/logs/);
      const logs = readdirSync(join(tmp, dir!, 'logs')).sort();
      expect(logs).toEqual(expect.arrayContaining(['maintenance-controller.log', 'webhook-0.log']));
      expect(readFileSync(join(tmp, dir!, 'logs', 'maintenance-controller.log'), 'utf8')).not.toBe('');
      // Everything the harness made (kubeconfigs, certificates) is inside the demo's directory.
      expect(readdirSync(tmp)).toEqual([dir]);
      expect(processesMentioning(join(tmp, dir!)).length).toBeGreaterThan(0);

      demo.kill('SIGINT');
      expect(await exited).toBe(130); // a Ctrl-C'd script's code, as bash reports it
      expect(out.match(/second SIG/g) ?? []).toEqual([]);
      expect(readdirSync(tmp)).toEqual([]);
      expect(processesMentioning(join(tmp, dir!))).toEqual([]);
    } finally {
      if (demo.exitCode === null) demo.kill('SIGKILL');
      if (process.env.METAL_TEST_LOGS) process.stderr.write(out);
    }
  }, 300_000);
});
