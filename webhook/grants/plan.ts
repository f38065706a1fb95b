// What a grant is and how one budget's ledger judges it. A grant plan (decided by rules/eviction.ts from
// the caches) lists the budgets to reserve in a fixed order; each is judged on its ledger as just read:
// already held, room to take, or a refusal (held server, paused, stale, full ledger, no room). The room
// arithmetic is the contract's (contract/budget-room.ts); the writes are reserve.ts, batch.ts and
// release.ts, each through the contract's compare-and-swap loop (contract/ledger/cas.ts).
import type { LedgerEntry } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { errorMessage } from '../../lib/errors.js';
import { roomIn } from '../../contract/budget-room.js';
import { describeBudget, refKey, type AnyBudget, type BudgetRef } from '../../contract/budgets.js';
import { Codes, type Code } from '../../contract/codes.js';
import { qualified } from '../../contract/names.js';
import type { BudgetCensus } from '../world.js';

export interface BudgetReservation {
  ref: BudgetRef;
  /** Topology domain the grant counts against ("" without a topologyKey). */
  domain: string;
  /** From the caches at decision time: expected servers and those unavailable for other reasons. */
  census: BudgetCensus;
}

export interface GrantPlan {
  maintenance: { uid: string; namespace: string; name: string };
  server: string;
  claim?: { namespace: string; name: string };
  /** In reservation order. */
  reservations: BudgetReservation[];
  ledgerCap: number;
  /** uids of maintenances on this server that are finished: their leftover grants do not hold it. */
  finishedOnServer: readonly string[];
  /**
   * The other members of this maintenance's gang that still need a grant (spec.gang). Their entries
   * go into each budget with this plan's, in the same write, or none of them do.
   */
  members?: GrantPlan[];
}

/** One member's reservation in one budget: what a ledger write judges and appends. */
export interface MemberReservation {
  plan: GrantPlan;
  r: BudgetReservation;
  finished: ReadonlySet<string>;
}

/** One budget's part of a plan: the budget, and each member's reservation in it (one without a gang). */
export interface BudgetStep {
  ref: BudgetRef;
  entries: MemberReservation[];
}

const KIND_ORDER: Record<BudgetRef['kind'], number> = {
  ServerDisruptionBudget: 0,
  ServerClaimDisruptionBudget: 1,
};

/** Fleet budgets by name, then tenant budgets by namespace/name: the order every plan reserves in. */
function refOrder(a: BudgetRef, b: BudgetRef): number {
  return (
    KIND_ORDER[a.kind] - KIND_ORDER[b.kind] ||
    (a.namespace ?? '').localeCompare(b.namespace ?? '') ||
    a.name.localeCompare(b.name)
  );
}

/** The maintenances a plan grants together: its own, then its gang's other members. */
export const planMembers = (plan: GrantPlan): GrantPlan[] => [plan, ...(plan.members ?? [])];

/**
 * The budgets a plan reserves, in a fixed order so two gangs competing for the same budgets take them
 * in the same sequence, each with every member's reservation in it. A plan without a gang keeps its
 * own reservation order (rules/eviction.ts sorts it the same way).
 */
export function budgetSteps(plan: GrantPlan): BudgetStep[] {
  if (!plan.members?.length) {
    const finished = new Set(plan.finishedOnServer);
    return plan.reservations.map((r) => ({ ref: r.ref, entries: [{ plan, r, finished }] }));
  }
  const steps = new Map<string, BudgetStep>();
  for (const p of planMembers(plan)) {
    const finished = new Set(p.finishedOnServer);
    for (const r of p.reservations) {
      const key = refKey(r.ref);
      let step = steps.get(key);
      if (!step) steps.set(key, (step = { ref: r.ref, entries: [] }));
      step.entries.push({ plan: p, r, finished });
    }
  }
  return [...steps.values()].sort((a, b) => refOrder(a.ref, b.ref));
}

export interface BudgetDenial {
  code: Code;
  message: string;
  retryAfterSeconds: number;
  ref?: BudgetRef;
  allowed?: number;
  inUse?: number;
}

export interface GrantStats {
  /** Looks at a budget, a cached copy or a store read (one per attempt). */
  attempts: number;
  /** Writes refused for a stale resourceVersion. */
  conflicts: number;
  /** Backoffs taken before trying again. */
  retries: number;
}

export type GrantResult =
  | ({ granted: true; dryRun: boolean; written: BudgetRef[]; alreadyHeld: BudgetRef[] } & GrantStats)
  | ({
      granted: false;
      dryRun: boolean;
      denial: BudgetDenial;
      released: BudgetRef[];
      releaseFailed: BudgetRef[];
    } & GrantStats);

