// The idle-slot oracle (issue 31): a pure checker over a run's watch stream that knows, at every event,
// which maintenances could start now, and fails a run in which one of them stays startable for longer
// than a bound (10 s) without becoming InMaintenance: a free slot left idle next to a waiting
// maintenance, whatever the cause (a lost wake-up, a backoff running out, a grant left to its TTL).
//
// Startable ("admissible") means, from the watch stream alone:
// - waiting: not InMaintenance, Completed or Failed, not being deleted;
// - approved (status.approval set), unless the run needs no approval;
// - its notBefore (status, else spec.approval) has passed, and the policy window is open;
// - its server is free: not held by another maintenance;
// - every budget that selects its server has room in the server's domain: fewer servers held than
//   the budget allows there.
// A server is held by a maintenance InMaintenance on it, and by one that has ended (Completed, Failed,
// being deleted) while its grant is still on a ledger (onLedger): its finalizer is still undoing, and
// the contract counts the server unavailable until then. Room is counted from the maintenances, never
// from the ledger alone: a grant of a maintenance that never started is exactly the idle slot this
// looks for. maxAllowedUnavailable is the contract's one formula (PDB rounding).
//
// Time is the caller's: every call takes `now` (epoch ms). A stall produces no events, so the caller
// also calls tick(now) on a timer. Time while a binary is down (between down() and up(): a kill -9, or
// an exit of its own such as a lost Lease, until its successor holds the Lease and runs) does not count:
// nothing can start then by design.
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { maxAllowedUnavailable } from '../../contract/budget-room.js';

/** A budget as the oracle needs it: which servers it selects, in which domain, and its limit. */
export interface OracleBudget {
  name: string;
  /** server → domain ('' for a budget without topologyKey) for every server it selects. */
  domainOf: ReadonlyMap<string, string>;
  /** An integer or a percentage of the domain's servers, as in the budget's spec. */
  maxUnavailable: number | string;
}

export interface IdleSlotOptions {
  budgets: readonly OracleBudget[];
  /** Longest a maintenance may stay admissible without starting (ms); default 10 000. */
  limitMs?: number;
  /** Whether a maintenance must carry status.approval to start (false: runs that push directly). */
  approvalRequired?: boolean;
  /** Whether the policy lets `m` start at `now` (windows); default always. */
  windowOpen?: (m: ServerMaintenance, now: number) => boolean;
}

export interface IdleSlotReport {
  /** One line per maintenance that waited past the limit while admissible. */
  violations: string[];
  /** The longest admissible-but-waiting time seen (ms, outages excluded), and whose. */
  longestWaitMs: number;
  longestWaiter: string | undefined;
  /** Maintenances seen entering InMaintenance after having been admissible. */
  started: number;
}

/** A ledger entry as far as the oracle reads it. */
export interface LedgerRef {
  maintenanceUID: string;
  server: string;
}

interface Held {
  servers: Set<string>;
  /** Per budget (by index): domain → servers held there. */
  inUse: Map<string, number>[];
}

interface Tracked {
  m: ServerMaintenance;
  /** Admissible time accumulated since it last became admissible (ms); undefined while not admissible. */
  waited: number | undefined;
  flagged: boolean;
}

const keyOf = (m: ServerMaintenance) => m.metadata.uid ?? `${m.metadata.namespace}/${m.metadata.name}`;
const nameOf = (m: ServerMaintenance) => `${m.metadata.namespace ?? ''}/${m.metadata.name ?? ''}`;
const isIn = (m: ServerMaintenance) => m.status?.state === 'InMaintenance';
/** Done or being deleted: what is left of it is its finalizer's undo. */
const ended = (m: ServerMaintenance) =>
  m.status?.state === 'Completed' || m.status?.state === 'Failed' || !!m.metadata.deletionTimestamp;

export class IdleSlotOracle {
  readonly violations: string[] = [];
  #longestWaitMs = 0;
  #longestWaiter: string | undefined;
  #started = 0;
  readonly #limitMs: number;
  readonly #approvalRequired: boolean;
  readonly #windowOpen: (m: ServerMaintenance, now: number) => boolean;
  readonly #budgets: readonly { b: OracleBudget; sizes: Map<string, number> }[];
  readonly #tracked = new Map<string, Tracked>();
  readonly #down = new Set<string>();
  /** budget → its ledger's entries (maintenance uid, server), as last seen. */
  readonly #ledgers = new Map<string, readonly LedgerRef[]>();
  #last: number | undefined;

