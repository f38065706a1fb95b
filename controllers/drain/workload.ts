// The drain controller's edge towards workload clusters: clients built from the kubeconfig Secrets the
// policy names (never logged), finding the claim's Node, cordon and uncordon with ownership, and
// evictions through the Eviction API (policy/v1). What a workload cluster needs to grant us, and
// nothing more: nodes get, list (to find a providerID), patch; pods list; pods/eviction create;
// poddisruptionbudgets list (to name a refusing budget). docs/drain.md has the Role.
import type { Logger } from 'pino';
import { KubeClient } from '../../lib/kube/client.js';
import { accessFromKubeconfig } from '../../lib/kube/kubeconfig.js';
import { errorMessage } from '../../lib/errors.js';
import { isNotFound, isTooManyRequests, KubeApiError } from '../../lib/kube/errors.js';
import { Core } from '../../lib/kube/resources.js';
import type { WorkloadCluster } from '../../policies/schema.js';
import { CORDONED_FOR_ANNOTATION } from '../../contract/names.js';
import type { EvictionResult } from './decide.js';
import { coveringBudgets, staleDisruptions, staleNote, type StaleDisruption } from './pods.js';
import type { Node, Pdb, Pod } from './workload-types.js';
import type { NodeMarks } from './gep31.js';

interface Secret {
  metadata: { name?: string; namespace?: string; resourceVersion?: string };
  data?: Record<string, string>;
}

/** A workload cluster could not be used: its message is safe to show (it never holds credentials). */
export class WorkloadUnavailable extends Error {}

/** Per-request timeout towards workload clusters: an unreachable one is reported within seconds. */
const WORKLOAD_TIMEOUT_MS = 5000;

export class WorkloadClusters {
  readonly #metal: KubeClient;
  readonly #log: Logger;
  readonly #clients = new Map<string, { version: string; client: KubeClient }>();

  constructor(metal: KubeClient, log: Logger) {
    this.#metal = metal;
    this.#log = log;
  }

  /** A client for the cluster whose kubeconfig is in `ref` (rebuilt when the Secret changes). */
  async client(ref: WorkloadCluster): Promise<KubeClient> {
    const where = `Secret ${ref.namespace}/${ref.secretName} key ${ref.secretKey}`;
    let secret: Secret;
    try {
      secret = await this.#metal.resource<Secret>(Core.Secret).get(ref.secretName, ref.namespace);
    } catch (e) {
      if (isNotFound(e)) throw new WorkloadUnavailable(`${where}: the Secret does not exist`);
      throw new WorkloadUnavailable(`${where}: cannot read it (${(e as Error).message})`);
    }
    const id = `${ref.namespace}/${ref.secretName}/${ref.secretKey}`;
    const version = secret.metadata.resourceVersion ?? '';
    const cached = this.#clients.get(id);
    if (cached?.version === version) return cached.client;
    const data = secret.data?.[ref.secretKey];
    if (!data) throw new WorkloadUnavailable(`${where}: the key is missing`);
    // Static credentials only: a kubeconfig from a Secret may neither run a command nor read our
    // files (a tokenFile naming our own ServiceAccount token would send it to its server).
    let access;
    try {
      access = await accessFromKubeconfig(Buffer.from(data, 'base64').toString('utf8'), {
        untrusted: true,
        source: where,
      });
    } catch (e) {
      // The message names the Secret and the field, never a value of the document.
      throw new WorkloadUnavailable(errorMessage(e));
    }
    const client = KubeClient.fromAccess(access, {
      timeoutMs: WORKLOAD_TIMEOUT_MS,
      userAgent: 'metal-maintenance/drain-controller',
    });
    await cached?.client.close();
    this.#clients.set(id, { version, client });
    this.#log.info(
      { secret: `${ref.namespace}/${ref.secretName}`, server: access.server },
      'workload cluster client ready',
    );
    return client;
  }

  async close(): Promise<void> {
    for (const { client } of this.#clients.values()) await client.close();
    this.#clients.clear();
  }
}

/** The Node with this providerID; `hint` (a name seen before) is tried first, then all Nodes are listed. */
export async function nodeByProviderID(
  client: KubeClient,
  providerID: string,
  hint?: string,
): Promise<Node | undefined> {
  const nodes = client.resource<Node>(Core.Node);
  if (hint) {
    const node = await nodes.find(hint);
    if (node?.spec?.providerID === providerID) return node;
  }
  return (await nodes.listAll()).items.find((n) => n.spec?.providerID === providerID);
}

