// The drain controller's decisions, pure functions of (claim, its maintenances, the Node and its pods
// as last read from the workload cluster, policy, now). One claim is consumed by one Node, so one plan
// covers every maintenance announced to the claim:
//   planDrain   what to do in the workload cluster this pass (cordon, evict which pods, uncordon);
//   settle      given what the evictions answered: status.drain and the condition Drained of each
//               maintenance, and the claim's approvals and deferrals this controller keeps.
import type { Announcement, ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { DrainBlocker, DrainPhase, DrainStatus } from '../../api/maintenance/v1alpha1/drain-status.js';
import type { DrainPolicy } from '../../policies/schema.js';
import { durationMs } from '../../lib/policy/durations.js';
import { CORDONED_FOR_ANNOTATION, qualified } from '../../contract/names.js';
import { parseTime, rfc3339 } from '../../contract/time.js';
import { classifyPod, podKey, retryDelayMs, type StaleDisruption } from './pods.js';
import type { PodRule } from './capi.js';
import type { Node, Pdb, Pod } from './workload-types.js';
import { budgetBlockers, inPlaceSummary, planHandshake, type Handshake } from './gep31.js';
import { planScheduled, type ScheduledChange } from './scheduled.js';

/** Announcement states in which the claim's Node must be (or stay) drained. */
const DRAINING_STATES = new Set(['Announced', 'Deferred', 'Approved', 'InMaintenance']);
/** How often a budget that refused an eviction is asked again (one pod of it). */
export const BUDGET_PROBE_MS = 1000;
/** A deferral written while draining lasts this long and is renewed when less than half is left. */
export const DEFERRAL_MS = 10 * 60_000;

/** The workload side as read this pass. */
export type WorkloadView =
  | { kind: 'unreachable'; message: string }
  | { kind: 'no-node'; message: string }
  | {
      kind: 'node';
      node: Node;
      via: string;
      pods: Pod[];
      capiManaged: boolean;
      /** On CAPI-managed Nodes: the MachineDrainRule applying to each pod (by pod key), if any. */
      rules?: ReadonlyMap<string, PodRule>;
      /**
       * Found through a Gardener MCM Machine; with inPlaceUpdate its shoot's MCM drains it (GEP-31),
       * and the budgets of its pods' namespaces are read to name what holds that drain up.
       */
      gardener?: { inPlaceUpdate: boolean; pdbs?: Pdb[] };
    };

/** A refused eviction remembered between passes (in memory; status keeps attempts and since). */
export interface Refusal {
  message: string;
  budget?: string;
  attempts: number;
  since: number;
  lastAt: number;
}

export interface DrainInput {
  claim: ServerClaim;
  /** The maintenances announced to the claim, by uid (those the cache has). */
  maintenances: ReadonlyMap<string, ServerMaintenance>;
  view: WorkloadView;
  refusals: ReadonlyMap<string, Refusal>;
  policy: DrainPolicy;
  now: number;
  /** Any maintenance the cache has, by uid: how a GEP-31 update ended once it is no longer announced. */
  byUID?: (uid: string) => ServerMaintenance | undefined;
}

export interface DrainPlan {
  /** Announcements the Node is drained for now (in their lead window). */
  active: Announcement[];
  /** Announced, before notBefore minus the lead time: the drain waits; when to look again. */
  waitUntil?: number;
  cordon: boolean;
  /** Uncordon: nothing is active and our annotation names this claim. */
  uncordon: boolean;
  evict: Pod[];
  /** Pods the rules keep from leaving (never evicted): pod key → why. */
  held: Map<string, string>;
  /** Pods that still have to leave the Node (evictable, held, terminating). */
  left: string[];
  /** Who cordoned the Node, as it will be after this pass. */
  cordoned?: 'ByUs' | 'ByOthers';
  /** Gardener in-place updates: the GEP-31 step instead of cordon and evictions of ours. */
  handshake?: Handshake;
  /** The Node condition MaintenanceScheduled to set or remove (nothing: it already shows it). */
  scheduled?: ScheduledChange;
}

const claimKey = (c: ServerClaim) => qualified(c.metadata.namespace, c.metadata.name);

export function activeAnnouncements(
  claim: ServerClaim,
  policy: DrainPolicy,
  now: number,
): { active: Announcement[]; waitUntil?: number } {
  const lead = durationMs(policy.leadTime);
  const active: Announcement[] = [];
  let waitUntil: number | undefined;
  for (const a of claim.status?.maintenance?.announcements ?? []) {
    if (!DRAINING_STATES.has(a.state)) continue;
    const start = (parseTime(a.notBefore) ?? 0) - lead;
    if (now >= start || a.state === 'InMaintenance') active.push(a);
    else waitUntil = Math.min(waitUntil ?? Infinity, start);
  }
  return { active, ...(waitUntil !== undefined ? { waitUntil } : {}) };
}

export function planDrain(input: DrainInput): DrainPlan {
  const { claim, view, policy, now, refusals } = input;
  const { active, waitUntil } = activeAnnouncements(claim, policy, now);
  const plan: DrainPlan = {
    active,
    ...(waitUntil !== undefined ? { waitUntil } : {}),
    cordon: false,
    uncordon: false,
    evict: [],
    held: new Map(),
    left: [],
  };
  if (view.kind !== 'node') return plan;
  const { node } = view;
  const scheduled = planScheduled(node, claim.status?.maintenance?.announcements ?? [], rfc3339(now));
  if (scheduled) plan.scheduled = scheduled;
  const ours = node.metadata.annotations?.[CORDONED_FOR_ANNOTATION] === claimKey(claim);
  const unschedulable = node.spec?.unschedulable === true;
  if (view.gardener?.inPlaceUpdate) {
    const announced = active.length > 0 || waitUntil !== undefined;
    plan.handshake = planHandshake(node, claimKey(claim), announced, active.length > 0, {
      activeUIDs: active.map((a) => a.maintenanceUID),
      ...(input.byUID ? { byUID: input.byUID } : {}),
    });
  }
  if (active.length === 0) {
    plan.uncordon = ours;
    return plan;
  }
  if (plan.handshake) {
    // The shoot's MCM cordons and evicts; we only count what is left (a cordon of ours is kept).
    plan.left = view.pods.filter((p) => classifyPod(p, policy, false).kind !== 'skip').map(podKey);
    if (ours) plan.cordoned = 'ByUs';
    return plan;
  }
  // Never take over a cordon somebody else set: it stays theirs, and stays after the maintenance.
  plan.cordon = !unschedulable;
  plan.cordoned = ours || !unschedulable ? 'ByUs' : 'ByOthers';
  // MachineDrainRule order (CAPI-managed Nodes): a group is evicted only once every pod of the lower
  // groups is gone; without rules every pod is in group 0.
  const movable: { pod: Pod; order: number; evict: boolean }[] = [];
  for (const pod of view.pods) {
    const key = podKey(pod);
    const rule = view.capiManaged ? view.rules?.get(key) : undefined;
    const verdict = classifyPod(pod, policy, view.capiManaged, rule);
    if (verdict.kind === 'skip') continue;
    plan.left.push(key);
    if (verdict.kind === 'block') plan.held.set(key, verdict.why);
    else movable.push({ pod, order: rule?.order ?? 0, evict: verdict.kind === 'evict' });
  }
  const first = Math.min(...movable.map((m) => m.order));
  // Refusals by a budget are retried per budget, one pod a pass, once a second: the budget refuses
  // its pods alike, and a pod's own backoff would line all of them up, probing a freed budget only
  // every 5 s (kubectl's goroutine per pod probes it at staggered moments, far more often).
  const budgetLast = new Map<string, number>();
  for (const r of refusals.values())
    if (r.budget) budgetLast.set(r.budget, Math.max(budgetLast.get(r.budget) ?? 0, r.lastAt));
  const probed = new Set<string>();
  for (const { pod, order, evict } of movable) {
    if (!evict || order !== first) continue;
    const refused = refusals.get(podKey(pod));
    if (refused?.budget) {
      if (probed.has(refused.budget) || now - budgetLast.get(refused.budget)! < BUDGET_PROBE_MS) continue;
      probed.add(refused.budget);
      plan.evict.push(pod);
    } else if (!refused || now - refused.lastAt >= retryDelayMs(refused.attempts)) plan.evict.push(pod);
  }
  return plan;
}

/** What one eviction answered. */
export type EvictionResult =
  | { kind: 'evicted' }
  | { kind: 'gone' }
  | { kind: 'refused'; message: string; budget?: string; stale?: StaleDisruption }
  | { kind: 'error'; message: string };

export interface DrainSettlement {
  phase: DrainPhase;
  /** status.drain of each active maintenance (by uid). */
  status: Map<string, DrainStatus>;
  condition: { status: 'True' | 'False' | 'Unknown'; reason: string; message: string };
  /** The claim's approvals and deferrals this controller holds after this pass (the whole set). */
  approvals: { maintenanceUID: string; maintenanceName: string }[];
  deferrals: { maintenanceUID: string; until: string; reason: string }[];
  /** The refusals to remember for the next pass. */
  refusals: Map<string, Refusal>;
  /** When to look again (ms from now); undefined: on the next change only. */
  requeueAfterMs?: number;
}

function blockersOf(plan: DrainPlan, refusals: ReadonlyMap<string, Refusal>): DrainBlocker[] {
  const out: DrainBlocker[] = [];
  for (const key of plan.left) {
    const held = plan.held.get(key);
    const refused = refusals.get(key);
    if (held) out.push({ pod: key, message: held, since: rfc3339(refused?.since ?? 0) });
    else if (refused)
      out.push({
        pod: key,
        ...(refused.budget ? { budget: refused.budget } : {}),
        message: refused.message.slice(0, 1024),
        attempts: refused.attempts,
        since: rfc3339(refused.since),
      });
  }
  return out.slice(0, 32);
}

function summary(node: string, left: number, blockers: readonly DrainBlocker[]): string {
  const named = blockers
    .slice(0, 3)
    .map((b) => `${b.pod}${b.budget ? ` (PodDisruptionBudget ${b.budget})` : ''}: ${b.message}`);
  const more = blockers.length > 3 ? `; and ${blockers.length - 3} more` : '';
  return `draining Node ${node}: ${left} pod(s) left${named.length ? `; ${named.join('; ')}${more}` : ''}`.slice(
    0,
    1024,
  );
}

/** The drain's start as recorded on any active maintenance (so drainTimeout survives restarts). */
function startedAt(
  active: readonly Announcement[],
  ms: ReadonlyMap<string, ServerMaintenance>,
): number | undefined {
  const times = active.flatMap((a) => parseTime(ms.get(a.maintenanceUID)?.status?.drain?.startedAt) ?? []);
  return times.length ? Math.min(...times) : undefined;
}

export function settle(
  input: DrainInput,
  plan: DrainPlan,
  results: ReadonlyMap<string, EvictionResult>,
): DrainSettlement {
  const { view, policy, now, claim } = input;
  const refusals = new Map<string, Refusal>();
  for (const key of plan.left) {
    const before = input.refusals.get(key);
    const r = results.get(key);
    const held = plan.held.get(key);
    if (held) refusals.set(key, { message: held, attempts: 0, since: before?.since ?? now, lastAt: now });
    else if (r?.kind === 'refused')
      refusals.set(key, {
        message: r.message,
        ...(r.budget ? { budget: r.budget } : {}),
        attempts: (before?.attempts ?? 0) + 1,
        since: before?.since ?? now,
        lastAt: now,
      });
    else if (r?.kind === 'error')
      refusals.set(key, {
        message: r.message,
        attempts: (before?.attempts ?? 0) + 1,
        since: before?.since ?? now,
        lastAt: now,
      });
    else if (!r && before) refusals.set(key, before);
  }
  const gone = new Set([...results].filter(([, r]) => r.kind === 'gone').map(([k]) => k));
  const left = plan.left.filter((k) => !gone.has(k));
  const started = startedAt(plan.active, input.maintenances) ?? now;
  const base: Omit<DrainStatus, 'phase'> =
    view.kind === 'node'
      ? {
          node: view.node.metadata.name ?? '',
          via: view.via,
          ...(plan.cordoned ? { cordoned: plan.cordoned } : {}),
          startedAt: rfc3339(started),
        }
      : {};
  let phase: DrainPhase;
  let condition: DrainSettlement['condition'];
  let blockers: DrainBlocker[] = [];
  let requeueAfterMs: number | undefined;
  if (view.kind === 'unreachable') {
    phase = 'Unreachable';
    condition = { status: 'False', reason: 'WorkloadUnreachable', message: view.message };
    requeueAfterMs = 10_000;
  } else if (view.kind === 'no-node') {
    phase = 'NodeNotFound';
    condition = { status: 'False', reason: 'NodeNotFound', message: view.message };
    requeueAfterMs = 30_000;
  } else if (plan.handshake ? plan.handshake.state === 'ready' : left.length === 0) {
    phase = 'Drained';
    const message = plan.handshake
      ? `the shoot's MCM cordoned and drained Node ${base.node} (GEP-31 label ready-for-update)`
      : `Node ${base.node} is cordoned and drained`;
    condition = { status: 'True', reason: 'Drained', message };
  } else {
    const leftPods = view.pods.filter((p) => left.includes(podKey(p)));
    blockers = plan.handshake
      ? budgetBlockers(leftPods, view.gardener?.pdbs ?? [], rfc3339(started))
      : blockersOf({ ...plan, left }, refusals);
    const timedOut = now - started >= durationMs(policy.timeout);
    const text = plan.handshake
      ? inPlaceSummary(base.node ?? '', plan.handshake.state, left.length, blockers)
      : summary(base.node ?? '', left.length, blockers);
    if (timedOut && policy.onTimeout === 'Proceed') {
      phase = 'Proceeded';
      condition = {
        status: 'False',
        reason: 'DrainTimeoutProceeded',
        message: `drainTimeout ${policy.timeout} passed; approved per policy with pods left. ${text}`,
      };
    } else if (timedOut) {
      phase = 'TimedOut';
      condition = {
        status: 'False',
        reason: 'DrainTimeout',
        message: `drainTimeout ${policy.timeout} passed; not approved (the deadline still applies). ${text}`,
      };
    } else {
      phase = 'Draining';
      condition = { status: 'False', reason: blockers.length ? 'Blocked' : 'Draining', message: text };
    }
    const delays = [...refusals.values()].map(
      (r) => r.lastAt + (r.budget ? BUDGET_PROBE_MS : retryDelayMs(r.attempts)) - now,
    );
    requeueAfterMs = Math.max(500, Math.min(2000, ...delays));
  }
  const drainedAt =
    phase === 'Drained'
      ? (input.maintenances.get(plan.active[0]?.maintenanceUID ?? '')?.status?.drain?.drainedAt ??
        rfc3339(now))
      : undefined;
  const status = new Map<string, DrainStatus>();
  for (const a of plan.active)
    status.set(a.maintenanceUID, {
      phase,
      ...base,
      ...(drainedAt ? { drainedAt } : {}),
      ...(view.kind === 'node' ? { podsLeft: left.length } : {}),
      ...(blockers.length ? { blockers } : {}),
      message: condition.message.slice(0, 1024),
    });
  const pending = plan.active.filter((a) => a.state !== 'InMaintenance');
  const approve = phase === 'Drained' || phase === 'Proceeded';
  const approvals = approve
    ? pending.map((a) => ({ maintenanceUID: a.maintenanceUID, maintenanceName: a.maintenanceName }))
    : [];
  const deferrals = approve ? [] : deferralsFor(claim, pending, phase, condition.message, now);
  if (plan.waitUntil !== undefined)
    requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, Math.max(0, plan.waitUntil - now));
  return {
    phase,
    status,
    condition,
    approvals,
    deferrals,
    refusals,
    ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
  };
}

