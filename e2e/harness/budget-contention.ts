// Budget safety under contention, against the real API server and webhook replicas (used by
// test/integration/webhook/contention.int.test.ts and scripts/soak-budget.ts).
//
// One run: M ServerMaintenances over S servers in two fleets, each under a budget of K:
//   pool "flat"  one domain (no topologyKey)            at most K in maintenance
//   pool "racks" topologyKey rack, R racks              at most K per rack
// C clients, all authenticated as the maintenance controller's ServiceAccount, push every maintenance
// towards InMaintenance at once (a status write the eviction guard admits only with a grant). An
// admitted maintenance is held briefly, completed, and its grant released, as the maintenance
// controller's finalizer does; a refused one is retried after a short backoff. Part-way through, one
// webhook replica is SIGKILLed (requests in flight on it fail; the balancer fails over) and restarted.
//
// The invariant checker reads the watch streams of the budgets and the maintenances (raw watches from a
// resourceVersion taken before the first write) and fails the run if it ever sees, per budget domain,
// more than K servers with a grant on the ledger or more than K maintenances InMaintenance, or two
// maintenances InMaintenance on one server. After the run it merges both streams by resourceVersion
// (etcd revisions, one global order) and replays them: at no revision may a maintenance be InMaintenance
// without its grant on the ledger. The idle-slot oracle (idle-slot.ts) reads both streams too: no
// maintenance may stay admissible (its server free, room in its pool's domain, counted from the
// maintenances: a completed one holds its slot until its grant is released) for more than 10 s without
// a client getting it in, kill or not.
//
// Here: the scenario's options, result and entry point. The run's phases are contention-run.ts, the
// checker contention-checker.ts, the API plumbing contention-io.ts.
import { KubeClient } from '../../lib/kube/client.js';
import type { PolicyRule } from './env.js';
import type { WebhookHandle } from './webhook.js';
import type { IdleSlotReport } from './idle-slot.js';
import type { DomainPeak, LedgerCounts } from './contention-checker.js';
import { ContentionRun } from './contention-run.js';

export { InvariantChecker, type DomainPeak, type Pool, type WatchEvent } from './contention-checker.js';

const MAINT = 'maintenance.metal.ironcore.dev';
const METAL = 'metal.ironcore.dev';

/** What the maintenance controller's ServiceAccount may do, as far as this scenario writes. */
export const MAINTENANCE_CONTROLLER_RULES: PolicyRule[] = [
  {
    apiGroups: [MAINT],
    resources: ['servermaintenances'],
    verbs: ['get', 'list', 'watch', 'update', 'patch'],
  },
  { apiGroups: [MAINT], resources: ['servermaintenances/status'], verbs: ['get', 'update', 'patch'] },
  { apiGroups: [METAL], resources: ['servers', 'serverclaims'], verbs: ['get', 'list', 'watch'] },
  {
    apiGroups: [MAINT],
    resources: ['serverdisruptionbudgets', 'serverclaimdisruptionbudgets'],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroups: [MAINT],
    resources: ['serverdisruptionbudgets/status', 'serverclaimdisruptionbudgets/status'],
    verbs: ['get', 'update'],
  },
];

export interface ContentionOptions {
  admin: KubeClient;
  /** Kubeconfig of the maintenance controller's ServiceAccount. */
  controllerKubeconfig: string;
  webhook: WebhookHandle;
  /** Replica to kill part-way (undefined: none). */
  killReplica?: number;
  maintenances?: number;
  flatServers?: number;
  rackServers?: number;
  racks?: number;
  limit?: number;
  clients?: number;
  /** How long an admitted maintenance stays InMaintenance. */
  holdMs?: [number, number];
  /** Backoff after a refusal. */
  retryMs?: [number, number];
  timeoutMs?: number;
}

export interface ContentionResult {
  run: string;
  maintenances: number;
  servers: number;
  clients: number;
  limit: number;
  /** Transitions into InMaintenance admitted. */
  granted: number;
  /** Refusals by denial code (429s and 403s), and writes that never got an answer from a webhook. */
  denied: Record<string, number>;
  unreachable: number;
  /** Grants given back after a write that was refused by another step or surely not stored. */
  releasedAfterFailure: number;
  /** Ledger entries by fate, over both budgets (contention-checker.ts). */
  grants: LedgerCounts;
  /** Per budget domain, e.g. "flat" or "racks/r2". */
  peaks: Record<string, DomainPeak>;
  violations: string[];
  /** The idle-slot oracle's verdict: the longest admissible-but-waiting time and any stall. */
  idleSlot: IdleSlotReport;
  killedAfterMs?: number;
  watchEvents: number;
  durationMs: number;
  /** Of which: creating servers, maintenances and budgets; pushing until all completed. */
  setupMs: number;
  pushMs: number;
}

/** One contention run; see the file comment. Never leaves its clients or watches open. */
export async function runBudgetContention(o: ContentionOptions): Promise<ContentionResult> {
  const startedAt = Date.now();
  const run = new ContentionRun(o);
  const controller = await KubeClient.fromFile(o.controllerKubeconfig, { timeoutMs: 20_000 });
  try {
    await run.createFleet();
    await run.createBudgets(controller);
    run.setupMs = Date.now() - startedAt;
    const stopWatching = new AbortController();
    const watches = await run.watch(stopWatching.signal);
    try {
      const pushStarted = Date.now();
      await run.push();
      run.pushMs = Date.now() - pushStarted;
      await run.settle();
    } finally {
      stopWatching.abort();
      await Promise.all(watches);
    }
    return run.result(startedAt);
  } finally {
    await controller.close();
    // Budgets of finished runs select nothing any more; drop them so later runs start lean.
    for (const name of run.budgets.keys())
      await run
        .sdb()
        .delete(name)
        .catch(() => undefined);
  }
}

/** One line of figures per run. */
export function describeRun(r: ContentionResult): string {
  const peaks = Object.entries(r.peaks)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([d, p]) => `${d}=${p.granted}/${p.inMaintenance}`)
    .join(' ');
  const denied = Object.entries(r.denied)
    .sort(([, a], [, b]) => b - a)
    .map(([c, n]) => `${c.replace('METAL_ERR_', '')}:${n}`)
    .join(' ');
  const deniedTotal = Object.values(r.denied).reduce((a, b) => a + b, 0);
  return (
    `run ${r.run}: ${r.maintenances} maintenances, ${r.servers} servers, ${r.clients} clients, K=${r.limit}; ` +
    `granted ${r.granted}, denied ${deniedTotal} (${denied}), unreachable ${r.unreachable} ` +
    `(grants given back ${r.releasedAfterFailure}); ` +
    `ledger entries written ${r.grants.written} used ${r.grants.used} released ${r.grants.released} left ${r.grants.left}; ` +
    `peak granted/inMaintenance per domain: ${peaks}; ` +
    `longest admissible wait ${r.idleSlot.longestWaitMs} ms; ` +
    `replica killed after ${r.killedAfterMs ?? '-'} ms; ${r.watchEvents} watch events; ` +
    `${r.durationMs} ms (setup ${r.setupMs}, push ${r.pushMs})` +
    (r.violations.length ? `; VIOLATIONS: ${r.violations.join('; ')}` : '')
  );
}
