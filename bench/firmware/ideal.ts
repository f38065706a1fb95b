// The ideal schedule of a firmware rollout under disruption budgets: the makespan the benchmark's
// measured rollout is compared against (makespan_ratio = measured / ideal).
//
// What "ideal" assumes:
// - Every update holds its servers for exactly T (the simulator's flash time) and nothing else:
//   no admission, park, reset, verify or release time, no poll delay.
// - A BIOS update is one job on its server; a BMC update is one job on every server behind that BMC
//   at once (all of them in maintenance together, as the controller requires).
// - A server is in at most one job at a time; at most K servers are in maintenance fleet-wide and
//   at most R in any one rack.
// - No order between the BIOS and the BMC rollouts (two Sets, independent).
// - Jobs run in rounds of T, which loses nothing: in any schedule, the jobs starting within one
//   stretch [kT, (k+1)T) all run at once at the latest of those starts, so they fit one round.
//   The greedy below is minimal whenever its rounds reach the work bound (`lowerBoundRounds`);
//   `exact` says whether they did. When not, the ideal reported is the greedy schedule's (an upper
//   bound on the true minimum) with the bound beside it.
import { MetalError } from '../../lib/errors.js';

export interface IdealInput {
  /** Rack of each server (index = server). */
  racks: readonly string[];
  /** BMC of each server (index = server). */
  bmcs: readonly number[];
  /** A BIOS update per server. */
  bios: boolean;
  /** A BMC update per BMC. */
  bmc: boolean;
  /** Fleet budget K: servers in maintenance at once. */
  budget: number;
  /** Per-rack budget R; undefined: no per-rack limit. */
  rackBudget?: number;
  /** Flash time T, ms. */
  flashMs: number;
}

export interface IdealSchedule {
  rounds: number;
  /** No schedule can take fewer rounds: work over K, rack work over R, jobs per server. */
  lowerBoundRounds: number;
  /** rounds === lowerBoundRounds: the schedule is minimal. */
  exact: boolean;
  makespanMs: number;
  /** Server-rounds of work (a BMC job counts each of its servers). */
  work: number;
}

interface Job {
  servers: number[];
  /** Servers of the job per rack. */
  perRack: Map<string, number>;
}

function jobOf(servers: number[], racks: readonly string[]): Job {
  const perRack = new Map<string, number>();
  for (const s of servers) perRack.set(racks[s]!, (perRack.get(racks[s]!) ?? 0) + 1);
  return { servers, perRack };
}

function jobsOf(i: IdealInput): Job[] {
  const jobs: Job[] = [];
  if (i.bmc) {
    const behind = new Map<number, number[]>();
    i.bmcs.forEach((b, s) => behind.set(b, [...(behind.get(b) ?? []), s]));
    for (const servers of behind.values()) jobs.push(jobOf(servers, i.racks));
  }
  if (i.bios) i.racks.forEach((_, s) => jobs.push(jobOf([s], i.racks)));
  // Largest first (a BMC's gang is hardest to place), then in input order: stable sort.
  return jobs.sort((a, b) => b.servers.length - a.servers.length);
}

function lowerBound(i: IdealInput, jobs: readonly Job[]): { rounds: number; work: number } {
  const work = jobs.reduce((a, j) => a + j.servers.length, 0);
  let rounds = Math.ceil(work / i.budget);
  if (i.rackBudget !== undefined) {
    const rackWork = new Map<string, number>();
    for (const j of jobs) for (const [r, n] of j.perRack) rackWork.set(r, (rackWork.get(r) ?? 0) + n);
    for (const w of rackWork.values()) rounds = Math.max(rounds, Math.ceil(w / i.rackBudget));
  }
  const perServer = new Map<number, number>();
  for (const j of jobs) for (const s of j.servers) perServer.set(s, (perServer.get(s) ?? 0) + 1);
  for (const n of perServer.values()) rounds = Math.max(rounds, n);
  return { rounds, work };
}

function checked(i: IdealInput): Job[] {
  if (i.racks.length !== i.bmcs.length)
    throw new MetalError('METAL_ERR_BENCH_INPUT', `${i.racks.length} racks for ${i.bmcs.length} servers`);
  if (!(i.budget >= 1) || (i.rackBudget !== undefined && !(i.rackBudget >= 1)))
    throw new MetalError('METAL_ERR_BENCH_INPUT', 'budgets must be at least 1');
  const jobs = jobsOf(i);
  for (const j of jobs) {
    const tooBig =
      j.servers.length > i.budget ||
      (i.rackBudget !== undefined && [...j.perRack.values()].some((n) => n > i.rackBudget!));
    if (tooBig)
      throw new MetalError(
        'METAL_ERR_BENCH_INPUT',
        `a job on ${j.servers.length} servers never fits the budgets (K=${i.budget}, R=${i.rackBudget ?? '-'})`,
      );
  }
  return jobs;
}

/** The minimal makespan of the rollout (see the assumptions above). Pure. */
export function idealSchedule(i: IdealInput): IdealSchedule {
  const jobs = checked(i);
  const bound = lowerBound(i, jobs);
  // Work still to do per rack and per server: each round serves the most loaded racks and the
  // servers with the most jobs left first (list order alone leaves the last racks a tail).
  const rackLeft = new Map<string, number>();
  const serverLeft = new Map<number, number>();
  for (const j of jobs) {
    for (const [r, n] of j.perRack) rackLeft.set(r, (rackLeft.get(r) ?? 0) + n);
    for (const s of j.servers) serverLeft.set(s, (serverLeft.get(s) ?? 0) + 1);
  }
  const urgency = (j: Job) => Math.max(...[...j.perRack.keys()].map((r) => rackLeft.get(r)!));
  const jobsLeft = (j: Job) => Math.max(...j.servers.map((s) => serverLeft.get(s)!));
  const done = (j: Job) => {
    for (const [r, n] of j.perRack) rackLeft.set(r, rackLeft.get(r)! - n);
    for (const s of j.servers) serverLeft.set(s, serverLeft.get(s)! - 1);
  };
  let left = jobs;
  let rounds = 0;
  while (left.length > 0) {
    rounds++;
    left = [...left].sort(
      (a, b) => urgency(b) - urgency(a) || jobsLeft(b) - jobsLeft(a) || b.servers.length - a.servers.length,
    );
    const busy = new Set<number>();
    const rackUse = new Map<string, number>();
    let used = 0;
    const next: Job[] = [];
    const placed: Job[] = [];
    for (const j of left) {
      const fits =
        used + j.servers.length <= i.budget &&
        j.servers.every((s) => !busy.has(s)) &&
        [...j.perRack].every(([r, n]) => (rackUse.get(r) ?? 0) + n <= (i.rackBudget ?? Infinity));
      if (!fits) {
        next.push(j);
        continue;
      }
      placed.push(j);
      used += j.servers.length;
      for (const s of j.servers) busy.add(s);
      for (const [r, n] of j.perRack) rackUse.set(r, (rackUse.get(r) ?? 0) + n);
    }
    // Counted down after the round, so the order within a round does not shift as it fills.
    for (const j of placed) done(j);
    left = next;
  }
  return {
    rounds,
    lowerBoundRounds: bound.rounds,
    exact: rounds === bound.rounds,
    makespanMs: rounds * i.flashMs,
    work: bound.work,
  };
}
