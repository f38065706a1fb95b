// Eviction (WS2), the decision part. A ServerMaintenance moving into InMaintenance (a status write) is
// the disruption. It is admitted only if approval holds, no other maintenance holds the server, and every
// budget selecting the server or its claim has room. This module decides everything that can be decided
// from the caches and returns a GrantPlan; grants/ then takes the room atomically on the budgets' ledgers
// (the only step that needs fresh data).
import { MAINTENANCE_GROUP } from '../../api/maintenance/v1alpha1/group.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { ServerClaim, ApprovalSource } from '../../api/metal/v1alpha1/serverclaim.js';
import type { Policy } from '../../policies/schema.js';
import { classPolicy } from '../../lib/policy/durations.js';
import { inWindow, nextWindowOpening } from '../../lib/policy/window.js';
import { Codes, type Code } from '../../contract/codes.js';
import { allow, deny, secondsUntil, type Decision } from '../../contract/denial.js';
import type { AnyBudget } from '../../contract/budgets.js';
import { byName, type WorldView } from '../world.js';
import { isOneOf, isResource, objects, type RuleInput } from './common.js';
import { domainOf } from '../../contract/availability.js';
import { announcementOf } from '../../contract/announcements.js';
import { isTerminal } from '../../contract/lifecycle.js';
import { parseTime } from '../../contract/time.js';
import { qualified } from '../../contract/names.js';
import { approvalVerdict } from '../../contract/approval.js';
import { type BudgetReservation, type GrantPlan } from '../grants/plan.js';
import { gangMembers } from './gang.js';

// ---------------------------------------------------------------- the decision

export type EvictionOutcome =
  | { kind: 'decision'; decision: Decision }
  | { kind: 'grant'; plan: GrantPlan; warnings: string[]; source: ApprovalSource };

/** Whether the request is the status write that moves a ServerMaintenance into InMaintenance. */
export function isInMaintenanceTransition(input: RuleInput): boolean {
  const { request } = input;
  if (
    !isResource(request, MAINTENANCE_GROUP, 'servermaintenances', 'status') ||
    request.operation !== 'UPDATE'
  )
    return false;
  const { object, oldObject } = objects<ServerMaintenance>(request);
  return object?.status?.state === 'InMaintenance' && oldObject?.status?.state !== 'InMaintenance';
}

function retryDenial(code: Code, message: string, at: number | undefined, now: Date): Decision {
  return deny(code, message, { retryAfterSeconds: at !== undefined ? secondsUntil(at, now) : 30 });
}

/** The maintenance the server's typed status says is running, if it is another and not finished. */
function projectedActive(m: ServerMaintenance, server: Server, world: WorldView): string | undefined {
  const projected = server.status?.maintenance;
  const active = projected?.activeMaintenanceRef;
  if (projected?.state !== 'InMaintenance' || !active || active.uid === m.metadata.uid) return undefined;
  const known = world.getMaintenance(active.namespace ?? '', active.name);
  return known && isTerminal(known) ? undefined : qualified(active.namespace, active.name);
}

/** Another maintenance holding the server: typed status, legacy serverMaintenanceRef, or the index. */
function otherActive(
  m: ServerMaintenance,
  server: Server,
  world: WorldView,
  onServer: readonly ServerMaintenance[],
): string | undefined {
  const projected = projectedActive(m, server, world);
  if (projected) return projected;
  const legacy = server.spec.serverMaintenanceRef;
  if (legacy && !(legacy.name === m.metadata.name && legacy.namespace === m.metadata.namespace)) {
    return `${qualified(legacy.namespace, legacy.name)} (legacy serverMaintenanceRef)`;
  }
  const other = onServer.find(
    (o) => o.metadata.uid !== m.metadata.uid && !isTerminal(o) && o.status?.state === 'InMaintenance',
  );
  return other ? qualified(other.metadata.namespace, other.metadata.name) : undefined;
}

/** The budgets sorted by name; most servers fall under one budget of a kind, which needs no copy. */
function sortedByName<B extends AnyBudget>(budgets: readonly B[]): readonly B[] {
  return budgets.length > 1 ? [...budgets].sort(byName) : budgets;
}

function reservations(server: Server, claim: ServerClaim | undefined, world: WorldView): BudgetReservation[] {
  // A fixed order (fleet budgets by name, then tenant budgets by namespace/name) so two maintenances
  // competing for the same budgets reserve them in the same sequence. Plain loops: this runs on every
  // eviction review, and the array copies and closures were most of its cost.
  const out: BudgetReservation[] = [];
  for (const b of sortedByName(world.serverBudgetsFor(server.metadata.name ?? ''))) {
    const budget = b.metadata.name ?? '';
    const domain = domainOf(server, b.spec.topologyKey);
    out.push({
      ref: { kind: 'ServerDisruptionBudget', name: budget },
      domain,
      census: world.serverBudgetCensus(budget, domain),
    });
  }
  if (!claim) return out;
  for (const b of sortedByName(
    world.claimBudgetsFor(claim.metadata.namespace ?? '', claim.metadata.name ?? ''),
  )) {
    const namespace = b.metadata.namespace ?? '';
    const budget = b.metadata.name ?? '';
    out.push({
      ref: { kind: 'ServerClaimDisruptionBudget', namespace, name: budget },
      domain: '',
      census: world.claimBudgetCensus(namespace, budget),
    });
  }
  return out;
}

