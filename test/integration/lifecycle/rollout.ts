// A budget-paced rollout with chaos: one maintenance per server (some servers get two), the simulated
// actor finishes each one shortly after it is Ready, and meanwhile random lifecycle controllers are
// killed with SIGKILL at random moments and started again. Shared by the crash e2e test and
// `npm run soak:crash` (scripts/soak-crash.ts).
//
// Checked throughout, from the watch history and by polling the budget ledger:
// - never more than K maintenances InMaintenance at once, never two on one server;
// - no ledger entry of a maintenance that is not InMaintenance lives longer than the grant TTL, plus
//   the longest time a killed controller was down (its successor must take the Lease and sync first);
// - no maintenance stays admissible (approved, server free, budget room, counted from the maintenances)
//   for more than 10 s without starting, while the maintenance controller runs (the idle-slot oracle,
//   e2e/harness/idle-slot.ts; a killed maintenance controller's downtime does not count);
// and at the end: every maintenance finished (none Failed), no server left tainted, parked or
// projected, no grant, and at most 5 % of the round's ledger entries ended by expiry (judgeGrants).
// The scenarios run with a long park timeout: how fast the simulator parks on a loaded machine is not
// what they test.
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import { FLEET_LABEL } from '../../../e2e/sim/fleet/fleet.js';
import { MAINTENANCE_TAINT_KEY, PARKED_ANNOTATION, PARKED_BY_ANNOTATION } from '../../../contract/names.js';
import {
  CONTROLLERS,
  TEST_POLICY,
  overlaps,
  peakInMaintenance,
  type Lifecycle,
  type StateRecord,
} from './harness.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { IdleSlotOracle, type IdleSlotReport } from '../../../e2e/harness/idle-slot.js';
import { Informer } from '../../../lib/kube/informer.js';
import { ServerClaimDisruptionBudgetResource, ServerMaintenanceResource } from '../../../lib/kube/kinds.js';
import type { ServerClaimDisruptionBudget } from '../../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import { chaos, type ChaosStats, type Victim } from './chaos.js';
import {
  GrantTally,
  createShape,
  deleteShape,
  type BudgetShape,
  type GrantCounts,
  type ShapedBudgets,
  type ShapeOptions,
} from './shapes.js';

/** The policy crash scenarios run with: the suite's, with a park timeout no loaded machine reaches. */
export const CHAOS_POLICY = { timeouts: { ...TEST_POLICY.timeouts, park: '5m' } };

export interface RolloutOptions {
  servers: number;
  /** Budget: maxUnavailable over the rollout's servers. */
  budget: number;
  /** The budgets beside it (shapes.ts): none (default), per rack, per rack and a tenant's in percent. */
  shape?: BudgetShape;
  racks?: ShapeOptions['racks'];
  rackBudget?: ShapeOptions['rackBudget'];
  tenantBudget?: ShapeOptions['tenantBudget'];
  /** Kill the (single) webhook replica too, in turn with the controllers. */
  killWebhook?: boolean;
  /** Servers that get a second maintenance (queued behind the first). */
  doubles?: number;
  /** Milliseconds between kills: uniformly random in [min, max]. */
  killEveryMs?: [number, number];
  /** How long a killed controller stays down before its successor starts. */
  downMs?: [number, number];
  /** The whole rollout must finish within this. */
  timeoutMs?: number;
  /** Grant TTL of the policy in force, and the reaction time allowed on top of it and of downtime. */
  ttlMs: number;
  ttlSlackMs?: number;
  log?: (line: string) => void;
  random?: () => number;
}

export interface RolloutResult {
  ok: boolean;
  problems: string[];
  durationMs: number;
  maintenances: number;
  kills: Partial<Record<Victim, number>>;
  /** Controllers that exited on their own (a lost Lease) and were restarted (chaos.ts). */
  selfExits: ChaosStats['selfExits'];
  /** Longest a killed or exited controller was down before its successor ran (ms). */
  maxDowntimeMs: number;
  peakInMaintenance: number;
  /** Longest a ledger entry stayed while its maintenance was not InMaintenance (ms). */
  maxIdleGrantAgeMs: number;
  stuckServers: string[];
  leftoverGrants: number;
  /** The idle-slot oracle's verdict: the longest admissible-but-waiting time and any stall. */
  idleSlot: IdleSlotReport;
  /** Ledger entries of the round's budgets: written, used, released, expired (GrantExpired Events). */
  grants: GrantCounts;
}

