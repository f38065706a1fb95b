// The per-server queue: which maintenance of a server goes first. Order: higher spec.priority, then
// the more urgent class (Emergency, Urgent, Planned), then the older object, then namespace/name so
// that two controllers (or two reconciles) always agree.
import type { MaintenancePhase, ServerMaintenance } from '../api/maintenance/v1alpha1/servermaintenance.js';

const CLASS_RANK: Record<string, number> = { Emergency: 0, Urgent: 1, Planned: 2 };

function classRank(m: ServerMaintenance): number {
  return CLASS_RANK[m.spec.class ?? 'Planned'] ?? CLASS_RANK.Planned!;
}

function created(m: ServerMaintenance): number {
  const t = Date.parse(m.metadata.creationTimestamp ?? '');
  return Number.isNaN(t) ? Number.MAX_SAFE_INTEGER : t;
}

/** What queue order compares, computed once per maintenance (sorting many parses timestamps once each). */
export interface QueueKey {
  priority: number;
  classRank: number;
  created: number;
  namespace: string;
  name: string;
}

export function queueKey(m: ServerMaintenance): QueueKey {
  return {
    priority: m.spec.priority ?? 0,
    classRank: classRank(m),
    created: created(m),
    namespace: m.metadata.namespace ?? '',
    name: m.metadata.name ?? '',
  };
}

/** Negative when the maintenance with key `a` runs before the one with key `b`. */
export function compareQueueKeys(a: QueueKey, b: QueueKey): number {
  return (
    b.priority - a.priority ||
    a.classRank - b.classRank ||
    a.created - b.created ||
    a.namespace.localeCompare(b.namespace) ||
    a.name.localeCompare(b.name)
  );
}

/** Negative when `a` runs before `b`. */
export function compareQueue(a: ServerMaintenance, b: ServerMaintenance): number {
  return compareQueueKeys(queueKey(a), queueKey(b));
}

export const isDeleting = (m: ServerMaintenance): boolean => !!m.metadata.deletionTimestamp;

export function stateOf(m: ServerMaintenance): MaintenancePhase {
  return (m.status?.state as MaintenancePhase | undefined) ?? 'Pending';
}

/** Terminal for the controller: nothing is held, nothing more happens until the object is deleted. */
export const isTerminal = (m: ServerMaintenance): boolean => {
  const s = stateOf(m);
  return s === 'Failed' || s === 'Completed';
};

/**
 * The state a waiting maintenance is in, read from the approval controller's fields: approved when
 * status.approval is set, announced when status.announcedAt is, else pending.
 */
export function waitingState(m: ServerMaintenance): 'Pending' | 'Announced' | 'Approved' {
  if (m.status?.approval) return 'Approved';
  if (m.status?.announcedAt) return 'Announced';
  return 'Pending';
}

export const uidOf = (m: ServerMaintenance): string => m.metadata.uid ?? '';

export const nameOf = (m: ServerMaintenance): string =>
  `${m.metadata.namespace ?? ''}/${m.metadata.name ?? ''}`;
