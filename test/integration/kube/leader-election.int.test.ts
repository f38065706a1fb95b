// Leader election between real processes: one leader at a time; a frozen leader (SIGSTOP) is
// replaced within leaseDuration + retryPeriod; when it thaws it finds its lease gone and exits. A
// leader that stops releases the lease, even when a renewal is in flight as it stops.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from '../../../e2e/harness/control-plane.js';
import { adminClient, controlPlane, freshNamespace, waitFor } from '../../../e2e/harness/env.js';
import { Core } from '../../../lib/kube/resources.js';
import { LeaderElector, type Lease } from '../../../lib/kube/leader-election.js';
import { KubeClient } from '../../../lib/kube/client.js';

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
  const candidates: Candidate[] = [];
  beforeAll(async () => {
    admin = await adminClient();
  });
  /** Process a leading the Lease 'ctrl' in ns, and process b campaigning for it. */
  async function leaderAndStandby(ns: string): Promise<{ a: Candidate; b: Candidate }> {
    const a = candidate(ns, 'ctrl', 'a');
    candidates.push(a);
    await waitFor('a to lead', () => has(a, 'leading'), { timeoutMs: 30_000 });
    const b = candidate(ns, 'ctrl', 'b');
    candidates.push(b);
    await waitFor('b to start campaigning', () => has(b, 'started'), { timeoutMs: 30_000 });
    return { a, b };
  }
  afterAll(async () => {
    for (const { proc } of candidates) {
      proc.kill('SIGCONT');
      proc.kill('SIGKILL');
    }
    // Wait for them to be gone so no child process outlives the suite.
    await Promise.all(candidates.map((c) => c.exit));
    await admin.close();
  });

  test('a frozen leader is replaced within lease duration + retry period, then exits on waking', async () => {
    const ns = await freshNamespace(admin, 'lease');
    const { a, b } = await leaderAndStandby(ns);
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
      // unref: the timer must not keep Jest waiting once the process has exited.
      new Promise((r) => setTimeout(() => r('still running'), 15_000).unref()),
    ]);
    expect(code).toBe(1);
    expect(has(a, 'lost')).toBeDefined();
  }, 90_000);

  test('a leader that stops gracefully releases the lease so a standby takes over at once', async () => {
    const { a, b } = await leaderAndStandby(await freshNamespace(admin, 'lease-release'));
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

  test('release waits for a renewal in flight, so the lease is freed rather than left to expire', async () => {
    const ns = await freshNamespace(admin, 'lease-inflight');
    // A real client whose Lease writes reach the API server; only the answer to the first renewal
    // after taking the lease is held back, to stop the elector between its write and its read of
    // the result: the moment a SIGTERM raced in the CI run that found this.
    const client = await KubeClient.fromFile(controlPlane().kubeconfig);
    const leases = client.resource<Lease>(Core.Lease);
    const write = leases.replace.bind(leases);
    let leading = false;
    let hold: (() => void) | undefined;
    const renewalCommitted = new Promise<void>((committed) => {
      leases.replace = async (lease, options) => {
        const written = await write(lease, options);
        if (leading && !hold) {
          const answer = new Promise<void>((r) => (hold = r));
          committed();
          await answer;
        }
        return written;
      };
    });
    client.resource = (() => leases) as KubeClient['resource'];
    const elector = new LeaderElector({
      client,
      namespace: ns,
      name: 'ctrl',
      identity: 'a',
      leaseDurationMs: 4_000,
      renewDeadlineMs: 2_000,
      retryPeriodMs: 200,
      onStartedLeading: () => (leading = true),
      onStoppedLeading: () => undefined,
    });
    const campaign = new AbortController();
    const running = elector.run(campaign.signal);
    try {
      await renewalCommitted;
      campaign.abort();
      const released = elector.release();
      // Give a release that does not wait time to write with the resourceVersion it saw last.
      await new Promise((r) => setTimeout(r, 300));
      hold?.();
      await released;
      await running;
      const lease = await admin.resource<Lease>(Core.Lease).get('ctrl', ns);
      expect(lease.spec?.holderIdentity).toBe('');
      expect(lease.spec?.leaseDurationSeconds).toBe(1);
    } finally {
      hold?.();
      campaign.abort();
      await client.close();
    }
  }, 30_000);
});
