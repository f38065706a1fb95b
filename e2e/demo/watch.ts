// What the demo and the rollout benchmark watch: informers (as admin) over servers, claims,
// maintenances and budgets, a history of every maintenance seen (states, approval source, when it
// started and ended), and an invariant checker fed by the watch stream: how many maintenances are
// InMaintenance at once, overall and per budget domain, against what each budget allows.
import { ServerKind, type Server } from '../../api/metal/v1alpha1/server.js';
import { ServerClaimKind, type ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import {
  ServerMaintenanceKind,
  type ServerMaintenance,
} from '../../api/maintenance/v1alpha1/servermaintenance.js';
import {
  ServerDisruptionBudgetKind,
  type ServerDisruptionBudget,
} from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import {
  ServerClaimDisruptionBudgetKind,
  type ServerClaimDisruptionBudget,
} from '../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import type { KubeClient } from '../../lib/kube/client.js';
import { Informer } from '../../lib/kube/informer.js';
import { objectKey, resourceOf } from '../../lib/kube/resources.js';
import { matchesSelector } from '../../contract/selectors.js';

/** What happened to one maintenance, as the watch saw it. */
export interface MaintenanceRecord {
  key: string;
  server: string;
  claim?: string;
  createdAt: number;
  states: string[];
  approvalSource?: string;
  /** When its approval (status.approval) was first seen. */
  approvedAt?: number;
  /** Reasons it was held back (Admitted=False), e.g. BudgetExhausted, each counted once per record. */
  waitedFor: Set<string>;
  inMaintenanceAt?: number;
  /** When the Ready condition (parked, boot requested: actors may start) was first seen True. */
  readyAt?: number;
  /** When the deletion was first seen (deletionTimestamp), and when the object was gone. */
  deletingAt?: number;
  deletedAt?: number;
  /** When its entry was first seen in, and then gone from, a ServerDisruptionBudget's ledger. */
  grantedAt?: number;
  releasedAt?: number;
}

export interface BudgetPeak {
  budget: string;
  domain: string;
  allowed: number;
  peak: number;
}

/**
 * maxUnavailable as a number of servers: an integer, or a percentage rounded up (like a PDB).
 * Written again here on purpose, not imported from contract/budget-room.ts: the watcher is an
 * independent oracle that checks the system from outside, and a bug in the contract's formula must
 * show up as a violation here rather than be shared by the code under test and its judge.
 */
export function allowedOf(maxUnavailable: number | string, expected: number): number {
  if (typeof maxUnavailable === 'number') return maxUnavailable;
  const pct = Number(maxUnavailable.replace('%', ''));
  return Math.ceil((pct * expected) / 100);
}

/**
 * The invariant checker: given the set of InMaintenance maintenances after each watch event,
 * remembers the peak overall and per budget domain. Pure apart from its own counters.
 */
export class PeakChecker {
  peak = 0;
  current = 0;
  readonly #inMaintenance = new Map<string, string>(); // maintenance key -> server
  readonly #budgetPeaks = new Map<string, BudgetPeak>();

  /** Records a maintenance's state (undefined: deleted). */
  observe(key: string, server: string, state: string | undefined): void {
    if (state === 'InMaintenance') this.#inMaintenance.set(key, server);
    else this.#inMaintenance.delete(key);
    this.current = this.#inMaintenance.size;
    this.peak = Math.max(this.peak, this.current);
  }

  /** Checks every budget domain against the servers currently in maintenance. */
  checkBudgets(
    budgets: readonly ServerDisruptionBudget[],
    serverByName: (name: string) => Server | undefined,
    expectedIn: (b: ServerDisruptionBudget, domain: string) => number,
  ): void {
    for (const b of budgets) {
      const counts = new Map<string, number>();
      for (const server of this.#inMaintenance.values()) {
        const s = serverByName(server);
        if (!s || !matchesSelector(b.spec.serverSelector, s.metadata.labels)) continue;
        const domain = b.spec.topologyKey ? (s.metadata.labels?.[b.spec.topologyKey] ?? '') : '';
        counts.set(domain, (counts.get(domain) ?? 0) + 1);
      }
      for (const [domain, n] of counts) {
        const id = `${b.metadata.name}|${domain}`;
        const prev = this.#budgetPeaks.get(id);
        const allowed = allowedOf(b.spec.maxUnavailable, expectedIn(b, domain));
        this.#budgetPeaks.set(id, {
          budget: b.metadata.name ?? '',
          domain,
          allowed,
          peak: Math.max(prev?.peak ?? 0, n),
        });
      }
    }
  }

  budgetPeaks(): BudgetPeak[] {
    return [...this.#budgetPeaks.values()].sort((a, b) =>
      (a.budget + a.domain).localeCompare(b.budget + b.domain),
    );
  }

  /** Budget domains whose peak exceeded what they allow. */
  violations(): BudgetPeak[] {
    return this.budgetPeaks().filter((p) => p.peak > p.allowed);
  }
}

