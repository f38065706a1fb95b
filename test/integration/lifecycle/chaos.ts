// The chaos of a rollout round: random lifecycle controllers (and, when asked, the one webhook replica)
// killed with SIGKILL at random moments and started again, each once per cycle in random order. The
// idle-slot oracle is told when the maintenance controller or the webhook is down: nothing can start
// then, by design, and that time does not count as a wait. A controller that exits on its own (a
// leader that lost its Lease under load) is restarted at once and counted as down the same way.
import { setTimeout as sleep } from 'node:timers/promises';
import type { IdleSlotOracle } from '../../../e2e/harness/idle-slot.js';
import { CONTROLLERS, type ControllerName, type Lifecycle } from './harness.js';
import type { RolloutOptions } from './rollout.js';

export type ChaosOptions = Pick<RolloutOptions, 'killEveryMs' | 'downMs' | 'log' | 'random' | 'killWebhook'>;

export function between([lo, hi]: [number, number], random: () => number): number {
  return lo + random() * (hi - lo);
}

export type Victim = ControllerName | 'webhook';

/** kill -9 of the one webhook replica: nothing can start until it serves again (the oracle pauses). */
export async function killWebhook(
  lc: Lifecycle,
  o: ChaosOptions,
  stats: ChaosStats,
  oracle: IdleSlotOracle,
  random: () => number,
): Promise<void> {
  const killedAt = Date.now();
  oracle.down('webhook', killedAt);
  await lc.webhook.kill(0, 'SIGKILL');
  stats.kills.webhook = (stats.kills.webhook ?? 0) + 1;
  o.log?.(`  kill -9 webhook (#${stats.kills.webhook})`);
  await sleep(between(o.downMs ?? [0, 1500], random));
  await lc.webhook.restart(0);
  stats.maxDowntimeMs = Math.max(stats.maxDowntimeMs, Date.now() - killedAt);
  oracle.up('webhook', Date.now());
}

export interface ChaosStats {
  kills: Partial<Record<Victim, number>>;
  /**
   * Controllers that exited without being killed: a leader that could not renew its Lease within the
   * renew deadline exits by design (on a loaded machine, with the short Leases), and is restarted at once,
   * as a kubelet would.
   */
  selfExits: Partial<Record<ControllerName, number>>;
  /** Longest time from a kill or an exit until the successor ran its controllers (ms). */
  maxDowntimeMs: number;
}

export async function chaos(
  lc: Lifecycle,
  o: ChaosOptions,
  done: () => boolean,
  stats: ChaosStats,
  oracle: IdleSlotOracle,
) {
  const random = o.random ?? Math.random;
  const restarting = new Map<Victim, Promise<unknown>>();
  /** Controllers being killed and restarted by this loop (their exit is not their own). */
  const killing = new Set<Victim>();
  /**
   * Watches one process of `c`: when it exits on its own, the oracle is told that `c` is down until its
   * successor runs (nothing can start while the maintenance controller is down, whoever ended it), and
   * the successor starts at once. Unwatched, such a controller stayed down until the loop next picked
   * it, up to a cycle of kills, and the oracle counted that time as a wait (issue 31).
   */
  const supervise = (c: ControllerName) => {
    const bin = lc.controllers[c];
    void bin.exited.then(() => {
      if (done() || killing.has(c) || restarting.has(c) || lc.controllers[c] !== bin) return;
      const exitedAt = Date.now();
      stats.selfExits[c] = (stats.selfExits[c] ?? 0) + 1;
      if (c === 'maintenance-controller') oracle.down(c, exitedAt);
      o.log?.(`  ${c} exited on its own (#${stats.selfExits[c]}); restarting`);
      restarting.set(
        c,
        lc
          .start(c)
          .then(() => {
            stats.maxDowntimeMs = Math.max(stats.maxDowntimeMs, Date.now() - exitedAt);
            oracle.up(c, Date.now());
            supervise(c);
          })
          .finally(() => restarting.delete(c)),
      );
    });
  };
  for (const c of CONTROLLERS) supervise(c);
  let order: Victim[] = [];
  while (!done()) {
    await sleep(between(o.killEveryMs ?? [1500, 4000], random));
    if (done()) break;
    // Victims in random order, each controller once per cycle, so every one of them gets killed; a
    // controller whose successor is still starting is skipped (that one is down already).
    if (order.length === 0)
      order = [...CONTROLLERS, ...(o.killWebhook ? (['webhook'] as const) : [])].sort(() => random() - 0.5);
    const victim = order.pop()!;
    if (restarting.has(victim)) continue;
    const killedAt = Date.now();
    if (victim === 'webhook') {
      restarting.set(victim, killWebhook(lc, o, stats, oracle, random));
      continue;
    }
    if (victim === 'maintenance-controller') oracle.down(victim, killedAt);
    killing.add(victim);
    await lc.kill(victim, 'SIGKILL');
    stats.kills[victim] = (stats.kills[victim] ?? 0) + 1;
    o.log?.(`  kill -9 ${victim} (#${stats.kills[victim]})`);
    const down = between(o.downMs ?? [0, 1500], random);
    restarting.set(
      victim,
      sleep(down)
        .then(() => lc.start(victim))
        .then(() => {
          stats.maxDowntimeMs = Math.max(stats.maxDowntimeMs, Date.now() - killedAt);
          oracle.up(victim, Date.now());
          killing.delete(victim);
          supervise(victim);
        })
        .finally(() => {
          killing.delete(victim);
          restarting.delete(victim);
        }),
    );
  }
  await Promise.all(restarting.values());
}