/** Creates the fleet, budget and maintenances of one rollout round. */
async function prepare(lc: Lifecycle, round: string, o: RolloutOptions) {
  const unclaimed = Math.ceil(o.servers / 2);
  // Half the servers are unclaimed (no approval needed), half are claimed with a standing approval.
  const a = await lc.fleet(`${round}-u`, { servers: unclaimed });
  const b = await lc.fleet(`${round}-c`, {
    servers: o.servers - unclaimed,
    claims: 'consumer',
    approvalMode: 'Automatic',
  });
  const servers = [...a.servers, ...b.servers];
  const caseKey = 'lifecycle.metal.ironcore.dev/round';
  for (const s of servers) await lc.servers.patch(s, { metadata: { labels: { [caseKey]: round } } });
  const shaped = await createShape(lc, round, { [FLEET_LABEL]: lc.fleetName, [caseKey]: round }, servers, b, {
    shape: o.shape ?? 'fleet',
    budget: o.budget,
    ...(o.racks !== undefined ? { racks: o.racks } : {}),
    ...(o.rackBudget !== undefined ? { rackBudget: o.rackBudget } : {}),
    ...(o.tenantBudget !== undefined ? { tenantBudget: o.tenantBudget } : {}),
  });
  const names: string[] = [];
  // The doubles queue behind the first maintenance of their server: priorities are 0 or more.
  const create = async (name: string, server: string, priority = 1) => {
    await lc.maintenance(name, server, { priority, reason: 'FirmwareUpdate', class: 'Urgent' });
    names.push(name);
  };
  await Promise.all(servers.map((s, i) => create(`${round}-m${i}`, s)));
  await Promise.all(servers.slice(0, o.doubles ?? 0).map((s, i) => create(`${round}-n${i}`, s, 0)));
  return { servers, names, shaped };
}

/**
 * The idle-slot oracle on this round's maintenances, fed by its own informer and a 250 ms tick (a stall
 * makes no events). Only the maintenance controller's downtime pauses it: it makes every start.
 */
async function watchIdleSlots(
  lc: Lifecycle,
  servers: readonly string[],
  oracle: IdleSlotOracle,
  tally: GrantTally,
) {
  const mine = new Set(servers);
  const informer = new Informer<ServerMaintenance>(
    lc.admin.resource<ServerMaintenance>(ServerMaintenanceResource),
    {
      namespace: lc.ns,
    },
  );
  const feed = (m: ServerMaintenance, deleted: boolean) => {
    if (!mine.has(m.spec.serverRef.name)) return;
    oracle.onMaintenance(m, deleted, Date.now());
    tally.onMaintenance(m, deleted);
  };
  informer.on({
    add: (m) => feed(m, false),
    update: (_o, m) => feed(m, false),
    delete: (m) => feed(m, true),
  });
  informer.start();
  await informer.waitForSync();
  const timer = setInterval(() => oracle.tick(Date.now()), 250);
  return {
    oracle,
    stop: async () => {
      clearInterval(timer);
      oracle.tick(Date.now());
      await informer.stop();
    },
  };
}

/**
 * Since when a grant has been idle: since its maintenance last left InMaintenance, or since the grant was
 * written when the watch never showed its maintenance InMaintenance. Undefined while it runs.
 */
export function idleSince(
  history: readonly StateRecord[],
  uid: string,
  grantedAt: number,
): number | undefined {
  let leftAt: number | undefined;
  let running = false;
  for (const r of history) {
    if (r.uid !== uid) continue;
    const now = r.state === 'InMaintenance' && !r.deleted;
    if (running && !now) leftAt = r.at;
    running = now;
  }
  if (running) return undefined;
  return leftAt ?? grantedAt;
}

