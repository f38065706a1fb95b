// Replicas of one leader-elected binary, as a Deployment with spare replicas runs them: the first
// to take the Lease leads, the others stand by with synced caches. killLeader() is the kill -9 of
// the crash tests: it waits for a synced standby first (killing the only warm replica would test a
// cold start, not a takeover), SIGKILLs the leader, starts a new standby and waits for a new leader.
import { waitFor } from './env.js';
import type { RunningBinary } from './processes.js';

export interface Replicas {
  /** The replica that leads now. */
  readonly leader: RunningBinary;
  /** Every live replica. */
  readonly all: readonly RunningBinary[];
  /** kill -9 of the leader once a standby is synced; resolves when a standby leads. */
  killLeader(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts `count` replicas of the binary `spawn()` starts; resolves once they logged `<name>
 * started` and one of them leads.
 */
export async function startReplicas(
  name: string,
  spawn: () => RunningBinary,
  count: number,
): Promise<Replicas> {
  const identity = (b: RunningBinary) => b.logs.find((l) => l.msg === `${name} started`)?.identity;
  const leads = (b: RunningBinary) => {
    const seen = b.logs.filter((l) => l.msg === 'leader observed');
    return seen.length > 0 && identity(b) !== undefined && seen[seen.length - 1]!.leader === identity(b);
  };
  // Synced: its caches are filled and it campaigns for the Lease, so it can take over at once.
  const synced = (b: RunningBinary) => b.logs.some((l) => l.msg === 'caches synced');
  const replicas = Array.from({ length: count }, () => spawn());
  await Promise.all(replicas.map((r) => r.waitForLog((l) => l.msg === `${name} started`, 90_000)));
  await waitFor(`a ${name} leads`, () => replicas.some(leads), { timeoutMs: 30_000 });
  let leader = replicas.find(leads)!;
  return {
    get leader() {
      return leader;
    },
    get all() {
      return [...replicas];
    },
    async killLeader() {
      const current = replicas.find(leads);
      if (!current) throw new Error(`no ${name} leads`);
      await waitFor(`a synced ${name} standby`, () => replicas.some((r) => r !== current && synced(r)), {
        timeoutMs: 90_000,
        intervalMs: 50,
      });
      current.proc.kill('SIGKILL');
      await current.exited;
      replicas.splice(replicas.indexOf(current), 1);
      replicas.push(spawn());
      // A standby takes the Lease once the dead leader's expires (the callers run --lease-duration=3).
      await waitFor(`a new ${name} leader`, () => replicas.some(leads), {
        timeoutMs: 30_000,
        intervalMs: 50,
      });
      leader = replicas.find(leads)!;
    },
    async stop() {
      await Promise.all(replicas.map((r) => r.stop('SIGTERM', 15_000)));
    },
  };
}