  constructor(o: IdleSlotOptions) {
    this.#limitMs = o.limitMs ?? 10_000;
    this.#approvalRequired = o.approvalRequired ?? true;
    this.#windowOpen = o.windowOpen ?? (() => true);
    this.#budgets = o.budgets.map((b) => {
      const sizes = new Map<string, number>();
      for (const d of b.domainOf.values()) sizes.set(d, (sizes.get(d) ?? 0) + 1);
      return { b, sizes };
    });
  }

  /** A maintenance as the watch delivered it (deleted: a DELETED event). */
  onMaintenance(m: ServerMaintenance, deleted: boolean, now: number): void {
    this.#advance(now);
    const key = keyOf(m);
    const before = this.#tracked.get(key);
    if (deleted) this.#tracked.delete(key);
    else {
      if (before?.waited !== undefined && isIn(m)) this.#started++;
      this.#tracked.set(key, { m, waited: before?.waited, flagged: before?.flagged ?? false });
    }
    this.#judge(now);
  }

  /** A budget's ledger as the watch delivered it (an empty list once the budget is gone). */
  onLedger(budget: string, entries: readonly LedgerRef[], now: number): void {
    this.#advance(now);
    this.#ledgers.set(budget, entries);
    this.#judge(now);
  }

  /** A binary was killed: from now until up(), waiting time does not count. */
  down(binary: string, now: number): void {
    this.#advance(now);
    this.#down.add(binary);
  }

  /** Its successor runs again (holds its Lease, caches synced). */
  up(binary: string, now: number): void {
    this.#advance(now);
    this.#down.delete(binary);
    this.#judge(now);
  }

  /** Time passes without events. */
  tick(now: number): void {
    this.#advance(now);
    this.#judge(now);
  }

  report(): IdleSlotReport {
    return {
      violations: [...this.violations],
      longestWaitMs: this.#longestWaitMs,
      longestWaiter: this.#longestWaiter,
      started: this.#started,
    };
  }

  /** Which maintenances are admissible now (names), for tests and for a failing run's message. */
  admissible(now: number): string[] {
    const held = this.#held();
    return [...this.#tracked.values()]
      .filter((t) => this.#admissible(t.m, held, now))
      .map((t) => nameOf(t.m));
  }

  /** Credits the time since the last call to every maintenance admissible over it. */
  #advance(now: number): void {
    const dt = this.#last === undefined ? 0 : Math.max(0, now - this.#last);
    this.#last = Math.max(now, this.#last ?? now);
    if (this.#down.size > 0 || dt === 0) return;
    for (const t of this.#tracked.values()) {
      if (t.waited === undefined) continue;
      t.waited += dt;
      if (t.waited > this.#longestWaitMs) {
        this.#longestWaitMs = t.waited;
        this.#longestWaiter = nameOf(t.m);
      }
      if (t.waited > this.#limitMs && !t.flagged) {
        t.flagged = true;
        this.violations.push(
          `${nameOf(t.m)} on ${t.m.spec.serverRef.name} admissible for ${(t.waited / 1000).toFixed(1)} s ` +
            `without starting (state ${t.m.status?.state ?? 'Pending'}, at ${new Date(now).toISOString()})`,
        );
      }
    }
  }

  /** Starts or stops each maintenance's clock by whether it is admissible in the world as it is now. */
  #judge(now: number): void {
    const held = this.#held();
    for (const t of this.#tracked.values()) {
      if (this.#admissible(t.m, held, now)) t.waited ??= 0;
      else {
        t.waited = undefined;
        t.flagged = false;
      }
    }
  }

  /**
   * Servers held (a maintenance InMaintenance on them, or an ended one whose grant is still on a ledger:
   * the kinds of unavailability these runs make), and per budget how many of them each domain has.
   */
  #held(): Held {
    const servers = new Set<string>();
    for (const { m } of this.#tracked.values()) if (isIn(m)) servers.add(m.spec.serverRef.name);
    for (const entries of this.#ledgers.values())
      for (const g of entries) {
        const m = this.#tracked.get(g.maintenanceUID)?.m;
        if (m && ended(m)) servers.add(g.server);
      }
    const inUse = this.#budgets.map(({ b }) => {
      const n = new Map<string, number>();
      for (const s of servers) {
        const d = b.domainOf.get(s);
        if (d !== undefined) n.set(d, (n.get(d) ?? 0) + 1);
      }
      return n;
    });
    return { servers, inUse };
  }

  #admissible(m: ServerMaintenance, held: Held, now: number): boolean {
    return this.#mayStart(m, now) && !held.servers.has(m.spec.serverRef.name) && this.#hasRoom(m, held);
  }

  /** Waiting, approved, past notBefore, window open: everything but the server and the budgets. */
  #mayStart(m: ServerMaintenance, now: number): boolean {
    const state = m.status?.state ?? 'Pending';
    if (state === 'InMaintenance' || state === 'Completed' || state === 'Failed') return false;
    if (m.metadata.deletionTimestamp) return false;
    if (this.#approvalRequired && !m.status?.approval) return false;
    const notBefore = m.status?.notBefore ?? m.spec.approval?.notBefore;
    if (notBefore && Date.parse(notBefore) > now) return false;
    return this.#windowOpen(m, now);
  }

  /** Every budget selecting the server has room in its domain. */
  #hasRoom(m: ServerMaintenance, held: Held): boolean {
    const server = m.spec.serverRef.name;
    return this.#budgets.every(({ b, sizes }, i) => {
      const domain = b.domainOf.get(server);
      if (domain === undefined) return true;
      const inUse = held.inUse[i]!.get(domain) ?? 0;
      return inUse < maxAllowedUnavailable(b.maxUnavailable, sizes.get(domain) ?? 0);
    });
  }
}
