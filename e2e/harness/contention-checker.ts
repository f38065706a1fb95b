// The invariant checker of a contention run (budget-contention.ts): it judges the watch streams of the
// budgets and the maintenances as they arrive (per budget domain at most K servers granted and K
// maintenances InMaintenance, never two on one server), and after the run replays both streams merged
// by resourceVersion (at no revision a maintenance InMaintenance without its grant). The replay also
// counts the ledger entries and their fate (issue 31): written, used (its maintenance InMaintenance while
// it was on the ledger), gone from the ledger, and left at the end. Those counts need the merged order:
// the two watch streams are independent, and the maintenance stream may deliver a start and its end
// before the budget stream delivers the grant they ran under. Pure: events in, violations, peaks and
// counts out.
import type { LedgerEntry, ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';

export interface DomainPeak {
  /** Most servers with a grant at once, seen on the watch stream. */
  granted: number;
  /** Most maintenances InMaintenance at once, seen on the watch stream. */
  inMaintenance: number;
}

export type Pool = 'flat' | 'racks';
export type WatchEvent<T> = { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'; object: T };

/** Ledger entries of a run, by fate. An entry is one grant (maintenance uid and grantedAt) on one budget. */
export interface LedgerCounts {
  written: number;
  /** Of those, entries whose maintenance was InMaintenance while they were on the ledger. */
  used: number;
  /** Entries that left their ledger (released after use, or given back unused). */
  released: number;
  /** Entries still on a ledger at the end. */
  left: number;
}
interface Recorded {
  rv: number;
  kind: 'budget' | 'maintenance';
  type: string;
  object: ServerDisruptionBudget | ServerMaintenance;
}

/** Judges the watch streams of one run (exported for its own unit test). */
export class InvariantChecker {
  readonly violations: string[] = [];
  readonly peaks: Record<string, DomainPeak> = {};
  readonly events: Recorded[] = [];
  readonly #limit: number;
  /** server → domain key ("flat", "racks/r1"). */
  readonly #domainOf: Map<string, string>;
  readonly #budgets: Map<string, Pool>;
  readonly #inMaintenance = new Map<string, string>(); // maintenance name → server
  completed = new Set<string>();
  ledgerSize = new Map<string, number>();
  /** pool → entry key → whether it was used. */
  readonly #entries = new Map<Pool, Map<string, boolean>>();
  readonly #running = new Set<string>(); // uids InMaintenance now
  readonly #counts = { written: 0, used: 0, released: 0 };

  constructor(limit: number, domainOf: Map<string, string>, budgets: Map<string, Pool>) {
    this.#limit = limit;
    this.#domainOf = domainOf;
    this.#budgets = budgets;
    for (const d of new Set(domainOf.values())) this.peaks[d] = { granted: 0, inMaintenance: 0 };
  }

  #peak(domain: string, field: keyof DomainPeak, n: number, what: string) {
    const p = (this.peaks[domain] ??= { granted: 0, inMaintenance: 0 });
    p[field] = Math.max(p[field], n);
    if (n > this.#limit) this.violations.push(`${domain}: ${n} ${what} > ${this.#limit}`);
  }

  onBudget(e: WatchEvent<ServerDisruptionBudget>): void {
    const pool = this.#budgets.get(e.object.metadata.name ?? '');
    if (!pool || e.type === 'BOOKMARK') return;
    this.events.push({
      rv: Number(e.object.metadata.resourceVersion),
      kind: 'budget',
      type: e.type,
      object: e.object,
    });
    const grants = e.type === 'DELETED' ? [] : (e.object.status?.grants ?? []);
    this.ledgerSize.set(pool, grants.length);
    const perDomain = new Map<string, Set<string>>();
    for (const g of grants) {
      const domain = pool === 'flat' ? 'flat' : `racks/${g.domain ?? ''}`;
      let set = perDomain.get(domain);
      if (!set) perDomain.set(domain, (set = new Set()));
      set.add(g.server);
    }
    for (const [domain, set] of perDomain) this.#peak(domain, 'granted', set.size, 'servers granted');
  }

  onMaintenance(e: WatchEvent<ServerMaintenance>): void {
    if (e.type === 'BOOKMARK') return;
    const m = e.object;
    const name = m.metadata.name ?? '';
    this.events.push({
      rv: Number(m.metadata.resourceVersion),
      kind: 'maintenance',
      type: e.type,
      object: m,
    });
    if (m.status?.state === 'Completed') this.completed.add(name);
    if (e.type !== 'DELETED' && m.status?.state === 'InMaintenance')
      this.#inMaintenance.set(name, m.spec.serverRef.name);
    else this.#inMaintenance.delete(name);
    const server = m.spec.serverRef.name;
    const domain = this.#domainOf.get(server);
    if (!domain) return;
    const onServer = [...this.#inMaintenance.values()].filter((s) => s === server).length;
    if (onServer > 1)
      this.violations.push(`server ${server}: ${onServer} maintenances InMaintenance at once`);
    const inDomain = [...this.#inMaintenance.values()].filter((s) => this.#domainOf.get(s) === domain).length;
    this.#peak(domain, 'inMaintenance', inDomain, 'maintenances InMaintenance');
  }

  /** The ledger entries of the history replayed last (replay()), by fate (LedgerCounts). */
  ledgerCounts(): LedgerCounts {
    let left = 0;
    let usedLeft = 0;
    for (const entries of this.#entries.values())
      for (const used of entries.values()) {
        left++;
        if (used) usedLeft++;
      }
    return { ...this.#counts, used: this.#counts.used + usedLeft, left };
  }

  #tally(pool: Pool, grants: readonly LedgerEntry[]): void {
    const before = this.#entries.get(pool) ?? new Map<string, boolean>();
    const after = new Map<string, boolean>();
    for (const g of grants) {
      const key = `${g.maintenanceUID}@${g.grantedAt}`;
      const was = before.get(key);
      if (was === undefined) this.#counts.written++;
      after.set(key, was ?? this.#running.has(g.maintenanceUID));
    }
    for (const [key, used] of before)
      if (!after.has(key)) {
        this.#counts.released++;
        if (used) this.#counts.used++;
      }
    this.#entries.set(pool, after);
  }

  #onRunning(uid: string, running: boolean): void {
    if (!running) {
      this.#running.delete(uid);
      return;
    }
    this.#running.add(uid);
    for (const entries of this.#entries.values())
      for (const key of entries.keys()) if (key.startsWith(`${uid}@`)) entries.set(key, true);
  }

  /**
   * Both streams merged by resourceVersion: at no revision is a maintenance InMaintenance without its
   * grant on the ledger, nor more than K servers granted or in maintenance per domain.
   */
  replay(): void {
    const grants = new Map<Pool, LedgerEntry[]>();
    const inMaintenance = new Map<string, { uid: string; server: string }>();
    this.#entries.clear();
    this.#running.clear();
    Object.assign(this.#counts, { written: 0, used: 0, released: 0 });
    for (const ev of [...this.events].sort((a, b) => a.rv - b.rv)) {
      if (ev.kind === 'budget') {
        const b = ev.object as ServerDisruptionBudget;
        const pool = this.#budgets.get(b.metadata.name ?? '')!;
        const entries = ev.type === 'DELETED' ? [] : (b.status?.grants ?? []);
        grants.set(pool, entries);
        this.#tally(pool, entries);
      } else {
        const m = ev.object as ServerMaintenance;
        const name = m.metadata.name ?? '';
        const running = ev.type !== 'DELETED' && m.status?.state === 'InMaintenance';
        if (running) inMaintenance.set(name, { uid: m.metadata.uid ?? '', server: m.spec.serverRef.name });
        else inMaintenance.delete(name);
        this.#onRunning(m.metadata.uid ?? '', running);
      }
      this.#judgeRevision(ev.rv, grants, inMaintenance);
    }
  }

  #judgeRevision(
    rv: number,
    grants: Map<Pool, LedgerEntry[]>,
    inMaintenance: Map<string, { uid: string; server: string }>,
  ): void {
    const held = new Map<string, Set<string>>(); // domain → servers granted or in maintenance
    const hold = (domain: string, server: string) => {
      const set = held.get(domain) ?? new Set<string>();
      held.set(domain, set.add(server));
    };
    const granted = new Set<string>();
    for (const [pool, entries] of grants)
      for (const g of entries) {
        granted.add(g.maintenanceUID);
        hold(pool === 'flat' ? 'flat' : `racks/${g.domain ?? ''}`, g.server);
      }
    for (const [name, { uid, server }] of inMaintenance) {
      if (!granted.has(uid)) this.violations.push(`revision ${rv}: ${name} InMaintenance without a grant`);
      hold(this.#domainOf.get(server) ?? '?', server);
    }
    for (const [domain, set] of held)
      if (set.size > this.#limit)
        this.violations.push(`revision ${rv}: ${domain} has ${set.size} servers granted or in maintenance`);
  }
}
