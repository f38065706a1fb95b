// Leader election between real processes: one leader at a time; a frozen leader (SIGSTOP) is
// replaced within leaseDuration + retryPeriod; when it thaws it finds its lease gone and exits.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from '../../../e2e/harness/control-plane.js';
import { adminClient, controlPlane, freshNamespace, waitFor } from '../../../e2e/harness/env.js';
import { Core } from '../../../lib/kube/resources.js';
import type { Lease } from '../../../lib/kube/leader-election.js';
import type { KubeClient } from '../../../lib/kube/client.js';

interface Candidate {
  proc: ChildProcess;
  events: { event: string; at: number }[];
  exit: Promise<number | null>;
}

function candidate(ns: string, lease: string, identity: string): Candidate {
  const proc = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(REPO_ROOT, 'test', 'fixtures', 'lease-candidate.ts'),
      controlPlane().kubeconfig,
      ns,
      lease,
      identity,
    ],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const events: Candidate['events'] = [];
  createInterface({ input: proc.stdout }).on('line', (line) => events.push(JSON.parse(line)));
  const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, events, exit };
}

const has = (c: Candidate, event: string) => c.events.find((e) => e.event === event);

describe('leader election', () => {
  let admin: KubeClient;
  const procs: ChildProcess[] = [];
  beforeAll(async () => {
    admin = await adminClient();
  });
  afterAll(async () => {
    for (const p of procs) {
      p.kill('SIGCONT');
      p.kill('SIGKILL');
    }
    await admin.close();
  });

  test('a frozen leader is replaced within lease duration + retry period, then exits on waking', async () => {
    const ns = await freshNamespace(admin, 'lease');
    const a = candidate(ns, 'ctrl', 'a');
    procs.push(a.proc);
    await waitFor('a to lead', () => has(a, 'leading'), { timeoutMs: 30_000 });
    const b = candidate(ns, 'ctrl', 'b');
    procs.push(b.proc);
    await waitFor('b to start campaigning', () => has(b, 'started'), { timeoutMs: 30_000 });
    // While a renews, b must not lead.
    await new Promise((r) => setTimeout(r, 4000));
    expect(has(b, 'leading')).toBeUndefined();

    const frozenAt = Date.now();
    a.proc.kill('SIGSTOP');
    const led = await waitFor('b to take over', () => has(b, 'leading'), {
      timeoutMs: 30_000,
      intervalMs: 50,
    });
    const takeoverMs = led.at - frozenAt;
    // 15 s lease + 2 s retry (+20 % jitter) + process scheduling slack.
    expect(takeoverMs).toBeLessThanOrEqual(15_000 + 2_400 + 1_500);
    expect(takeoverMs).toBeGreaterThanOrEqual(10_000);

    const lease = await admin.resource<Lease>(Core.Lease).get('ctrl', ns);
    expect(lease.spec?.holderIdentity).toBe('b');
    expect(lease.spec?.leaseTransitions).toBe(1);

    a.proc.kill('SIGCONT');
    const code = await Promise.race([
      a.exit,
      new Promise((r) => setTimeout(() => r('still running'), 15_000)),
    ]);
    expect(code).toBe(1);
    expect(has(a, 'lost')).toBeDefined();
  }, 90_000);

  test('a leader that stops gracefully releases the lease so a standby takes over at once', async () => {
    const ns = await freshNamespace(admin, 'lease-release');
    const a = candidate(ns, 'ctrl', 'a');
    procs.push(a.proc);
    await waitFor('a to lead', () => has(a, 'leading'), { timeoutMs: 30_000 });
    const b = candidate(ns, 'ctrl', 'b');
    procs.push(b.proc);
    await waitFor('b to start campaigning', () => has(b, 'started'), { timeoutMs: 30_000 });
    await new Promise((r) => setTimeout(r, 1000));
    const stoppedAt = Date.now();
    a.proc.kill('SIGTERM');
    expect(await a.exit).toBe(0);
    const led = await waitFor('b to take over', () => has(b, 'leading'), {
      timeoutMs: 20_000,
      intervalMs: 50,
    });
    // A released lease is free at b's next retry, far sooner than the 15 s lease duration.
    expect(led.at - stoppedAt).toBeLessThan(5_000);
  }, 60_000);
});
