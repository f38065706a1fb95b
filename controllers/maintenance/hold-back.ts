// The hold-back prediction: a fleet budget whose cached ledger and last count show no room for this
// maintenance (or its whole gang) is not asked; the release that makes room wakes the waiter.
import type { LabelSelector } from '../../api/schema/common.js';
import { roomIn, type Room } from '../../contract/budget-room.js';
import { describeBudget } from '../../contract/budgets.js';
import { matchesSelector } from '../../contract/selectors.js';
import { domainOf } from '../../contract/availability.js';

export interface FleetBudgetLike {
  metadata: { name?: string };
  spec: {
    serverSelector?: LabelSelector;
    topologyKey?: string;
    paused?: boolean;
    maxUnavailable?: number | string;
  };
  status?: {
    grants?: { maintenanceUID: string; domain?: string }[];
    domains?: { name: string; expected?: number; unavailable?: number; granted?: number }[];
  };
}

/** A fleet budget with no room for one more server, as its cached ledger and last count show. */
export interface FullBudget {
  name: string;
  domain: string;
  paused: boolean;
  inUse: number;
  allowed: number;
  expected: number;
  maxUnavailable: number | string | undefined;
}

/**
 * The first fleet budget selecting the server whose cached ledger has no room in the server's domain,
 * or undefined. In use = what the budget controller last counted unavailable in the domain, plus the
 * grants written since; allowed = maxUnavailable of the domain's expected servers, rounded as the
 * webhook does. A maintenance asks the webhook only when no budget is full: a refusal the cache already
 * predicts is a write, two admission reviews and a budget read for nothing. The cache may lag either
 * way; the webhook decides, and the release that makes room wakes the waiters. The caller skips this
 * for a server that is unavailable already (the webhook admits those without room). A budget that
 * already holds this maintenance's grant, one not counted yet, and claim budgets (this controller
 * does not cache claims) never block here.
 */
export function fullBudget(
  budgets: readonly FleetBudgetLike[],
  labels: Record<string, string> | undefined,
  maintenanceUID: string,
  gang: readonly GangMemberLike[] = [],
): FullBudget | undefined {
  const members = [{ labels, uid: maintenanceUID }, ...gang];
  for (const b of budgets) {
    const full =
      gang.length === 0
        ? matchesSelector(b.spec.serverSelector, labels)
          ? noRoom(b, labels, [maintenanceUID])
          : undefined
        : gangNoRoom(b, members);
    if (full) return full;
  }
  return undefined;
}

/** A gang member as the hold-back counts it: its server's labels and its uid. */
export interface GangMemberLike {
  labels: Record<string, string> | undefined;
  uid: string;
}

/**
 * A gang is granted whole or not at all: a budget holds it back when any domain of it lacks room for
 * every member there that holds no grant in it yet.
 */
function gangNoRoom(b: FleetBudgetLike, members: readonly GangMemberLike[]): FullBudget | undefined {
  const byDomain = new Map<string, { labels: Record<string, string> | undefined; uids: string[] }>();
  for (const m of members) {
    if (!matchesSelector(b.spec.serverSelector, m.labels)) continue;
    const domain = domainOf({ metadata: { labels: m.labels } }, b.spec.topologyKey);
    const d = byDomain.get(domain);
    if (d) d.uids.push(m.uid);
    else byDomain.set(domain, { labels: m.labels, uids: [m.uid] });
  }
  for (const { labels, uids } of byDomain.values()) {
    const full = noRoom(b, labels, uids);
    if (full) return full;
  }
  return undefined;
}

/**
 * A fleet budget's count in the server's domain: in use (what the budget controller last counted
 * unavailable, plus the grants written since), allowed, and how many of `uids` hold no grant in it
 * yet (the need). Undefined when the budget does not hold the server back: every one of them holds
 * its grant already, or it has not counted the domain yet.
 */
function domainCount(
  b: FleetBudgetLike,
  labels: Record<string, string> | undefined,
  uids: readonly string[],
): ({ domain: string; expected: number; need: number } & Room) | undefined {
  const grants = b.status?.grants ?? [];
  const need = uids.filter((uid) => !grants.some((g) => g.maintenanceUID === uid)).length;
  if (need === 0) return undefined;
  const domain = domainOf({ metadata: { labels } }, b.spec.topologyKey);
  const d = b.status?.domains?.find((x) => x.name === domain);
  if (!d) return undefined;
  const expected = d.expected ?? 0;
  const held = grants.filter((g) => (g.domain ?? '') === domain).length;
  const room = roomIn(b.spec.maxUnavailable, expected, (d.unavailable ?? 0) + held - (d.granted ?? 0));
  return { domain, expected, need, ...room };
}

/** The budget as a FullBudget when it has no room for the need in the server's domain (see fullBudget). */
function noRoom(
  b: FleetBudgetLike,
  labels: Record<string, string> | undefined,
  uids: readonly string[],
): FullBudget | undefined {
  const count = domainCount(b, labels, uids);
  if (!count) return undefined;
  const paused = b.spec.paused === true;
  if (!paused && count.left >= count.need) return undefined;
  const { left: _left, need: _need, ...figures } = count;
  return { name: b.metadata.name ?? '', paused, maxUnavailable: b.spec.maxUnavailable, ...figures };
}

/** The waiting message for a held-back attempt, worded like the webhook's refusal. */
export function fullBudgetMessage(f: FullBudget): string {
  const which = describeBudget({ kind: 'ServerDisruptionBudget', name: f.name }, f.domain);
  if (f.paused) return `${which} is paused (as cached); waiting for it to resume`;
  return (
    `${which}: ${f.inUse} unavailable, ${f.allowed} allowed (maxUnavailable ` +
    `${JSON.stringify(f.maxUnavailable)} of ${f.expected} servers; as cached, waiting for a release)`
  );
}