/** Polls the ledgers: how long entries of maintenances that do not run stay (from the watch history). */
function watchGrants(lc: Lifecycle, budgets: readonly string[], done: () => boolean) {
  const stats = { maxIdleGrantAgeMs: 0 };
  const look = async (budget: string) => {
    const b = await lc.sdbs.get(budget);
    const now = Date.now();
    for (const g of b.status?.grants ?? []) {
      const since = idleSince(lc.history, g.maintenanceUID, Date.parse(g.grantedAt));
      if (since !== undefined) stats.maxIdleGrantAgeMs = Math.max(stats.maxIdleGrantAgeMs, now - since);
    }
  };
  const loop = (async () => {
    while (!done()) {
      // A busy API server: look again next time.
      for (const budget of budgets) await look(budget).catch(() => undefined);
      await sleep(250);
    }
  })();
  return { stats, loop };
}

/** Entries on the ledgers of the round's budgets. */
async function ledgerSize(lc: Lifecycle, budgets: ShapedBudgets): Promise<number> {
  let grants = 0;
  for (const name of budgets.sdbs) grants += (await lc.sdbs.get(name)).status?.grants?.length ?? 0;
  const scdbs = lc.admin.resource<ServerClaimDisruptionBudget>(ServerClaimDisruptionBudgetResource);
  for (const { namespace, name } of budgets.scdbs)
    grants += (await scdbs.get(name, namespace)).status?.grants?.length ?? 0;
  return grants;
}

async function leftovers(lc: Lifecycle, servers: string[], budgets: ShapedBudgets) {
  const stuck: string[] = [];
  for (const name of servers) {
    const s = await lc.servers.get(name);
    const a = s.metadata.annotations ?? {};
    if (
      s.spec.taints?.some((t) => t.key === MAINTENANCE_TAINT_KEY) ||
      a[PARKED_BY_ANNOTATION] ||
      a[PARKED_ANNOTATION] ||
      (s.status?.maintenance?.state ?? 'None') !== 'None'
    )
      stuck.push(name);
  }
  return { stuck, grants: await ledgerSize(lc, budgets) };
}

/** Waits until every server is released (the undo of the last maintenances takes a moment). */
async function settle(lc: Lifecycle, servers: string[], budgets: ShapedBudgets, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  let last = await leftovers(lc, servers, budgets);
  while ((last.stuck.length > 0 || last.grants > 0) && Date.now() < deadline) {
    await sleep(500);
    last = await leftovers(lc, servers, budgets);
  }
  return last;
}

/** One look at the round: drop the gone ones; report and finish the Failed ones (terminal until deleted). */
async function look(lc: Lifecycle, remaining: Set<string>, failed: Map<string, string>): Promise<void> {
  const list = await lc.maintenances.list({ namespace: lc.ns }).catch(() => undefined);
  if (!list) return;
  const present = new Set(list.items.map((m: ServerMaintenance) => m.metadata.name ?? ''));
  for (const n of [...remaining]) if (!present.has(n)) remaining.delete(n);
  for (const m of list.items) {
    const name = m.metadata.name ?? '';
    if (m.status?.state !== 'Failed' || !remaining.has(name)) continue;
    failed.set(name, m.status.conditions?.find((c) => c.type === 'Failed')?.reason ?? 'Failed');
    await lc.maintenances.delete(name, { namespace: lc.ns }).catch(() => undefined);
  }
}

/** Waits until every maintenance of the round is gone (or the deadline). */
async function awaitFinish(lc: Lifecycle, names: readonly string[], deadline: number) {
  const remaining = new Set(names);
  const failed = new Map<string, string>();
  while (remaining.size > 0 && Date.now() < deadline) {
    await look(lc, remaining, failed);
    await sleep(500);
  }
  return { remaining, failed };
}

interface Observed {
  failed: Map<string, string>;
  remaining: Set<string>;
  history: StateRecord[];
  servers: Set<string>;
  chaos: ChaosStats;
  maxIdleGrantAgeMs: number;
  left: { stuck: string[]; grants: number };
  idleSlot: IdleSlotReport;
}

