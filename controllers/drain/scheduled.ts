// The Node condition MaintenanceScheduled (docs/proposals/ws6-upstream-consumers.md): early notice, in
// the workload cluster itself, of what is announced to the claim behind the Node, so its workloads and
// people see it where they look (kubectl describe node) and not only on the claim. Pure: the condition
// to write, or to remove, or nothing when the Node already shows it.
import type { Announcement } from '../../api/metal/v1alpha1/serverclaim.js';
import type { Node, NodeCondition } from './workload-types.js';

export const MAINTENANCE_SCHEDULED = 'MaintenanceScheduled';

/** What to do with the condition this pass. */
export type ScheduledChange = { kind: 'set'; condition: NodeCondition } | { kind: 'remove' };

const order = (a: Announcement) => a.notBefore ?? a.announcedAt;

/**
 * True while anything is announced to the claim, from the announcement that starts first: reason its
 * class, message which maintenance, why, notBefore and deadline (and how many more). Removed once
 * nothing is announced: it is ours alone, no other writer uses the type.
 */
export function planScheduled(
  node: Node,
  announcements: readonly Announcement[],
  now: string,
): ScheduledChange | undefined {
  const old = node.status?.conditions?.find((c) => c.type === MAINTENANCE_SCHEDULED);
  if (announcements.length === 0) return old ? { kind: 'remove' } : undefined;
  const [first, ...rest] = [...announcements].sort((a, b) => order(a).localeCompare(order(b)));
  const a = first!;
  const when = [
    a.notBefore ? `not before ${a.notBefore}` : 'any time now',
    ...(a.deadline ? [`deadline ${a.deadline}`] : []),
  ].join(', ');
  const more = rest.length ? ` (+${rest.length} more announced)` : '';
  const message =
    `ServerMaintenance ${a.maintenanceNamespace}/${a.maintenanceName} (${a.reason}) is ${a.state}: ${when}${more}`.slice(
      0,
      1024,
    );
  const reason = a.class;
  if (old?.status === 'True' && old.reason === reason && old.message === message) return undefined;
  return {
    kind: 'set',
    condition: {
      type: MAINTENANCE_SCHEDULED,
      status: 'True',
      reason,
      message,
      lastHeartbeatTime: now,
      lastTransitionTime: old?.status === 'True' ? (old.lastTransitionTime ?? now) : now,
    },
  };
}

/** The strategic merge patch of the Node's status for `change` (conditions merge by type). */
export function scheduledPatch(change: ScheduledChange): unknown {
  return {
    status: {
      conditions: [
        change.kind === 'set' ? change.condition : { type: MAINTENANCE_SCHEDULED, $patch: 'delete' },
      ],
    },
  };
}
