// Gardener's in-place update handshake (GEP-31, orchestrationType Manual) typed from our side, pure.
// The facts, from the published MCM API (github.com/gardener/machine-controller-manager,
// pkg/apis/machine/v1alpha1/register.go and the MachineDeployment controller's ManualInPlaceUpdate
// steps), all label values "true":
//   1. MCM labels the Nodes of a changed worker pool candidate-for-update;
//   3. it waits for selected-for-update on a Node (with Manual orchestration the user sets it);
//   4. it cordons and drains that Node, then labels it ready-for-update;
//   5-6. the node agent updates the machine and labels it update-successful (or update-failed, with
//        the annotation update-failed-reason);
//   7. MCM uncordons a Node labelled update-successful and removes it and every other update label.
// Here the update is the maintenance: we set candidate (announced) and selected (within the lead
// time), approve once MCM says ready-for-update, and report update-successful once nothing is
// announced any more; MCM's step 7 then finishes, and we drop our annotation.
import type { DrainBlocker } from '../../api/maintenance/v1alpha1/drain-status.js';
import { IN_PLACE_UPDATE_FOR_ANNOTATION } from '../../contract/names.js';
import { coveringBudgets, podKey } from './pods.js';
import type { Node, Pdb, Pod } from './workload-types.js';

const L = 'node.machine.sapcloud.io';
export const GEP31 = {
  candidate: `${L}/candidate-for-update`,
  selected: `${L}/selected-for-update`,
  ready: `${L}/ready-for-update`,
  successful: `${L}/update-successful`,
  failed: `${L}/update-failed`,
} as const;

/** Labels and annotations to merge into the Node (null removes). */
export interface NodeMarks {
  labels: Record<string, string | null>;
  annotations: Record<string, string | null>;
}

export type HandshakeState =
  /** Announced, not yet in the lead time: marked candidate. */
  | 'candidate'
  /** Selected for update: the shoot's MCM is to cordon, drain and label ready-for-update. */
  | 'selected'
  /** MCM labelled ready-for-update: drained. */
  | 'ready'
  /** Another in-place update (not ours) is in flight on the Node: we wait for it to finish. */
  | 'others'
  /** Nothing announced: result reported, waiting for MCM to finish (or nothing of ours left). */
  | 'finishing'
  | 'idle';

export interface Handshake {
  state: HandshakeState;
  /** What to write on the Node this pass. */
  marks?: NodeMarks;
  /** Our annotation is still on the Node after this pass: keep looking at it. */
  pending: boolean;
}

const has = (node: Node, label: string) => node.metadata.labels?.[label] !== undefined;

/**
 * One step of the handshake for `owner` (the claim, `namespace/name`), given whether a maintenance is
 * announced to the claim and whether one is within its lead time (active).
 */
export function planHandshake(node: Node, owner: string, announced: boolean, active: boolean): Handshake {
  const ours = node.metadata.annotations?.[IN_PLACE_UPDATE_FOR_ANNOTATION] === owner;
  const inFlight = has(node, GEP31.selected) || has(node, GEP31.ready) || has(node, GEP31.successful);
  if (!ours) {
    if (!announced) return { state: 'idle', pending: false };
    // Somebody's update is under way: selecting it again would merge ours into theirs.
    if (inFlight) return { state: 'others', pending: false };
    const labels: NodeMarks['labels'] = { [GEP31.candidate]: 'true' };
    if (active) labels[GEP31.selected] = 'true';
    return {
      state: active ? 'selected' : 'candidate',
      marks: { labels, annotations: { [IN_PLACE_UPDATE_FOR_ANNOTATION]: owner } },
      pending: true,
    };
  }
  if (announced) {
    if (active && has(node, GEP31.ready)) return { state: 'ready', pending: true };
    const missing = [GEP31.candidate, ...(active ? [GEP31.selected] : [])].filter((l) => !has(node, l));
    return {
      state: active ? 'selected' : 'candidate',
      ...(missing.length
        ? { marks: { labels: Object.fromEntries(missing.map((l) => [l, 'true'])), annotations: {} } }
        : {}),
      pending: true,
    };
  }
  // Nothing announced any more. Drained by MCM: the update (the maintenance) is done, say so.
  if (has(node, GEP31.ready) && !has(node, GEP31.successful))
    return {
      state: 'finishing',
      marks: { labels: { [GEP31.successful]: 'true' }, annotations: {} },
      pending: true,
    };
  // Reported: MCM's step 7 uncordons and removes every update label; wait for it.
  if (has(node, GEP31.successful)) return { state: 'finishing', pending: true };
  // MCM done (or it never got as far as ready-for-update): withdraw what is left of ours.
  return {
    state: 'idle',
    marks: {
      labels: { [GEP31.candidate]: null, [GEP31.selected]: null },
      annotations: { [IN_PLACE_UPDATE_FOR_ANNOTATION]: null },
    },
    pending: false,
  };
}

/**
 * What keeps MCM's drain from finishing, as far as we can see without its answers: each pod left
 * whose budget allows no disruption now.
 */
export function budgetBlockers(pods: readonly Pod[], pdbs: readonly Pdb[], since: string): DrainBlocker[] {
  const out: DrainBlocker[] = [];
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    const pdb = coveringBudgets(pod, pdbs).find((b) => (b.status?.disruptionsAllowed ?? 0) <= 0);
    if (!pdb) continue;
    const budget = `${pdb.metadata.namespace}/${pdb.metadata.name}`;
    out.push({
      pod: podKey(pod),
      budget,
      message: `PodDisruptionBudget ${budget} allows 0 disruptions: the shoot's MCM cannot evict it now`,
      since,
    });
  }
  return out.slice(0, 32);
}
