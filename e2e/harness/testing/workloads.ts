// Workload objects for the workload-cluster tests: a Deployment of simulated pods (kwok runs them),
// listing pods, and evicting one through the Eviction API (policy/v1) as `kubectl drain` does.
import type { KubeClient } from '../../../lib/kube/client.js';
import { Core } from '../../../lib/kube/resources.js';
import type { KubeObject } from '../../../api/schema/meta.js';

export interface Pod extends KubeObject {
  spec?: { nodeName?: string; [k: string]: unknown };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

export interface Pdb extends KubeObject {
  spec: {
    maxUnavailable?: number | string;
    minAvailable?: number | string;
    selector: { matchLabels: Record<string, string> };
  };
  status?: {
    currentHealthy?: number;
    desiredHealthy?: number;
    expectedPods?: number;
    disruptionsAllowed?: number;
    disruptedPods?: Record<string, string>;
  };
}

/**
 * A Deployment of `replicas` pods labelled app=<name>. `nodeSelector` pins them (e.g. to one Node
 * with kubernetes.io/hostname); kwok's pods need no image pull, any image name works.
 */
export function deploymentObject(
  namespace: string,
  name: string,
  replicas: number,
  options: { nodeSelector?: Record<string, string>; podLabels?: Record<string, string> } = {},
): KubeObject & Record<string, unknown> {
  return {
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      strategy: { type: 'RollingUpdate' },
      template: {
        metadata: { labels: { app: name, ...options.podLabels } },
        spec: {
          ...(options.nodeSelector ? { nodeSelector: options.nodeSelector } : {}),
          terminationGracePeriodSeconds: 0,
          containers: [{ name: 'app', image: 'registry.invalid/simulated:1' }],
        },
      },
    },
  };
}

export async function podsOf(client: KubeClient, namespace: string, labelSelector: string): Promise<Pod[]> {
  return (await client.resource<Pod>(Core.Pod).list({ namespace, labelSelector })).items;
}

/** POST pods/<name>/eviction; rejects with the API's error (429 when a budget refuses). */
export async function evict(client: KubeClient, pod: Pod): Promise<void> {
  const { name, namespace } = pod.metadata;
  await client.request('POST', `/api/v1/namespaces/${namespace}/pods/${name}/eviction`, {
    body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } },
  });
}