/** notBefore and maintenance windows: the maintenance may be fine, just not now. */
function timingDenial(
  m: ServerMaintenance,
  claim: ServerClaim | undefined,
  policy: Policy,
  now: Date,
): Decision | undefined {
  const announcement = announcementOf(claim, m.metadata.uid ?? '');
  const notBefore =
    parseTime(m.spec.approval?.notBefore) ??
    parseTime(announcement?.notBefore) ??
    parseTime(m.status?.notBefore);
  if (notBefore !== undefined && now.getTime() < notBefore) {
    return retryDenial(
      Codes.NOT_BEFORE,
      `maintenance may not start before ${new Date(notBefore).toISOString()}`,
      notBefore,
      now,
    );
  }
  if (!classPolicy(policy, m.spec.class).requireWindow || inWindow(policy, now)) return undefined;
  const opens = nextWindowOpening(policy, now);
  const next = opens ? `; the next opens at ${opens.toISOString()}` : '';
  return retryDenial(
    Codes.OUTSIDE_WINDOW,
    `class ${m.spec.class ?? 'Planned'} maintenance starts only inside a maintenance window${next}`,
    opens?.getTime(),
    now,
  );
}

function buildPlan(
  input: RuleInput,
  m: ServerMaintenance,
  server: Server,
  claim: ServerClaim | undefined,
  onServer: readonly ServerMaintenance[],
): GrantPlan {
  const { request, world, policy } = input;
  const serverName = server.metadata.name ?? '';
  const claimRef = server.spec.serverClaimRef;
  return {
    maintenance: {
      uid: m.metadata.uid ?? '',
      // The reviewed object's metadata, or the request's: a gang member's is its own.
      namespace: m.metadata.namespace ?? request.namespace ?? '',
      name: m.metadata.name ?? request.name ?? '',
    },
    server: serverName,
    ...(claimRef ? { claim: { namespace: claimRef.namespace, name: claimRef.name } } : {}),
    reservations: reservations(server, claim, world),
    ledgerCap: policy.grants.ledgerCap,
    finishedOnServer: onServer.filter(isTerminal).map((o) => o.metadata.uid ?? ''),
  };
}

// Module level: a closure in decideEviction would be created on every review.
const decided = (decision: Decision): EvictionOutcome => ({ kind: 'decision', decision });

/**
 * Decides the InMaintenance transition up to the budgets: writer, approval, notBefore, window,
 * exclusivity. Returns either a final decision or the GrantPlan to execute.
 */
export function decideEviction(input: RuleInput): EvictionOutcome {
  const { request, policy } = input;
  if (!isInMaintenanceTransition(input)) return decided(allow());
  // Checked here too (contract.ts checks it for every status write): a grant must never be written for
  // a write that another validator will refuse, or anybody could drain a budget for a TTL.
  if (!isOneOf(request.userInfo, policy.writers.maintenanceStatus)) {
    const who = JSON.stringify(request.userInfo.username ?? '');
    return decided(
      deny(
        Codes.FORBIDDEN_WRITER,
        `only the maintenance controllers may move a ServerMaintenance into InMaintenance, not ${who}`,
      ),
    );
  }
  const m = objects<ServerMaintenance>(request).object!;
  const outcome = decideMember(input, m);
  if (outcome.kind !== 'grant' || !m.spec.gang) return outcome;
  const members = gangMembers(input, m, decideMember);
  return 'members' in members ? { ...outcome, plan: { ...outcome.plan, members: members.members } } : members;
}

/**
 * Whether one maintenance may start now, up to the budgets: server and claim known, approval, notBefore,
 * window, exclusivity. Asked of the maintenance whose write is reviewed and of each of its gang's
 * other members, so a gang is granted only when every member could start.
 */
function decideMember(input: RuleInput, m: ServerMaintenance): EvictionOutcome {
  const { world, policy, now } = input;
  const serverName = m.spec.serverRef.name;
  const server = world.getServer(serverName);
  if (!server)
    return decided(
      deny(Codes.SERVER_NOT_FOUND, `server ${serverName} is not known (yet)`, { retryAfterSeconds: 10 }),
    );
  const claimRef = server.spec.serverClaimRef;
  const claim = claimRef ? world.getClaim(claimRef.namespace, claimRef.name) : undefined;
  // Without the claim neither its approval nor its tenant budgets can be checked, even when no approval
  // is needed: wait for the cache rather than skip the tenant's budgets.
  if (claimRef && !claim) {
    const name = qualified(claimRef.namespace, claimRef.name);
    return decided(
      deny(Codes.CLAIM_NOT_FOUND, `claim ${name} of server ${serverName} is not known (yet)`, {
        retryAfterSeconds: 10,
      }),
    );
  }

  const verdict = approvalVerdict(m, server, claim, policy, now);
  if (!verdict.ok) return decided(retryDenial(verdict.code, verdict.message, verdict.retryAt, now));
  const timing = timingDenial(m, claim, policy, now);
  if (timing) return decided(timing);
  const onServer = world.maintenancesByServer(server.metadata.name ?? '');
  const busy = otherActive(m, server, world, onServer);
  if (busy)
    return decided(
      deny(Codes.SERVER_BUSY, `server ${serverName} is already in maintenance ${busy}`, {
        retryAfterSeconds: 30,
      }),
    );

  const byPolicy = verdict.source === 'Deadline' || verdict.source === 'Policy';
  const warnings = byPolicy
    ? [`approved without the owner (${verdict.source}${verdict.detail ? `: ${verdict.detail}` : ''})`]
    : [];
  return {
    kind: 'grant',
    plan: buildPlan(input, m, server, claim, onServer),
    warnings,
    source: verdict.source,
  };
}
