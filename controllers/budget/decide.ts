// The budget controller's decisions, pure functions of (budget, cached world, policy, now):
//
// - the status of a budget: expected, unavailable, disruptionsAllowed, per domain, observedGeneration,
//   counting servers unavailable for other reasons with the webhook's own serverUnavailableReason, so
//   the numbers shown agree with what the webhook grants against;
// - which ledger entries may go: a grant whose maintenance ended (deleted, Completed, Failed), or that
//   did not reach InMaintenance within policy grants.ttl. Every candidate is confirmed against a fresh
//   read of the maintenance before it is dropped (confirmExpiry), so a lagging cache can never drop
//   the grant of a maintenance that is running.
import type { Condition } from '../../api/schema/common.js';
import type { BMC } from '../../api/metal/v1alpha1/bmc.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { DomainStatus, BudgetStatus } from '../../api/maintenance/v1alpha1/disruptionbudget-common.js';
import type { LedgerEntry, ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import { roomIn } from '../../contract/budget-room.js';
import { matchesSelector } from '../../contract/selectors.js';
import { makeCondition } from '../../contract/conditions.js';
import { BudgetConditions } from '../../contract/names.js';
import { parseTime } from '../../contract/time.js';
import { isTerminal, stateOf } from '../../contract/lifecycle.js';
import { canonicalJSON } from '../shared/canonical.js';
import { domainOf, serverUnavailableReason } from '../../contract/availability.js';

import type { AnyBudget } from '../../contract/budgets.js';

/** The status fields the budget controller owns (server-side apply); the ledger is edited by CAS. */
export type ComputedStatus = Required<
  Pick<BudgetStatus, 'expected' | 'unavailable' | 'disruptionsAllowed' | 'domains'>
> & {
  observedGeneration?: number;
  conditions: Condition[];
};

export interface CensusWorld {
  bmcOf(server: Server): BMC | undefined;
}

interface Member {
  server: Server;
  domain: string;
}

function domainStatuses(
  members: readonly Member[],
  grants: readonly LedgerEntry[],
  maxUnavailable: number | string,
  world: CensusWorld,
): DomainStatus[] {
  const byDomain = new Map<string, { expected: number; unavailable: Set<string>; granted: number }>();
  const get = (d: string) => {
    let e = byDomain.get(d);
    if (!e) byDomain.set(d, (e = { expected: 0, unavailable: new Set(), granted: 0 }));
    return e;
  };
  for (const { server, domain } of members) {
    const e = get(domain);
    e.expected++;
    if (serverUnavailableReason(server, world.bmcOf(server))) e.unavailable.add(server.metadata.name ?? '');
  }
  for (const g of grants) {
    const e = get(g.domain ?? '');
    e.granted++;
    e.unavailable.add(g.server);
  }
  return [...byDomain.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, e]) => ({
      name,
      expected: e.expected,
      unavailable: e.unavailable.size,
      granted: e.granted,
      allowed: Math.max(0, roomIn(maxUnavailable, e.expected, e.unavailable.size).left),
    }));
}

function summarize(budget: AnyBudget, domains: DomainStatus[], now: Date): ComputedStatus {
  const sum = (f: (d: DomainStatus) => number) => domains.reduce((n, d) => n + f(d), 0);
  const paused = budget.spec.paused === true;
  const allowed = paused ? 0 : sum((d) => d.allowed);
  const unavailable = sum((d) => d.unavailable);
  const condition = paused
    ? { status: 'False' as const, reason: 'Paused', message: 'the budget is paused: it grants nothing' }
    : allowed > 0
      ? {
          status: 'True' as const,
          reason: 'SufficientRoom',
          message: `${allowed} more disruption(s) allowed`,
        }
      : {
          status: 'False' as const,
          reason: 'InsufficientRoom',
          message: `${unavailable} unavailable; no more disruptions allowed (maxUnavailable ${JSON.stringify(budget.spec.maxUnavailable)})`,
        };
  const generation = budget.metadata.generation;
  return {
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    expected: sum((d) => d.expected),
    unavailable,
    disruptionsAllowed: allowed,
    domains,
    conditions: [
      makeCondition(
        budget.status?.conditions,
        { type: BudgetConditions.DisruptionAllowed, ...condition },
        now,
        generation,
      ),
    ],
  };
}