/** What went wrong in a round, in words. */
function judge(o: RolloutOptions, r: Observed): { problems: string[]; peak: number } {
  const problems: string[] = [];
  const list = (xs: string[]) => xs.slice(0, 5).join(', ');
  if (r.failed.size > 0)
    problems.push(
      `${r.failed.size} maintenances Failed: ${list([...r.failed].map(([n, why]) => `${n} (${why})`))}`,
    );
  if (r.remaining.size > 0)
    problems.push(`${r.remaining.size} maintenances did not finish: ${list([...r.remaining])}`);
  const peak = peakInMaintenance(r.history, r.servers);
  if (peak > o.budget) problems.push(`${peak} InMaintenance at once, budget ${o.budget}`);
  const doubled = overlaps(r.history);
  if (doubled.length > 0) problems.push(`two holders at once on ${list(doubled)}`);
  // A grant may outlive its TTL only by the time the controllers that drop it were dead (a successor
  // takes the Lease and syncs its caches first), plus a few seconds of reaction time.
  const limit = o.ttlMs + r.chaos.maxDowntimeMs + (o.ttlSlackMs ?? 5000);
  if (r.maxIdleGrantAgeMs > limit)
    problems.push(`a grant outlived its TTL: ${r.maxIdleGrantAgeMs} ms > ${limit} ms`);
  if (r.left.stuck.length > 0) problems.push(`servers stuck: ${list(r.left.stuck)}`);
  if (r.left.grants > 0) problems.push(`${r.left.grants} grants left in the ledger`);
  for (const v of r.idleSlot.violations.slice(0, 5)) problems.push(`idle slot: ${v}`);
  return { problems, peak };
}

/**
 * The share of a round's ledger entries that may end by expiry (issue 31): a grant is released at its
 * source, and what only the TTL cleans (a write that may have been stored, its answer lost) must be rare.
 */
export const MAX_EXPIRED_SHARE = 0.05;

/** What the ledger tally says went wrong: too many grants expired, or some left at the end. */
export function judgeGrants(g: GrantCounts): string[] {
  const problems: string[] = [];
  if (g.expired > MAX_EXPIRED_SHARE * g.written)
    problems.push(`${g.expired} of ${g.written} grants expired (at most ${MAX_EXPIRED_SHARE * 100} % may)`);
  if (g.left > 0) problems.push(`${g.left} grants on the round's ledgers at the end`);
  return problems;
}

export async function rollout(lc: Lifecycle, round: string, o: RolloutOptions): Promise<RolloutResult> {
  const started = Date.now();
  const historyFrom = lc.history.length;
  const { servers, names, shaped } = await prepare(lc, round, o);
  const chaosStats: ChaosStats = {
    kills: Object.fromEntries(CONTROLLERS.map((c) => [c, 0])),
    selfExits: {},
    maxDowntimeMs: 0,
  };
  let finished = false;
  const done = () => finished;
  const grants = watchGrants(lc, shaped.sdbs, done);
  // The tally's budget watches feed the oracle the ledgers: an ended maintenance holds its slot until
  // its finalizer releases the grant.
  const oracle = new IdleSlotOracle({ budgets: shaped.oracle });
  const tally = new GrantTally(lc, shaped, o.ttlMs, (budget, entries) =>
    oracle.onLedger(budget, entries, Date.now()),
  );
  await tally.start();
  const idle = await watchIdleSlots(lc, servers, oracle, tally);
  const chaosLoop = chaos(lc, o, done, chaosStats, idle.oracle);
  const { remaining, failed } = await awaitFinish(lc, names, started + (o.timeoutMs ?? 240_000));
  finished = true;
  await chaosLoop;
  await grants.loop;
  await idle.stop();
  // Every controller runs again (the last kill may have just happened): let the undo finish.
  const left = await settle(lc, servers, shaped, 30_000);
  const { problems, peak } = judge(o, {
    failed,
    remaining,
    history: lc.history.slice(historyFrom),
    servers: new Set(servers),
    chaos: chaosStats,
    maxIdleGrantAgeMs: grants.stats.maxIdleGrantAgeMs,
    left,
    idleSlot: idle.oracle.report(),
  });
  const grantCounts = await tally.counts();
  problems.push(...judgeGrants(grantCounts));
  await deleteShape(lc, shaped);
  return {
    ok: problems.length === 0,
    problems,
    durationMs: Date.now() - started,
    maintenances: names.length,
    kills: chaosStats.kills,
    selfExits: chaosStats.selfExits,
    maxDowntimeMs: chaosStats.maxDowntimeMs,
    peakInMaintenance: peak,
    maxIdleGrantAgeMs: grants.stats.maxIdleGrantAgeMs,
    stuckServers: left.stuck,
    leftoverGrants: left.grants,
    idleSlot: idle.oracle.report(),
    grants: grantCounts,
  };
}
