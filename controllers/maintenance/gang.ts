// A gang (spec.gang) is one attempt: the webhook grants every member with the first member's write, or
// none. So a member is tried only when the cache shows the whole gang there and every member ready to
// start; a try that is refused costs a write and two admission reviews, and would only be refused
// GangIncomplete. Pure: the admitter hands in the members from its cache.
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { isTerminal, stateOf, uidOf, waitingState } from '../../contract/lifecycle.js';
import { qualified } from '../../contract/names.js';

/** How often a member whose gang is not ready looks again (a backstop: the last ready member tries). */
export const GANG_RECHECK_MS = 5_000;

/** The maintenance cache's index of gangs. */
export const GANG_INDEX = 'gang';

/** The index key of a gang in the maintenance cache: gangs are per namespace. */
export const gangIndexKey = (m: ServerMaintenance): string[] =>
  m.spec?.gang?.name ? [`${m.metadata.namespace ?? ''}/${m.spec.gang.name}`] : [];

export type GangReadiness =
  | { ready: true; /** The other members, each on its own server. */ others: ServerMaintenance[] }
  | { ready: false; message: string };

/** Whether a member other than the one tried may enter InMaintenance now, as the cache shows it. */
function memberReady(m: ServerMaintenance): boolean {
  if (isTerminal(m) || stateOf(m) === 'InMaintenance') return true;
  const approved = stateOf(m) === 'Approved' || waitingState(m) === 'Approved';
  // Head of its server's queue: nothing holds the server, and it is the next to start there.
  return approved && (m.status?.queuePosition ?? 0) === 0;
}

/**
 * Whether the member `m` may be tried: every one of its gang's `size` members is in `members` (the
 * cache's index, `m` among them or not) and each is ready (approved and at the head of its server's
 * queue, running already, or done).
 */
export function gangReadiness(m: ServerMaintenance, members: readonly ServerMaintenance[]): GangReadiness {
  const gang = m.spec.gang;
  if (!gang) return { ready: true, others: [] };
  const others = members.filter((o) => uidOf(o) !== uidOf(m));
  const label = `gang ${qualified(m.metadata.namespace, gang.name)}`;
  if (others.length + 1 < gang.size)
    return {
      ready: false,
      message: `${label}: ${others.length + 1} of ${gang.size} members exist (as cached)`,
    };
  const waiting = others.filter((o) => !memberReady(o));
  if (waiting.length > 0) {
    const names = waiting.slice(0, 3).map((o) => qualified(o.metadata.namespace, o.metadata.name));
    const more = waiting.length > 3 ? ` and ${waiting.length - 3} more` : '';
    return { ready: false, message: `${label}: waiting for ${names.join(', ')}${more} to be ready to start` };
  }
  return { ready: true, others };
}

/**
 * The members whose need the hold-back prediction counts with `m`'s: those that will take a grant
 * with it (not running, not done).
 */
export const gangNeed = (others: readonly ServerMaintenance[]): ServerMaintenance[] =>
  others.filter((o) => !isTerminal(o) && stateOf(o) !== 'InMaintenance');