/** Status of a ServerDisruptionBudget over the servers it selects, per topology domain. */
export function serverBudgetStatus(
  budget: ServerDisruptionBudget,
  servers: readonly Server[],
  world: CensusWorld,
  now: Date,
): ComputedStatus {
  const members = servers
    .filter((s) => matchesSelector(budget.spec.serverSelector, s.metadata.labels))
    .map((server) => ({ server, domain: domainOf(server, budget.spec.topologyKey) }));
  // Without a topologyKey there is exactly one domain, "", even when it selects nothing.
  const domains = domainStatuses(members, budget.status?.grants ?? [], budget.spec.maxUnavailable, world);
  if (!budget.spec.topologyKey && domains.length === 0) domains.push(emptyDomain(budget.spec.maxUnavailable));
  return summarize(budget, domains, now);
}

/** The one domain of a budget that selects nothing: no members, and the room a budget of none has. */
function emptyDomain(maxUnavailable: number | string) {
  return {
    name: '',
    expected: 0,
    unavailable: 0,
    granted: 0,
    allowed: Math.max(0, roomIn(maxUnavailable, 0, 0).left),
  };
}

/**
 * Status of a ServerClaimDisruptionBudget over the bound claims it selects in its namespace, counted by
 * their servers (as the webhook's claimBudgetCensus does).
 */
export function claimBudgetStatus(
  budget: ServerClaimDisruptionBudget,
  claims: readonly ServerClaim[],
  serverOf: (name: string) => Server | undefined,
  world: CensusWorld,
  now: Date,
): ComputedStatus {
  const members = claims
    .filter(
      (c) =>
        c.metadata.namespace === budget.metadata.namespace &&
        matchesSelector(budget.spec.claimSelector, c.metadata.labels),
    )
    .flatMap((c) => {
      const server = c.spec.serverRef ? serverOf(c.spec.serverRef.name) : undefined;
      return server ? [{ server, domain: '' }] : [];
    });
  const domains = domainStatuses(members, budget.status?.grants ?? [], budget.spec.maxUnavailable, world);
  if (domains.length === 0) domains.push(emptyDomain(budget.spec.maxUnavailable));
  return summarize(budget, domains, now);
}

export function ownedBudgetStatus(budget: AnyBudget): Partial<ComputedStatus> {
  const s = budget.status ?? {};
  return {
    ...(s.observedGeneration !== undefined ? { observedGeneration: s.observedGeneration } : {}),
    ...(s.expected !== undefined ? { expected: s.expected } : {}),
    ...(s.unavailable !== undefined ? { unavailable: s.unavailable } : {}),
    ...(s.disruptionsAllowed !== undefined ? { disruptionsAllowed: s.disruptionsAllowed } : {}),
    ...(s.domains ? { domains: s.domains } : {}),
    conditions: (s.conditions ?? []).filter((c) => c.type === BudgetConditions.DisruptionAllowed),
  };
}

export function budgetStatusChanged(budget: AnyBudget, next: ComputedStatus): boolean {
  const canonical = (s: Partial<ComputedStatus>) =>
    canonicalJSON([
      s.observedGeneration,
      s.expected,
      s.unavailable,
      s.disruptionsAllowed,
      s.domains,
      s.conditions,
    ]);
  return canonical(ownedBudgetStatus(budget)) !== canonical(next);
}

// ---------------------------------------------------------------- grant expiry

export type ExpiryReason = 'ended' | 'ttl';

export interface ExpiryCandidate {
  entry: LedgerEntry;
  reason: ExpiryReason;
}

/** Whether a maintenance (as read) still justifies its grant: it is that maintenance and it runs. */
function running(m: ServerMaintenance | undefined, entry: LedgerEntry): boolean {
  return !!m && m.metadata.uid === entry.maintenanceUID && stateOf(m) === 'InMaintenance';
}

