// The drain controller's edge towards workload clusters: clients built from the kubeconfig Secrets the
// policy names (never logged), finding the claim's Node, cordon and uncordon with ownership, and
// evictions through the Eviction API (policy/v1). What a workload cluster needs to grant us, and
// nothing more: nodes get, list (to find a providerID), patch; pods list; pods/eviction create;
// poddisruptionbudgets list (to name a refusing budget). docs/drain.md has the Role.
import { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { KubeClient } from '../../lib/kube/client.js';
import { isNotFound, isTooManyRequests, KubeApiError } from '../../lib/kube/errors.js';
import { Core } from '../../lib/kube/resources.js';
import type { WorkloadCluster } from '../../policies/schema.js';
import { CORDONED_FOR_ANNOTATION } from '../../contract/names.js';
import type { EvictionResult } from './decide.js';
import { budgetsOf } from './pods.js';
import type { Node, Pdb, Pod } from './workload-types.js';

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
    const kc = new KubeConfig();
    try {
      kc.loadFromString(Buffer.from(data, 'base64').toString('utf8'));
    } catch {
      // The parser's message may quote the document: say only where it is.
      throw new WorkloadUnavailable(`${where}: not a valid kubeconfig`);
    }
    const client = await KubeClient.fromKubeConfig(kc, {
      timeoutMs: WORKLOAD_TIMEOUT_MS,
      userAgent: 'metal-maintenance/drain-controller',
    });
    await cached?.client.close();
    this.#clients.set(id, { version, client });
    this.#log.info(
      { secret: `${ref.namespace}/${ref.secretName}`, server: kc.getCurrentCluster()?.server },
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

/** Evicts one pod; a 429 is a refusal naming the budget (looked up among `pdbs` of its namespace). */
export async function evictPod(
  client: KubeClient,
  pod: Pod,
  pdbs: () => Promise<Pdb[]>,
): Promise<EvictionResult> {
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
    if (isTooManyRequests(e)) {
      const status = (e as KubeApiError).status;
      const causes = (status.details?.causes ?? []).map((c) => c.message).filter(Boolean);
      const message = [status.message, ...causes].filter(Boolean).join(': ');
      let budget: string | undefined;
      try {
        budget = budgetsOf(pod, await pdbs())[0];
      } catch {
        // Naming the budget is best effort; the message still says why.
      }
      const named = /disruption budget (\S+) /.exec(message)?.[1];
      if (!budget && named) budget = `${namespace}/${named}`;
      return { kind: 'refused', message: message || '429 Too Many Requests', ...(budget ? { budget } : {}) };
    }
    if (e instanceof KubeApiError) return { kind: 'error', message: e.message };
    throw e;
  }
}
