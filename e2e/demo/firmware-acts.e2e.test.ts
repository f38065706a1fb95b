// scripts/demo.sh's firmware acts as a user runs them (issues 25 and 26): act 6's BIOSVersionSet
// short-circuits on the server whose flash the simulator fails and finishes on the others once
// maxFailures is raised; act 7's pipeline stops the lane of the server whose BIOS flash fails, finishes
// every other lane, and after a factory reset reports DriftDetected, then repairs it. The demo checks
// each outcome against the cluster and the simulator's ledger itself (exit 1 naming what went
// wrong); this file checks what it shows: the summary's rows and the order of the log lines.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../harness/control-plane.js';

describe('scripts/demo.sh --acts 1,6,7', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'demo-fw-test-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('shows the failed server, the short-circuit, and DriftDetected then repaired', async () => {
    const demo = spawn(
      'bash',
      [join(REPO_ROOT, 'scripts', 'demo.sh'), '--webhook-replicas', '1', '--acts', '1,6,7'],
      { cwd: REPO_ROOT, env: { ...process.env, TMPDIR: tmp, NO_COLOR: '1' }, stdio: 'pipe' },
    );
    let out = '';
    demo.stdout.on('data', (b: Buffer) => (out += b.toString()));
    demo.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const code = await new Promise<number | null>((resolve) => demo.on('exit', (c) => resolve(c)));
    try {
      expect(out).not.toContain('problem:');
      expect(code).toBe(0);
      // Act 6: the first server of rack 1 failed, the Set short-circuited, the other 14 flashed once.
      expect(out).toMatch(
        /firmware {5}BIOSVersionSet bios-2-20: 14 of 15 servers at 2\.20\.0 \(one flash each\); r1-01 Failed \(UpgradeTaskFailed\), still at 1\.0\.0, not retried/,
      );
      expect(out).toMatch(
        /ShortCircuited=True \(TooManyFailures\): 1 of 15 BIOSVersion children Failed.*; [1-9]\d* held/,
      );
      const shortCircuit = out.indexOf('bios-2-20: ShortCircuited=True (TooManyFailures)');
      const raised = out.indexOf('$ kubectl patch biosversionset bios-2-20');
      expect(shortCircuit).toBeGreaterThan(-1);
      expect(raised).toBeGreaterThan(shortCircuit);
      // Act 7: one lane failed in a BIOS hop (the first, unless the fault was armed late), every other run completed, the status shown.
      expect(out).toMatch(
        /pipeline {5}chassis-baseline: 5 stages, 30 servers on 12 BMCs; 11 runs Completed, 1 Failed \(r6-0[1-3] failed in bios-fw(-2)?; the rest of chassis-baseline-bmc-50 finished\)/,
      );
      expect(out).toContain('MaintenancePipeline chassis-baseline: 5 stages');
      expect(out).toMatch(/runs: 12 \(0 InProgress, 0 Pending, 11 Completed, 1 Failed, 0 Stopping\)/);
      // The drift: reported, then repaired with one settings write.
      const reset = out.indexOf('factory reset of ');
      const drift = out.search(/chassis-baseline-bmc-\d+: DriftDetected=True/);
      const repaired = out.search(/chassis-baseline-bmc-\d+: Completed again, DriftDetected=False/);
      expect(reset).toBeGreaterThan(-1);
      expect(drift).toBeGreaterThan(reset);
      expect(repaired).toBeGreaterThan(drift);
      expect(out).toMatch(
        /DriftDetected=True on chassis-baseline-bmc-\d+, repaired with 1 settings write, Completed again/,
      );
      expect(out).toMatch(/left over {4}0 maintenances, 0 maintenance taints, 0 parked servers/);
    } finally {
      if (demo.exitCode === null) demo.kill('SIGKILL');
      if (process.env.METAL_TEST_LOGS || code !== 0) process.stderr.write(out);
    }
  }, 600_000);
});