function endedFor(m: ServerMaintenance | undefined, entry: LedgerEntry): boolean {
  return !m || m.metadata.uid !== entry.maintenanceUID || isTerminal(m);
}

/**
 * How long the grant of a maintenance that ended but still exists is left to its own controller, which
 * releases it moments after writing Completed or Failed: expiring it at once raced that release on
 * every maintenance (two compare-and-swap writers on one ledger, one of them always losing).
 */
export const ENDED_GRACE_MS = 30_000;

/** Until when an ended grant is left alone (undefined: its maintenance is gone, expire it now). */
function graceUntil(m: ServerMaintenance | undefined, entry: LedgerEntry): number | undefined {
  if (!m || m.metadata.uid !== entry.maintenanceUID) return undefined;
  const ended = parseTime(m.status?.completedAt) ?? parseTime(m.metadata.deletionTimestamp);
  return ended !== undefined ? ended + ENDED_GRACE_MS : undefined;
}

/**
 * Ledger entries that look expired from the cache, and when the next one will (epoch ms). A grant of a
 * maintenance that is InMaintenance is never a candidate, however old: its finalizer or its failure
 * releases it.
 */
export function expiryCandidates(
  budget: AnyBudget,
  maintenanceOf: (namespace: string, name: string) => ServerMaintenance | undefined,
  ttlMs: number,
  now: Date,
): { candidates: ExpiryCandidate[]; wakeAt?: number; ttlAt?: number } {
  const candidates: ExpiryCandidate[] = [];
  let wakeAt: number | undefined;
  // When the next grant still waiting for InMaintenance reaches its TTL (metric: grants near TTL).
  let ttlAt: number | undefined;
  for (const entry of budget.status?.grants ?? []) {
    const m = maintenanceOf(entry.maintenance.namespace, entry.maintenance.name);
    if (running(m, entry)) continue;
    if (endedFor(m, entry)) {
      const until = graceUntil(m, entry);
      if (until !== undefined && now.getTime() < until) wakeAt = Math.min(wakeAt ?? Infinity, until);
      else candidates.push({ entry, reason: 'ended' });
      continue;
    }
    const expires = (parseTime(entry.grantedAt) ?? 0) + ttlMs;
    if (now.getTime() >= expires) candidates.push({ entry, reason: 'ttl' });
    else {
      wakeAt = Math.min(wakeAt ?? Infinity, expires);
      ttlAt = Math.min(ttlAt ?? Infinity, expires);
    }
  }
  return {
    candidates,
    ...(wakeAt !== undefined ? { wakeAt } : {}),
    ...(ttlAt !== undefined ? { ttlAt } : {}),
  };
}

/**
 * The final word on one candidate, from the maintenance as just read from the API server (undefined:
 * 404). Keeps the grant of a maintenance that runs, and of one that exists, is unfinished and still
 * inside the TTL (the cache only looked as if it had ended).
 */
export function confirmExpiry(
  candidate: ExpiryCandidate,
  fresh: ServerMaintenance | undefined,
  ttlMs: number,
  now: Date,
): ExpiryReason | undefined {
  const { entry } = candidate;
  if (running(fresh, entry)) return undefined;
  if (endedFor(fresh, entry)) {
    const until = graceUntil(fresh, entry);
    return until !== undefined && now.getTime() < until ? undefined : 'ended';
  }
  const expires = (parseTime(entry.grantedAt) ?? 0) + ttlMs;
  return now.getTime() >= expires ? 'ttl' : undefined;
}

/** Picks the given entries, but only as they were decided on (same uid and grantedAt). */
export function asDecided(entries: readonly LedgerEntry[]): (grant: LedgerEntry) => boolean {
  const key = (e: LedgerEntry) => `${e.maintenanceUID}@${e.grantedAt}`;
  const decided = new Set(entries.map(key));
  return (grant) => decided.has(key(grant));
}
