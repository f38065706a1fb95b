// Budget shapes of a rollout round (issue 31): the fleet budget alone; with a per-rack budget beside it;
// and with a tenant's ServerClaimDisruptionBudget in percent on top. Each shape creates its budgets and
// tells the idle-slot oracle what they are; a GrantTally counts, per round, the ledger entries written,
// used (their maintenance went InMaintenance), released and expired (gone unused past the TTL: what only
// the budget controller's expiry took away).
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerClaimDisruptionBudget } from '../../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import type { ServerDisruptionBudget } from '../../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { LedgerRef, OracleBudget } from '../../../e2e/harness/idle-slot.js';
import { TENANT_LABEL } from '../../../e2e/sim/fleet/fleet.js';
import { Informer } from '../../../lib/kube/informer.js';
import { ServerClaimDisruptionBudgetResource } from './harness.js';
import type { Fleet, Lifecycle } from './harness.js';

export type BudgetShape = 'fleet' | 'fleet+racks' | 'fleet+racks+tenant';

export const RACK_LABEL = 'lifecycle.metal.ironcore.dev/rack';

export interface ShapeOptions {
  shape: BudgetShape;
  /** maxUnavailable of the fleet budget. */
  budget: number;
  /** Racks the servers are spread over (round-robin) and the per-rack limit. */
  racks?: number;
  rackBudget?: number;
  /** maxUnavailable of the tenant's claim budget, a percentage. */
  tenantBudget?: string;
}

export interface ShapedBudgets {
  sdbs: string[];
  scdbs: { namespace: string; name: string }[];
  oracle: OracleBudget[];
}

/** Labels the servers with their rack and creates the shape's budgets over them. */
export async function createShape(
  lc: Lifecycle,
  round: string,
  selector: Record<string, string>,
  servers: readonly string[],
  claimed: Fleet,
  o: ShapeOptions,
): Promise<ShapedBudgets> {
  const racks = o.racks ?? 3;
  const rackOf = new Map(servers.map((s, i) => [s, `r${i % racks}`]));
  if (o.shape !== 'fleet')
    for (const [s, rack] of rackOf)
      await lc.servers.patch(s, { metadata: { labels: { [RACK_LABEL]: rack } } });
  const out: ShapedBudgets = { sdbs: [], scdbs: [], oracle: [] };
  const sdb = async (name: string, maxUnavailable: number, topologyKey?: string) => {
    await lc.sdbs.create({
      metadata: { name },
      spec: {
        serverSelector: { matchLabels: selector },
        maxUnavailable,
        ...(topologyKey ? { topologyKey } : {}),
      },
    });
    out.sdbs.push(name);
    out.oracle.push({
      name,
      domainOf: new Map(servers.map((s) => [s, topologyKey ? rackOf.get(s)! : ''])),
      maxUnavailable,
    });
  };
  await sdb(`${round}-budget`, o.budget);
  if (o.shape !== 'fleet') await sdb(`${round}-racks`, o.rackBudget ?? 1, RACK_LABEL);
  if (o.shape === 'fleet+racks+tenant') {
    const name = `${round}-tenant`;
    const maxUnavailable = o.tenantBudget ?? '25%';
    await lc.admin.resource<ServerClaimDisruptionBudget>(ServerClaimDisruptionBudgetResource).create({
      metadata: { name, namespace: claimed.tenant },
      spec: { claimSelector: { matchLabels: { [TENANT_LABEL]: claimed.tenant } }, maxUnavailable },
    });
    out.scdbs.push({ namespace: claimed.tenant, name });
    out.oracle.push({ name, domainOf: new Map(claimed.servers.map((s) => [s, ''])), maxUnavailable });
  }
  return out;
}

export async function deleteShape(lc: Lifecycle, b: ShapedBudgets): Promise<void> {
  for (const name of b.sdbs) await lc.sdbs.delete(name).catch(() => undefined);
  const scdbs = lc.admin.resource<ServerClaimDisruptionBudget>(ServerClaimDisruptionBudgetResource);
  for (const { namespace, name } of b.scdbs) await scdbs.delete(name, { namespace }).catch(() => undefined);
}

export interface GrantCounts {
  /** Ledger entries that appeared (a maintenance granted again after a release counts again). */
  written: number;
  /** Of which: their maintenance was InMaintenance while the entry stood. */
  used: number;
  /** Entries that left the ledger: after use, or unused before the TTL (released at the source). */
  released: number;
  /** Entries that left unused at or past the TTL: what only the budget controller's expiry cleaned. */
  expired: number;
  /** Entries still on a ledger when the tally stopped. */
  left: number;
}