/** Folds one observation of a maintenance into its record (first times only; reasons accumulate). */
export function updateRecord(
  r: MaintenanceRecord,
  m: ServerMaintenance,
  state: string | undefined,
  deleted: boolean,
  now: number,
): void {
  if (state && r.states[r.states.length - 1] !== state) r.states.push(state);
  if (state === 'InMaintenance') r.inMaintenanceAt ??= now;
  if (m.metadata.deletionTimestamp || deleted) r.deletingAt ??= now;
  if (deleted) r.deletedAt = now;
  noteStatus(r, m.status ?? {}, now);
}

function noteStatus(
  r: MaintenanceRecord,
  status: NonNullable<ServerMaintenance['status']>,
  now: number,
): void {
  if (status.approval) {
    r.approvalSource = status.approval.source;
    r.approvedAt ??= now;
  }
  for (const c of status.conditions ?? []) {
    if (c.type === 'Ready' && c.status === 'True') r.readyAt ??= now;
    if (c.type === 'Admitted' && c.status === 'False') r.waitedFor.add(c.reason);
  }
}

export interface FleetWatchOptions {
  /** Only servers and claims with these labels (the fleet's label). */
  labelSelector?: string;
  /** Keep claims and budgets in the cache too (the demo). */
  full?: boolean;
  /** Keep the ServerDisruptionBudgets without claims (the benchmark), to time ledger grants and releases. */
  budgets?: boolean;
  /** Keep a trace of every maintenance and budget event. */
  trace?: boolean;
}

export class FleetWatch {
  readonly servers: Informer<Server>;
  readonly maintenances: Informer<ServerMaintenance>;
  readonly claims: Informer<ServerClaim> | undefined;
  readonly serverBudgets: Informer<ServerDisruptionBudget> | undefined;
  readonly claimBudgets: Informer<ServerClaimDisruptionBudget> | undefined;
  readonly checker = new PeakChecker();
  readonly records = new Map<string, MaintenanceRecord>();
  /** Called on every change (the display redraws from it). */
  onChange: (() => void) | undefined;
  readonly #domainSize = new Map<string, number>();
  readonly #keyOfUid = new Map<string, string>();
  /** With `trace`, every maintenance and budget event in arrival order (for debugging the checker). */
  readonly trace: unknown[] | undefined;

  constructor(client: KubeClient, o: FleetWatchOptions = {}) {
    this.servers = new Informer<Server>(client.resource(resourceOf(ServerKind)), {
      labelSelector: o.labelSelector,
    });
    this.maintenances = new Informer<ServerMaintenance>(client.resource(resourceOf(ServerMaintenanceKind)));
    if (o.full || o.budgets)
      this.serverBudgets = new Informer<ServerDisruptionBudget>(
        client.resource(resourceOf(ServerDisruptionBudgetKind)),
      );
    if (o.full) {
      this.claims = new Informer<ServerClaim>(client.resource(resourceOf(ServerClaimKind)), {
        labelSelector: o.labelSelector,
      });
      this.claimBudgets = new Informer<ServerClaimDisruptionBudget>(
        client.resource(resourceOf(ServerClaimDisruptionBudgetKind)),
      );
    }
    const changed = () => this.onChange?.();
    if (o.trace) this.trace = [];
    this.serverBudgets?.on({
      add: (b) => this.#onBudget(undefined, b),
      update: (before, b) => this.#onBudget(before, b),
    });
    this.maintenances.on({
      add: (m) => this.#record(m, false),
      update: (_o, m) => this.#record(m, false),
      delete: (m) => this.#record(m, true),
    });
    for (const inf of [this.claims, this.serverBudgets, this.claimBudgets])
      inf?.on({ add: changed, update: changed, delete: changed });
    const onServer = (s: Server) => {
      this.trace?.push({
        t: Date.now(),
        rv: s.metadata.resourceVersion,
        server: s.metadata.name,
        state: s.status?.state,
        projection: s.status?.maintenance?.state,
        taints: (s.spec.taints ?? []).map((x) => x.key),
      });
      changed();
    };
    this.servers.on({ add: onServer, update: (_o, s) => onServer(s), delete: changed });
  }

