// A STAND-IN for a shoot's Gardener machine-controller-manager in its GEP-31 in-place update flow
// with orchestrationType Manual (the real MCM is not in the package registries here). It does exactly
// what ../shared/reference/anchors-maintenance.md §7 and the published MCM API
// (pkg/apis/machine/v1alpha1: the label keys; the MachineDeployment controller's ManualInPlaceUpdate
// steps) say MCM does in that flow, and nothing more:
//   - step 4: a Node labelled node.machine.sapcloud.io/selected-for-update is cordoned and drained
//     (every pod but DaemonSet and mirror pods evicted through the Eviction API, so budgets hold; a
//     429 is tried again on a later round), then labelled ready-for-update: "true";
//   - step 7: a Node labelled update-successful is uncordoned, and that label and every other update
//     label (candidate-for-update, selected-for-update, ready-for-update, drain-successful,
//     update-failed, the annotation update-failed-reason) are removed.
// Left out: step 1 (labelling a changed worker pool candidate-for-update: there is no worker pool
// here), the Machine objects' phases, and maxEvictRetries (deleting a pod after too many refused
// evictions), which no test here reaches. It never sets update-successful: that is the node agent's
// step (here, the drain controller's report that the maintenance ended).
//
// Level-triggered: every Node change and a round every 250 ms look at every Node.
import type { KubeObject } from '../../api/schema/meta.js';
import type { KubeClient } from '../../lib/kube/client.js';
import { isNotFound, isTooManyRequests } from '../../lib/kube/errors.js';
import { Informer } from '../../lib/kube/informer.js';
import { Core } from '../../lib/kube/resources.js';
import { KickLoop } from './kick.js';

const L = 'node.machine.sapcloud.io';
export const MCM_LABELS = {
  candidate: `${L}/candidate-for-update`,
  selected: `${L}/selected-for-update`,
  ready: `${L}/ready-for-update`,
  drainSuccessful: `${L}/drain-successful`,
  successful: `${L}/update-successful`,
  failed: `${L}/update-failed`,
} as const;
const FAILED_REASON_ANNOTATION = `${L}/update-failed-reason`;
const MIRROR = 'kubernetes.io/config.mirror';

interface Node extends KubeObject {
  spec?: { unschedulable?: boolean };
}
interface Pod extends KubeObject {
  status?: { phase?: string };
}

export interface McmStandInCounts {
  /** Evictions the Eviction API admitted, by pod (namespace/name). */
  evicted: Map<string, number>;
  /** Evictions refused with 429. */
  refused: number;
  /** Nodes labelled ready-for-update, and Nodes finished (step 7). */
  ready: number;
  finished: number;
}

export class McmStandIn {
  readonly #client: KubeClient;
  readonly #nodes: Informer<Node>;
  #timer: NodeJS.Timeout | undefined;
  readonly #loop: KickLoop;
  readonly counts: McmStandInCounts = { evicted: new Map(), refused: 0, ready: 0, finished: 0 };

  /** `workload`: the shoot's API with MCM's rights (nodes patch, pods list, pods/eviction create). */
  constructor(workload: KubeClient) {
    this.#client = workload;
    this.#nodes = new Informer<Node>(workload.resource<Node>(Core.Node));
    this.#loop = new KickLoop(async () => {
      for (const node of this.#nodes.list()) await this.#reconcile(node).catch(() => undefined);
    });
    const kick = () => this.#loop.kick();
    this.#nodes.on({ add: kick, update: kick, delete: kick });
  }

  async start(): Promise<void> {
    this.#nodes.start();
    await this.#nodes.waitForSync();
    this.#timer = setInterval(() => this.#loop.kick(), 250);
    this.#loop.kick();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#loop.idle();
    await this.#nodes.stop();
  }

  async #reconcile(node: Node): Promise<void> {
    const labels = node.metadata.labels ?? {};
    const name = node.metadata.name ?? '';
    const nodes = this.#client.resource<Node>(Core.Node);
    if (labels[MCM_LABELS.successful] !== undefined) {
      // Step 7: uncordon, remove every update-related label.
      await nodes.patch(name, {
        metadata: {
          labels: Object.fromEntries(Object.values(MCM_LABELS).map((l) => [l, null])),
          annotations: { [FAILED_REASON_ANNOTATION]: null },
        },
        spec: { unschedulable: false },
      });
      this.counts.finished++;
      return;
    }
    if (labels[MCM_LABELS.selected] === undefined || labels[MCM_LABELS.ready] !== undefined) return;
    // Step 4: cordon, drain, then ready-for-update.
    if (!node.spec?.unschedulable) await nodes.patch(name, { spec: { unschedulable: true } });
    const pods = (
      await this.#client.resource<Pod>(Core.Pod).listAll({ fieldSelector: `spec.nodeName=${name}` })
    ).items.filter(
      (p) =>
        p.status?.phase !== 'Succeeded' &&
        p.status?.phase !== 'Failed' &&
        p.metadata.annotations?.[MIRROR] === undefined &&
        !p.metadata.ownerReferences?.some((o) => o.controller && o.kind === 'DaemonSet'),
    );
    for (const pod of pods.filter((p) => !p.metadata.deletionTimestamp)) await this.#evict(pod);
    if (pods.length > 0) return;
    await nodes.patch(name, { metadata: { labels: { [MCM_LABELS.ready]: 'true' } } });
    this.counts.ready++;
  }

  async #evict(pod: Pod): Promise<void> {
    const { name, namespace } = pod.metadata;
    try {
      await this.#client.request('POST', `/api/v1/namespaces/${namespace}/pods/${name}/eviction`, {
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } },
      });
      const key = `${namespace}/${name}`;
      this.counts.evicted.set(key, (this.counts.evicted.get(key) ?? 0) + 1);
    } catch (e) {
      if (isTooManyRequests(e)) this.counts.refused++;
      else if (!isNotFound(e)) throw e;
    }
  }
}