type Ledgered = ServerDisruptionBudget | ServerClaimDisruptionBudget;

interface Entry {
  uid: string;
  grantedAt: number;
  used: boolean;
}

/**
 * Counts the round's ledger entries from watches of its budgets, and their fate. Expiry is read from the
 * watch, not from GrantExpired Events: a budget controller killed with Events still queued loses them,
 * and an entry gone unused TTL or more after it was written can only have been expired.
 */
export class GrantTally {
  readonly #live = new Map<string, Map<string, Entry>>(); // budget → entry key → entry
  readonly #running = new Set<string>(); // uids InMaintenance now
  readonly #counts: GrantCounts = { written: 0, used: 0, released: 0, expired: 0, left: 0 };
  readonly #names: ReadonlySet<string>;
  readonly #ttlMs: number;
  #started = false;
  readonly #informers: [Informer<ServerDisruptionBudget>, Informer<ServerClaimDisruptionBudget>];

  readonly #onLedger: ((budget: string, entries: readonly LedgerRef[]) => void) | undefined;

  constructor(
    lc: Lifecycle,
    budgets: ShapedBudgets,
    ttlMs: number,
    onLedger?: (budget: string, entries: readonly LedgerRef[]) => void,
  ) {
    this.#names = new Set([...budgets.sdbs, ...budgets.scdbs.map((b) => b.name)]);
    this.#ttlMs = ttlMs;
    this.#onLedger = onLedger;
    const sdbs = new Informer<ServerDisruptionBudget>(lc.sdbs);
    const scdbs = new Informer<ServerClaimDisruptionBudget>(
      lc.admin.resource<ServerClaimDisruptionBudget>(ServerClaimDisruptionBudgetResource),
    );
    sdbs.on({ add: (b) => this.#onBudget(b), update: (_o, b) => this.#onBudget(b) });
    scdbs.on({ add: (b) => this.#onBudget(b), update: (_o, b) => this.#onBudget(b) });
    this.#informers = [sdbs, scdbs];
  }

  async start(): Promise<void> {
    for (const inf of this.#informers) inf.start();
    await Promise.all(this.#informers.map((i) => i.waitForSync()));
    this.#started = true;
  }

  onMaintenance(m: ServerMaintenance, deleted: boolean): void {
    const uid = m.metadata.uid ?? '';
    if (!deleted && m.status?.state === 'InMaintenance') {
      this.#running.add(uid);
      for (const entries of this.#live.values())
        for (const e of entries.values()) if (e.uid === uid) e.used = true;
    } else this.#running.delete(uid);
  }

  #onBudget(b: Ledgered): void {
    const name = b.metadata.name ?? '';
    if (!this.#names.has(name)) return;
    const grants = b.status?.grants ?? [];
    const before = this.#live.get(name) ?? new Map<string, Entry>();
    const after = new Map<string, Entry>();
    for (const g of grants) {
      const key = `${g.maintenanceUID}@${g.grantedAt}`;
      after.set(key, before.get(key) ?? this.#written(g.maintenanceUID, g.grantedAt));
    }
    const now = Date.now();
    for (const [key, e] of before) if (!after.has(key)) this.#gone(e, now);
    this.#live.set(name, after);
    this.#onLedger?.(name, grants);
  }

  #written(uid: string, grantedAt: string): Entry {
    this.#counts.written++;
    return { uid, grantedAt: Date.parse(grantedAt), used: this.#running.has(uid) };
  }

  /** An entry left its ledger: released after use or early, or expired (unused, TTL reached). */
  #gone(e: Entry, now: number): void {
    if (e.used) this.#counts.used++;
    if (!e.used && now - e.grantedAt >= this.#ttlMs) this.#counts.expired++;
    else this.#counts.released++;
  }

  /** Stops the watches; the counts so far. */
  async counts(): Promise<GrantCounts> {
    if (this.#started) await Promise.all(this.#informers.map((i) => i.stop()));
    this.#started = false;
    let left = 0;
    let usedLeft = 0;
    for (const entries of this.#live.values())
      for (const e of entries.values()) {
        left++;
        if (e.used) usedLeft++;
      }
    return { ...this.#counts, used: this.#counts.used + usedLeft, left };
  }
}
