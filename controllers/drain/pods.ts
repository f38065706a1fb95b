// Which pods a drain moves, like `kubectl drain` with typed flags: DaemonSet and mirror pods stay,
// finished pods are done, pods with emptyDir data and pods without a controller follow the policy,
// and on CAPI-managed Nodes the pod label cluster.x-k8s.io/drain (skip | wait-completed) is honoured,
// then the MachineDrainRule that applies to the pod (capi.ts), as Cluster API drains.
import type { DrainPolicy } from '../../policies/schema.js';
import type { PodRule } from './capi.js';
import { matchesSelector } from '../../contract/selectors.js';
import { parseTime, rfc3339 } from '../../contract/time.js';
import type { Pdb, Pod } from './workload-types.js';

export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';
/** Cluster API's pod label; its only values are skip and wait-completed. */
export const CAPI_DRAIN_LABEL = 'cluster.x-k8s.io/drain';

export type PodVerdict =
  /** Stays on the Node and does not hold up the drain. */
  | { kind: 'skip'; why: string }
  /** Already terminating: counts as left until it is gone, never evicted again. */
  | { kind: 'leaving' }
  | { kind: 'evict' }
  /** Holds up the drain and is not evicted; `why` names the rule. */
  | { kind: 'block'; why: string };

export const podKey = (p: Pod) => `${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`;

export function classifyPod(pod: Pod, policy: DrainPolicy, capiManaged: boolean, rule?: PodRule): PodVerdict {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return { kind: 'skip', why: 'finished' };
  if (pod.metadata.annotations?.[MIRROR_POD_ANNOTATION] !== undefined)
    return { kind: 'skip', why: 'mirror pod' };
  const controller = pod.metadata.ownerReferences?.find((o) => o.controller);
  if (controller?.kind === 'DaemonSet') return { kind: 'skip', why: 'DaemonSet pod' };
  if (pod.metadata.deletionTimestamp) return { kind: 'leaving' };
  if (capiManaged) {
    const label = pod.metadata.labels?.[CAPI_DRAIN_LABEL];
    if (label === 'skip') return { kind: 'skip', why: `${CAPI_DRAIN_LABEL}=skip` };
    if (label === 'wait-completed')
      return { kind: 'block', why: `waits until it completes (${CAPI_DRAIN_LABEL}=wait-completed)` };
    if (rule?.behavior === 'Skip') return { kind: 'skip', why: `MachineDrainRule ${rule.rule}: Skip` };
    if (rule?.behavior === 'WaitCompleted')
      return {
        kind: 'block',
        why: `waits until it completes (MachineDrainRule ${rule.rule}: WaitCompleted)`,
      };
  }
  if (!controller && policy.unmanagedPods === 'Block')
    return { kind: 'block', why: 'no controller would recreate it (policy drain.unmanagedPods: Block)' };
  if (pod.spec?.volumes?.some((v) => v.emptyDir !== undefined) && policy.emptyDirData === 'Block')
    return { kind: 'block', why: 'it has emptyDir data (policy drain.emptyDirData: Block)' };
  return { kind: 'evict' };
}

/** The budgets covering a pod (those of its namespace whose selector matches it). */
export function coveringBudgets(pod: Pod, pdbs: readonly Pdb[]): Pdb[] {
  return pdbs.filter(
    (b) =>
      b.metadata.namespace === pod.metadata.namespace &&
      b.spec?.selector !== undefined &&
      matchesSelector(b.spec.selector, pod.metadata.labels ?? {}),
  );
}

/** The budget(s) covering a pod, `namespace/name`, for naming what refuses its eviction. */
export function budgetsOf(pod: Pod, pdbs: readonly Pdb[]): string[] {
  return coveringBudgets(pod, pdbs).map((b) => `${b.metadata.namespace}/${b.metadata.name}`);
}

/**
 * Exponential backoff between refused evictions of one pod: 1 s, 2 s, 4 s, then every 5 s, the pace
 * `kubectl drain` retries a 429 at. A longer cap (CAPI requeues every 20 s) leaves a budget that has
 * room again unused for up to that long, which makes a drain slower than the tool it replaces.
 */
export function retryDelayMs(refusals: number): number {
  return Math.min(1000 * 2 ** Math.max(0, refusals - 1), 5000);
}

/**
 * How long kube-controller-manager's disruption controller keeps a budget's status.disruptedPods entry
 * whose pod was never deleted (its DeletionTimeout, fixed at 2 min): until then the pod counts as
 * disrupted and the budget allows one eviction fewer.
 */
export const DISRUPTED_POD_EXPIRY_MS = 120_000;
/** An entry this old whose pod is still running and not terminating: its eviction's delete never came. */
export const STALE_DISRUPTION_MS = 10_000;

/** A status.disruptedPods entry of a budget for a pod that was admitted for eviction but never deleted. */
export interface StaleDisruption {
  budget: string;
  pod: string;
  since: number;
}

/**
 * The entries of `pdb.status.disruptedPods` naming one of `pods` (the Node's, as read) that is not
 * terminating although its eviction was admitted at least STALE_DISRUPTION_MS ago. The Eviction API
 * records the entry, then deletes the pod on the request's context: an evicting client that dies in
 * between (a kill -9) leaves the pod running and the entry standing until it expires.
 */
export function staleDisruptions(pdb: Pdb, pods: readonly Pod[], now: number): StaleDisruption[] {
  const ns = pdb.metadata.namespace ?? '';
  const out: StaleDisruption[] = [];
  for (const [name, at] of Object.entries(pdb.status?.disruptedPods ?? {})) {
    const since = parseTime(at);
    if (since === undefined || now - since < STALE_DISRUPTION_MS) continue;
    const pod = pods.find((p) => p.metadata.namespace === ns && p.metadata.name === name);
    if (!pod || pod.metadata.deletionTimestamp) continue;
    out.push({ budget: `${ns}/${pdb.metadata.name ?? ''}`, pod: `${ns}/${name}`, since });
  }
  return out;
}

/** What a refusal says when its budget holds a stale entry: which, since when, and until when. */
export function staleNote(s: StaleDisruption): string {
  return (
    `PodDisruptionBudget ${s.budget} counts pod ${s.pod} as disrupted since ${rfc3339(s.since)} ` +
    `(status.disruptedPods: its eviction was admitted but the pod was never deleted, as when the ` +
    `evicting client dies mid-request); kube-controller-manager's disruption controller drops the ` +
    `entry at ${rfc3339(s.since + DISRUPTED_POD_EXPIRY_MS)} and the drain goes on then`
  );
}
