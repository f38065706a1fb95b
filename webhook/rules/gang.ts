// Gang admission, the decision part: a ServerMaintenance with spec.gang enters InMaintenance only when
// every member of its gang can. The write reviewed is one member's; the grant plan then carries the
// other members that still need a grant, and grants/ writes all their ledger entries with it, budget by
// budget, in one compare-and-swap each, or none (a BMC's servers go down together: a gang admitted in
// part holds budget slots while it waits for its last server, and two such gangs deadlock a rollout).
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { Codes } from '../../contract/codes.js';
import { deny } from '../../contract/denial.js';
import { isTerminal } from '../../contract/lifecycle.js';
import { qualified } from '../../contract/names.js';
import type { GrantPlan } from '../grants/plan.js';
import type { RuleInput } from './common.js';
import type { EvictionOutcome } from './eviction.js';

/** Seconds a member waits for its gang to fill in the cache or get ready. */
export const GANG_RETRY_SECONDS = 10;

type Decided = Extract<EvictionOutcome, { kind: 'decision' }>;

const incomplete = (message: string, retryAfterSeconds = GANG_RETRY_SECONDS): Decided => ({
  kind: 'decision',
  decision: deny(Codes.GANG_INCOMPLETE, message, { retryAfterSeconds }),
});

/**
 * The plans of the gang's other members that still need a grant (not finished, not InMaintenance),
 * or the denial of the whole gang: fewer than `size` members in the cache, or a member that may not
 * start now (`decide` is the eviction rule's per-maintenance check).
 */
export function gangMembers(
  input: RuleInput,
  m: ServerMaintenance,
  decide: (input: RuleInput, m: ServerMaintenance) => EvictionOutcome,
): { members: GrantPlan[] } | Decided {
  const gang = m.spec.gang!;
  const namespace = m.metadata.namespace ?? input.request.namespace ?? '';
  const uid = m.metadata.uid ?? '';
  const label = `gang ${qualified(namespace, gang.name)}`;
  const others = input.world.maintenancesByGang(namespace, gang.name).filter((o) => o.metadata.uid !== uid);
  const count = others.length + 1;
  if (count < gang.size)
    return incomplete(`${label} has ${count} of its ${gang.size} members in the cache (yet)`);
  const members: GrantPlan[] = [];
  for (const o of others) {
    // A member done or running needs no grant: the first holds none any more, the second its own.
    if (isTerminal(o) || o.status?.state === 'InMaintenance') continue;
    const outcome = decide(input, o);
    const who = qualified(o.metadata.namespace, o.metadata.name);
    if (outcome.kind === 'decision')
      return incomplete(
        `${label}: member ${who} may not start yet (${outcome.decision.code})`,
        Math.max(GANG_RETRY_SECONDS, outcome.decision.retryAfterSeconds ?? 0),
      );
    members.push(outcome.plan);
  }
  return { members };
}