/**
 * While draining, a deferral per pending maintenance keeps a standing or policy approval from starting
 * it mid-drain, and tells the tenant what blocks; it never passes the deadline and is renewed when
 * less than half of it is left, so a drain controller that died stops holding anything within
 * DEFERRAL_MS. With the workload cluster unreachable the deferral is kept but not renewed.
 */
function deferralsFor(
  claim: ServerClaim,
  pending: readonly Announcement[],
  phase: DrainPhase,
  reason: string,
  now: number,
): DrainSettlement['deferrals'] {
  if (phase === 'TimedOut') return [];
  const out: DrainSettlement['deferrals'] = [];
  for (const a of pending) {
    const deadline = parseTime(a.deadline);
    if (deadline !== undefined && now >= deadline) continue;
    const existing = claim.spec.maintenance?.deferrals?.find((d) => d.maintenanceUID === a.maintenanceUID);
    const had = parseTime(existing?.until);
    let until: number | undefined;
    if (phase === 'Unreachable' || phase === 'NodeNotFound')
      until = had !== undefined && had > now ? had : undefined;
    else until = had !== undefined && had - now > DEFERRAL_MS / 2 ? had : now + DEFERRAL_MS;
    if (until === undefined) continue;
    if (deadline !== undefined) until = Math.min(until, deadline);
    out.push({
      maintenanceUID: a.maintenanceUID,
      until: rfc3339(until),
      reason: existing && phase === 'Unreachable' ? (existing.reason ?? reason) : reason.slice(0, 1024),
    });
  }
  return out;
}