export async function podsOnNode(client: KubeClient, node: string): Promise<Pod[]> {
  return (await client.resource<Pod>(Core.Pod).listAll({ fieldSelector: `spec.nodeName=${node}` })).items;
}

/**
 * Cordons the Node and records that we did, only if it is still schedulable at the version we read:
 * a cordon set in between stays somebody else's (409 from the resourceVersion precondition).
 */
export async function cordon(client: KubeClient, node: Node, owner: string): Promise<Node> {
  return client.resource<Node>(Core.Node).patch(node.metadata.name ?? '', {
    metadata: {
      resourceVersion: node.metadata.resourceVersion,
      annotations: { [CORDONED_FOR_ANNOTATION]: owner },
    },
    spec: { unschedulable: true },
  });
}

/** Uncordons a Node we cordoned and removes our annotation (at the version we read). */
export async function uncordon(client: KubeClient, node: Node): Promise<Node> {
  return client.resource<Node>(Core.Node).patch(node.metadata.name ?? '', {
    metadata: {
      resourceVersion: node.metadata.resourceVersion,
      annotations: { [CORDONED_FOR_ANNOTATION]: null },
    },
    spec: { unschedulable: false },
  });
}

/** Merges GEP-31 labels and our annotation into the Node, at the version we read (null removes). */
export async function markNode(client: KubeClient, node: Node, marks: NodeMarks): Promise<Node> {
  return client.resource<Node>(Core.Node).patch(node.metadata.name ?? '', {
    metadata: { resourceVersion: node.metadata.resourceVersion, ...marks },
  });
}

/** What an eviction needs besides the pod: its namespace's budgets (read once, lazily) and the Node's pods. */
export interface EvictionContext {
  pdbs: () => Promise<Pdb[]>;
  /** The pods on the Node as read this pass, to tell a stale status.disruptedPods entry. */
  nodePods: readonly Pod[];
  now: number;
}

/**
 * Evicts one pod; a 429 is a refusal naming the budget (looked up among the namespace's budgets),
 * led by what keeps that budget at zero when it is a stale status.disruptedPods entry (pods.ts).
 */
export async function evictPod(client: KubeClient, pod: Pod, ctx: EvictionContext): Promise<EvictionResult> {
  const { name, namespace } = pod.metadata;
  try {
    await client.request('POST', `/api/v1/namespaces/${namespace}/pods/${name}/eviction`, {
      body: {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name, namespace },
        // Preconditioned on the pod we decided about: a pod recreated under the same name is not evicted blindly.
        deleteOptions: { preconditions: { uid: pod.metadata.uid } },
      },
    });
    return { kind: 'evicted' };
  } catch (e) {
    if (isNotFound(e)) return { kind: 'gone' };
    if (isTooManyRequests(e)) return refusal(e as KubeApiError, pod, ctx);
    if (e instanceof KubeApiError) return { kind: 'error', message: e.message };
    throw e;
  }
}

async function refusal(e: KubeApiError, pod: Pod, ctx: EvictionContext): Promise<EvictionResult> {
  const causes = (e.status.details?.causes ?? []).map((c) => c.message).filter(Boolean);
  const message = [e.status.message, ...causes].filter(Boolean).join(': ') || '429 Too Many Requests';
  let budget: string | undefined;
  let stale: StaleDisruption | undefined;
  try {
    const pdb = coveringBudgets(pod, await ctx.pdbs())[0];
    if (pdb) {
      budget = `${pdb.metadata.namespace}/${pdb.metadata.name}`;
      stale = staleDisruptions(pdb, ctx.nodePods, ctx.now)[0];
    }
  } catch {
    // Naming the budget is best effort; the message still says why.
  }
  const named = /disruption budget (\S+) /.exec(message)?.[1];
  if (!budget && named) budget = `${pod.metadata.namespace}/${named}`;
  return {
    kind: 'refused',
    message: stale ? `${staleNote(stale)}. ${message}` : message,
    ...(budget ? { budget } : {}),
    ...(stale ? { stale } : {}),
  };
}