  async start(): Promise<void> {
    const all = this.#informers();
    for (const inf of all) inf.start();
    await Promise.all(all.map((i) => i.waitForSync()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.#informers().map((i) => i.stop()));
  }

  #informers(): Informer<never>[] {
    return [this.servers, this.maintenances, this.claims, this.serverBudgets, this.claimBudgets].filter(
      (i) => i !== undefined,
    ) as unknown as Informer<never>[];
  }

  #onBudget(before: ServerDisruptionBudget | undefined, b: ServerDisruptionBudget): void {
    this.#traceBudget(b);
    const now = Date.now();
    const uids = (x: ServerDisruptionBudget | undefined) =>
      new Set((x?.status?.grants ?? []).map((g) => g.maintenanceUID));
    const [was, is] = [uids(before), uids(b)];
    for (const uid of is) if (!was.has(uid)) this.#byUid(uid, (r) => (r.grantedAt ??= now));
    for (const uid of was) if (!is.has(uid)) this.#byUid(uid, (r) => (r.releasedAt ??= now));
  }

  /** The record of a maintenance by uid (ledger entries name the uid only). */
  #byUid(uid: string, f: (r: MaintenanceRecord) => void): void {
    const key = this.#keyOfUid.get(uid);
    const r = key ? this.records.get(key) : undefined;
    if (r) f(r);
  }

  #traceBudget(b: ServerDisruptionBudget): void {
    this.trace?.push({
      t: Date.now(),
      rv: b.metadata.resourceVersion,
      budget: b.metadata.name,
      grants: (b.status?.grants ?? []).map((g) => `${g.domain ?? ''}:${g.server}`),
    });
  }

  #record(m: ServerMaintenance, deleted: boolean): void {
    const key = objectKey(m.metadata);
    const now = Date.now();
    const state = deleted ? undefined : (m.status?.state ?? 'Pending');
    this.trace?.push({
      t: now,
      rv: m.metadata.resourceVersion,
      m: key,
      server: m.spec.serverRef.name,
      state: state ?? 'GONE',
      deleting: !!m.metadata.deletionTimestamp,
    });
    if (m.metadata.uid) this.#keyOfUid.set(m.metadata.uid, key);
    let r = this.records.get(key);
    if (!r) {
      r = { key, server: m.spec.serverRef.name, createdAt: now, states: [], waitedFor: new Set() };
      this.records.set(key, r);
    }
    updateRecord(r, m, state, deleted, now);
    const ref = this.servers.getByName(r.server)?.spec.serverClaimRef;
    if (ref) r.claim = `${ref.namespace}/${ref.name}`;
    this.checker.observe(key, r.server, state);
    if (this.serverBudgets)
      this.checker.checkBudgets(
        this.serverBudgets.list(),
        (n) => this.servers.getByName(n),
        (b, domain) => this.#budgetSize(b, domain),
      );
    this.onChange?.();
  }

  /** How many servers a budget selects in a domain (for percentages), cached per budget generation. */
  #budgetSize(b: ServerDisruptionBudget, domain: string): number {
    const id = `${b.metadata.name}/${b.metadata.generation ?? 0}/${domain}/${this.servers.size}`;
    let n = this.#domainSize.get(id);
    if (n === undefined) {
      const key = b.spec.topologyKey;
      n = this.servers
        .list()
        .filter(
          (s) =>
            matchesSelector(b.spec.serverSelector, s.metadata.labels) &&
            (!key || (s.metadata.labels?.[key] ?? '') === domain),
        ).length;
      this.#domainSize.set(id, n);
    }
    return n;
  }
}
