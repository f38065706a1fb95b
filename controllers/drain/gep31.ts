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
// time), approve once MCM says ready-for-update, and once nothing is announced any more report
// update-successful, or update-failed (+ update-failed-reason) when a maintenance it was for Failed;
// MCM's step 7 then finishes a successful one, and we drop our annotations. A failed one is left to
// MCM and the shoot's operator (the Machine goes InPlaceUpdateFailed; nothing of ours uncordons it).
import type { DrainBlocker } from '../../api/maintenance/v1alpha1/drain-status.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { findCondition } from '../../contract/conditions.js';
import { stateOf } from '../../contract/lifecycle.js';
import {
  IN_PLACE_UPDATE_FOR_ANNOTATION,
  IN_PLACE_UPDATE_UIDS_ANNOTATION as UIDS,
  MaintenanceConditions,
} from '../../contract/names.js';
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
/** The annotation the node agent gives update-failed: why. */
export const GEP31_FAILED_REASON = `${L}/update-failed-reason`;

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
  /** update-failed is on the Node (reported by us): MCM and the operator take it from here. */
  | 'failed'
  | 'idle';

export interface Handshake {
  state: HandshakeState;
  /** What to write on the Node this pass. */
  marks?: NodeMarks;
  /** Our annotation is still on the Node after this pass: keep looking at it. */
  pending: boolean;
}

const has = (node: Node, label: string) => node.metadata.labels?.[label] !== undefined;

/** What became of the maintenances an in-place update was for, read from the cache. */
export type UpdateOutcome = { kind: 'successful' } | { kind: 'failed'; reason: string } | { kind: 'unknown' };

/**
 * Any of them Failed: a failed update (each named with its Failed condition). Gone, Completed or being
 * deleted (deletion means done): a successful one. One still live in the cache while the claim no
 * longer announces it: the cache lags the claim, so not known yet.
 */
export function updateOutcome(
  uids: readonly string[],
  byUID: (uid: string) => ServerMaintenance | undefined,
): UpdateOutcome {
  const failed: string[] = [];
  let unknown = false;
  for (const uid of uids) {
    const m = byUID(uid);
    if (m && stateOf(m) === 'Failed') {
      const c = findCondition(m.status?.conditions, MaintenanceConditions.Failed);
      const why = [c?.reason, c?.message].filter(Boolean).join(': ');
      failed.push(
        `ServerMaintenance ${m.metadata.namespace}/${m.metadata.name} failed${why ? `: ${why}` : ''}`,
      );
    } else if (m && !m.metadata.deletionTimestamp && stateOf(m) !== 'Completed') unknown = true;
  }
  if (failed.length) return { kind: 'failed', reason: failed.join('; ').slice(0, 1024) };
  return unknown ? { kind: 'unknown' } : { kind: 'successful' };
}

/** The maintenance uids our update annotation records. */
export function recordedUIDs(node: Node): string[] {
  return (node.metadata.annotations?.[UIDS] ?? '').split(',').filter(Boolean);
}

export interface HandshakeContext {
  /** The uids of the maintenances within their lead time (recorded on the Node when it is selected). */
  activeUIDs?: readonly string[];
  /** The maintenances the cache has, by uid: the outcome of the update once they are not announced. */
  byUID?: (uid: string) => ServerMaintenance | undefined;
}

/**
 * One step of the handshake for `owner` (the claim, `namespace/name`), given whether a maintenance is
 * announced to the claim and whether one is within its lead time (active).
 */
export function planHandshake(
  node: Node,
  owner: string,
  announced: boolean,
  active: boolean,
  ctx: HandshakeContext = {},
): Handshake {
  const ours = node.metadata.annotations?.[IN_PLACE_UPDATE_FOR_ANNOTATION] === owner;
  const inFlight = has(node, GEP31.selected) || has(node, GEP31.ready) || has(node, GEP31.successful);
  const recorded = recordedUIDs(node);
  const uids = [...new Set([...recorded, ...(active ? (ctx.activeUIDs ?? []) : [])])].sort();
  const newUIDs = uids.length > recorded.length;
  const uidMarks: Record<string, string> = newUIDs ? { [UIDS]: uids.join(',') } : {};
  if (!ours) {
    if (!announced) return { state: 'idle', pending: false };
    // Somebody's update is under way: selecting it again would merge ours into theirs.
    if (inFlight) return { state: 'others', pending: false };
    const labels: NodeMarks['labels'] = { [GEP31.candidate]: 'true' };
    if (active) labels[GEP31.selected] = 'true';
    return {
      state: active ? 'selected' : 'candidate',
      marks: { labels, annotations: { [IN_PLACE_UPDATE_FOR_ANNOTATION]: owner, ...uidMarks } },
      pending: true,
    };
  }
  // Our earlier update failed and is still labelled so: a new one waits until it is cleared.
  if (has(node, GEP31.failed)) return { state: 'failed', pending: announced };
  if (announced) {
    if (active && has(node, GEP31.ready))
      return {
        state: 'ready',
        ...(newUIDs ? { marks: { labels: {}, annotations: uidMarks } } : {}),
        pending: true,
      };
    const missing = [GEP31.candidate, ...(active ? [GEP31.selected] : [])].filter((l) => !has(node, l));
    return {
      state: active ? 'selected' : 'candidate',
      ...(missing.length || newUIDs
        ? { marks: { labels: Object.fromEntries(missing.map((l) => [l, 'true'])), annotations: uidMarks } }
        : {}),
      pending: true,
    };
  }
  // Nothing announced any more. Drained by MCM: the update (the maintenance) is over, say how.
  if (has(node, GEP31.ready) && !has(node, GEP31.successful)) {
    const outcome = updateOutcome(recorded, ctx.byUID ?? (() => undefined));
    if (outcome.kind === 'unknown') return { state: 'finishing', pending: true };
    if (outcome.kind === 'failed')
      return {
        state: 'failed',
        marks: { labels: { [GEP31.failed]: 'true' }, annotations: { [GEP31_FAILED_REASON]: outcome.reason } },
        pending: false,
      };
    return {
      state: 'finishing',
      marks: { labels: { [GEP31.successful]: 'true' }, annotations: {} },
      pending: true,
    };
  }
  // Reported: MCM's step 7 uncordons and removes every update label; wait for it.
  if (has(node, GEP31.successful)) return { state: 'finishing', pending: true };
  // MCM done (or it never got as far as ready-for-update): withdraw what is left of ours.
  return {
    state: 'idle',
    marks: {
      labels: { [GEP31.candidate]: null, [GEP31.selected]: null },
      annotations: { [IN_PLACE_UPDATE_FOR_ANNOTATION]: null, [UIDS]: null },
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

/** The Drained condition's text while the shoot's MCM drains (or an update not ours holds the Node). */
export function inPlaceSummary(
  node: string,
  state: string,
  left: number,
  blockers: readonly DrainBlocker[],
): string {
  const head =
    state === 'others'
      ? `an in-place update not started by us is under way on Node ${node}; waiting for it to finish`
      : state === 'failed'
        ? `GEP-31: Node ${node} is labelled update-failed from an earlier maintenance; waiting for it to be cleared`
        : `GEP-31: Node ${node} selected-for-update; waiting for the shoot's MCM to drain it and label it ready-for-update`;
  const named = blockers.slice(0, 3).map((b) => `${b.pod}: ${b.message}`);
  return `${head}: ${left} pod(s) left${named.length ? `; ${named.join('; ')}` : ''}`.slice(0, 1024);
}
