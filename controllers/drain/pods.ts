// Which pods a drain moves, like `kubectl drain` with typed flags: DaemonSet and mirror pods stay,
// finished pods are done, pods with emptyDir data and pods without a controller follow the policy,
// and on CAPI-managed Nodes the pod label cluster.x-k8s.io/drain (skip | wait-completed) is honoured,
// then the MachineDrainRule that applies to the pod (capi.ts), as Cluster API drains.
import type { DrainPolicy } from '../../policies/schema.js';
import type { PodRule } from './capi.js';
import { matchesSelector } from '../../contract/selectors.js';
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

/** The budget(s) covering a pod, `namespace/name`, for naming what refuses its eviction. */
export function budgetsOf(pod: Pod, pdbs: readonly Pdb[]): string[] {
  return pdbs
    .filter(
      (b) =>
        b.metadata.namespace === pod.metadata.namespace &&
        b.spec?.selector !== undefined &&
        matchesSelector(b.spec.selector, pod.metadata.labels ?? {}),
    )
    .map((b) => `${b.metadata.namespace}/${b.metadata.name}`);
}

/**
 * Exponential backoff between refused evictions of one pod: 1 s, 2 s, 4 s, then every 5 s, the pace
 * `kubectl drain` retries a 429 at. A longer cap (CAPI requeues every 20 s) leaves a budget that has
 * room again unused for up to that long, which makes a drain slower than the tool it replaces.
 */
export function retryDelayMs(refusals: number): number {
  return Math.min(1000 * 2 ** Math.max(0, refusals - 1), 5000);
}