export interface GrantOptions {
  /** Attempts per budget, like the API server's 20 for evictions. */
  maxAttempts?: number;
  /** Backoff before attempt n+1: min(capMs, baseMs * 2^n), jittered by up to +jitter. */
  baseDelayMs?: number;
  capDelayMs?: number;
  jitter?: number;
  /**
   * Total time one call may spend, across budgets, before it gives up with a retry-later denial. The API
   * server's eviction loop waits up to 20 × 500 ms; an admission call must answer well inside the webhook
   * timeout, so ours is shorter.
   */
  deadlineMs?: number;
  clock?: () => Date;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** Told about each conflict and retry, for metrics. */
  onConflict?: (ref: BudgetRef) => void;
  onRetry?: (ref: BudgetRef, attempt: number) => void;
}

export type GrantFunction = ((plan: GrantPlan, options: { dryRun: boolean }) => Promise<GrantResult>) & {
  /** A dry run decided synchronously on cached copies, when they suffice (see dryRunOnCopies). */
  dryRunOnCopies?: (plan: GrantPlan) => GrantResult | undefined;
};

const DEFAULT_OPTIONS: Required<Omit<GrantOptions, 'onConflict' | 'onRetry'>> = {
  maxAttempts: 20,
  baseDelayMs: 5,
  capDelayMs: 200,
  jitter: 0.5,
  deadlineMs: 4000,
  clock: () => new Date(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
};

export class Run {
  readonly attemptsCount: GrantStats = { attempts: 0, conflicts: 0, retries: 0 };
  readonly o: Required<Omit<GrantOptions, 'onConflict' | 'onRetry'>> &
    Pick<GrantOptions, 'onConflict' | 'onRetry'>;
  readonly startedAt: number;

  constructor(options: GrantOptions) {
    this.o = { ...DEFAULT_OPTIONS, ...options };
    this.startedAt = this.o.clock().getTime();
  }

  expired(): boolean {
    return this.o.clock().getTime() - this.startedAt > this.o.deadlineMs;
  }

  async backoff(ref: BudgetRef, attempt: number): Promise<void> {
    this.attemptsCount.retries++;
    this.o.onRetry?.(ref, attempt);
    const base = Math.min(this.o.capDelayMs, this.o.baseDelayMs * 2 ** attempt);
    await this.o.sleep(base * (1 + this.o.jitter * this.o.random()));
  }
}

export type StepOutcome =
  { kind: 'written' } | { kind: 'held' } | { kind: 'gone' } | { kind: 'denied'; denial: BudgetDenial };

export const conflictDenial = (r: BudgetReservation, attempts: number): BudgetDenial => ({
  code: Codes.BUDGET_CONFLICT,
  message: `${describeBudget(r.ref, r.domain)} kept changing under us (${attempts} attempts)`,
  retryAfterSeconds: 1,
  ref: r.ref,
});

export const storeDenial = (r: BudgetReservation, e: unknown): BudgetDenial => ({
  code: Codes.BUDGET_UNAVAILABLE,
  message: `${describeBudget(r.ref, r.domain)} could not be read or written: ${errorMessage(e)}`,
  retryAfterSeconds: 10,
  ref: r.ref,
});

// ---------------------------------------------------------------- room in a budget's ledger

export interface RoomInput {
  budget: AnyBudget;
  reservation: BudgetReservation;
  server: string;
  maintenanceUID: string;
  ledgerCap: number;
  /** Maintenances on this server the caches show finished: their leftover entries do not hold it. */
  finishedOnServer: ReadonlySet<string>;
}

export type RoomCheck =
  | { kind: 'present' }
  | { kind: 'fits'; allowed: number; inUse: number; expected: number; alreadyUnavailable: boolean }
  | {
      kind: 'denied';
      code: Code;
      message: string;
      retryAfterSeconds: number;
      allowed?: number;
      inUse?: number;
    };

const describe = (r: BudgetReservation) => describeBudget(r.ref, r.domain);

/** Reasons a budget grants nothing right now, whatever its room: held server, paused, stale, full ledger. */
function budgetBlocked(input: RoomInput): Extract<RoomCheck, { kind: 'denied' }> | undefined {
  const { budget, server, maintenanceUID } = input;
  const grants = budget.status?.grants ?? [];
  const holder = grants.find(
    (g) =>
      g.server === server &&
      g.maintenanceUID !== maintenanceUID &&
      !input.finishedOnServer.has(g.maintenanceUID),
  );
  if (holder) {
    const other = qualified(holder.maintenance.namespace, holder.maintenance.name);
    return {
      kind: 'denied',
      code: Codes.SERVER_BUSY,
      message: `server ${server} is held by maintenance ${other} (grant in ${describe(input.reservation)})`,
      retryAfterSeconds: 30,
    };
  }
  if (budget.spec.paused === true) {
    return {
      kind: 'denied',
      code: Codes.BUDGET_PAUSED,
      message: `${describe(input.reservation)} is paused`,
      retryAfterSeconds: 60,
    };
  }
  const generation = budget.metadata.generation ?? 0;
  const observed = budget.status?.observedGeneration ?? 0;
  if (observed < generation) {
    // Like the Eviction API: a budget whose status predates its spec can't be trusted (429, retry 10s).
    return {
      kind: 'denied',
      code: Codes.BUDGET_STALE,
      message: `${describe(input.reservation)} status is stale (observedGeneration ${observed} < generation ${generation})`,
      retryAfterSeconds: 10,
    };
  }
  if (grants.length >= input.ledgerCap) {
    return {
      kind: 'denied',
      code: Codes.BUDGET_LEDGER_FULL,
      message: `${describe(input.reservation)} ledger holds ${grants.length} grants (cap ${input.ledgerCap})`,
      retryAfterSeconds: 60,
    };
  }
  return undefined;
}

/**
 * Whether a budget, as just read, has room for this maintenance's server. Unavailable = servers with a
 * grant in this domain's ledger ∪ servers unavailable for other reasons (the census), counted once each.
 * A server already counted needs no new room.
 */
export function checkRoom(input: RoomInput): RoomCheck {
  const { budget, reservation, server, maintenanceUID } = input;
  const grants = budget.status?.grants ?? [];
  if (grants.some((g) => g.maintenanceUID === maintenanceUID)) return { kind: 'present' };
  const blocked = budgetBlocked(input);
  if (blocked) return blocked;
  const { census, domain } = reservation;
  // Counted once each: unavailable for other reasons ∪ granted in this domain.
  const unavailable = census.unavailableSet ?? new Set<string>(census.unavailable);
  const granted = new Set<string>();
  for (const g of grants)
    if ((g.domain ?? '') === domain && !unavailable.has(g.server)) granted.add(g.server);
  const { allowed, inUse, left } = roomIn(
    budget.spec.maxUnavailable,
    census.expected,
    unavailable.size + granted.size,
  );
  const alreadyUnavailable = unavailable.has(server) || granted.has(server);
  if (alreadyUnavailable || left >= 1) {
    return { kind: 'fits', allowed, inUse, expected: census.expected, alreadyUnavailable };
  }
  return {
    kind: 'denied',
    code: Codes.BUDGET_EXHAUSTED,
    message:
      `${describe(reservation)}: ${inUse} unavailable, ${allowed} allowed ` +
      `(maxUnavailable ${JSON.stringify(budget.spec.maxUnavailable)} of ${census.expected} servers)`,
    retryAfterSeconds: 30,
    allowed,
    inUse,
  };
}

/** The ledger entry a grant writes. */
export function ledgerEntry(plan: GrantPlan, reservation: BudgetReservation, grantedAt: Date): LedgerEntry {
  return {
    maintenanceUID: plan.maintenance.uid,
    maintenance: { namespace: plan.maintenance.namespace, name: plan.maintenance.name },
    server: plan.server,
    ...(plan.claim ? { claim: plan.claim } : {}),
    ...(reservation.domain ? { domain: reservation.domain } : {}),
    grantedAt: grantedAt.toISOString(),
  };
}

/** What one budget's ledger says about this plan's reservation in it. */
export function judgeRoom(
  budget: AnyBudget,
  plan: GrantPlan,
  r: BudgetReservation,
  finished: ReadonlySet<string>,
) {
  return checkRoom({
    budget,
    reservation: r,
    server: plan.server,
    maintenanceUID: plan.maintenance.uid,
    ledgerCap: plan.ledgerCap,
    finishedOnServer: finished,
  });
}

/** A verdict of checkRoom as the step it is: refused, already held, or to be written. */
export function stepFor(room: ReturnType<typeof checkRoom>, r: BudgetReservation): StepOutcome {
  if (room.kind !== 'denied') return { kind: room.kind === 'present' ? 'held' : 'written' };
  const { kind: _k, ...denial } = room;
  return { kind: 'denied', denial: { ...denial, ref: r.ref } };
}
