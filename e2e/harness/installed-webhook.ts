// startWebhook with E2E_TARGET=cluster: the installed webhook (its Deployment, e2e/harness/installed.ts)
// behind its Service, with the CA cert-manager injected into its configurations. The handle starts
// nothing: ready means the rollout is complete and the API server calls it; kill(i) deletes pod i (the
// ReplicaSet replaces it), restart(i) waits for the replacement; get(i, path) reaches pod i's HTTPS
// port through the API server's pod proxy (what a port-forward reaches). stop() restores the policy
// ConfigMap as the run found it and deletes what the file created (run-objects.ts); it never
// unregisters the installed configurations. What only a local webhook has (its balancer, its
// processes, a certificate poll interval or environment of the test's choosing) fails saying so.
import type { KubeObject } from '../../api/schema/meta.js';
import type { KubeClient } from '../../lib/kube/client.js';
import { isNotFound, KubeApiError } from '../../lib/kube/errors.js';
import { Core } from '../../lib/kube/resources.js';
import { POLICY_CONFIGMAP } from '../../policies/schema.js';
import { waitFor } from './env.js';
import {
  installedBinary,
  installNamespace,
  isPodReady,
  snapshotConfigMap,
  type PodObject,
} from './installed.js';
import { deleteRunObjects } from './run-objects.js';
import { localOnly, TargetError } from './target.js';
import { probe, type StartWebhookOptions, type WebhookHandle, type WebhookReplica } from './webhook.js';

/** The webhook container's serving port (manifests/webhook/deployment.yaml, --port). */
const SERVING_PORT = 9443;
const VALIDATING = 'metal-maintenance-validating';

type WebhookConfig = KubeObject & {
  webhooks?: {
    clientConfig: { service?: { name: string; namespace: string; port?: number }; caBundle?: string };
  }[];
};

const WHY =
  'in cluster mode the webhook is the installed Deployment behind its Service: no balancer, no ' +
  'processes of the test (webhook.kill/restart/get reach its pods through the API)';

export async function installedWebhook(
  admin: KubeClient,
  options: StartWebhookOptions = {},
): Promise<WebhookHandle> {
  const localOptions = (['certPollSeconds', 'env', 'controlPlaneDir'] as const).filter(
    (k) => options[k] !== undefined,
  );
  if (localOptions.length)
    throw new TargetError(
      `cluster mode: the installed webhook runs with its Deployment's args; ${localOptions.join(', ')} ` +
        'exist only with E2E_TARGET=local',
    );
  const readyTimeoutMs = options.readyTimeoutMs ?? 120_000;
  const namespace = installNamespace();
  const binary = installedBinary(admin, 'webhook', namespace);
  const deployment = await binary.waitReady(readyTimeoutMs);
  const waitUntilCalled = async (timeoutMs = 60_000) => {
    let last: string | true = 'not probed';
    await waitFor(
      'the API server to call the installed webhook',
      async () => (last = await probe(admin)) === true,
      {
        timeoutMs,
        intervalMs: 250,
      },
    ).catch((e: Error) => {
      throw new Error(`${e.message}: ${String(last)}`, { cause: e });
    });
  };
  await waitUntilCalled();
  const policy = await snapshotConfigMap(admin, POLICY_CONFIGMAP.name, namespace);
  const config = await admin.resource<WebhookConfig>(Core.ValidatingWebhookConfiguration).get(VALIDATING);
  const client = config.webhooks?.[0]?.clientConfig;
  const caPem = Buffer.from(client?.caBundle ?? '', 'base64').toString('utf8');
  const service = client?.service;
  const sa =
    (deployment.spec.template.spec as { serviceAccountName?: string }).serviceAccountName ?? 'default';
  const installedReplicas = deployment.spec.replicas ?? 1;
  const asked = options.replicas ?? 1;

  const podsApi = admin.resource<PodObject>(Core.Pod);
  const readyPods = async () =>
    (await binary.pods()).filter(isPodReady).sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!));
  // A test that kills replica i of the N it asked for means the webhook's other N-1 keep serving:
  // only true when the install runs N.
  const replicaOf = async (i: number, what: string) => {
    if (asked !== installedReplicas)
      throw new TargetError(
        `cluster mode: webhook.${what}(${i}) means replica ${i} of the ${asked} the test asked for; ` +
          `the installed Deployment runs ${installedReplicas}`,
      );
    const pod = (await readyPods())[i];
    if (!pod) throw new Error(`no ready webhook pod ${i} of ${installedReplicas}`);
    return pod;
  };
  const killed = new Map<number, string>();

  let stopped: Promise<void> | undefined;
  const handle: WebhookHandle = {
    url: service ? `https://${service.name}.${service.namespace}.svc:${service.port ?? 443}` : '',
    caPem,
    username: `system:serviceaccount:${namespace}:${sa}`,
    replicas: localOnly<WebhookReplica[]>('webhook.replicas', WHY),
    balancer: localOnly<WebhookHandle['balancer']>('webhook.balancer', WHY),
    async kill(i, signal = 'SIGKILL') {
      const pod = await replicaOf(i, 'kill');
      await podsApi
        .delete(pod.metadata.name!, {
          namespace,
          preconditions: { uid: pod.metadata.uid! },
          ...(signal === 'SIGKILL' ? { gracePeriodSeconds: 0 } : {}),
        })
        .catch((e: unknown) => {
          if (!isNotFound(e)) throw e;
        });
      killed.set(i, pod.metadata.name!);
      await waitFor(`webhook pod ${pod.metadata.name!} gone`, async () =>
        (await binary.pods()).every((p) => p.metadata.name !== pod.metadata.name),
      );
    },
    async restart(i) {
      if (!killed.has(i)) await handle.kill(i, 'SIGTERM');
      await binary.waitReplaced([killed.get(i)!], readyTimeoutMs);
      // The Deployment's status may still count the killed pod: back means as many ready pods as it runs.
      await waitFor(
        `${installedReplicas} ready webhook pods`,
        async () => (await readyPods()).length === installedReplicas,
        { timeoutMs: readyTimeoutMs, intervalMs: 250 },
      );
      killed.delete(i);
    },
    async get(i, path) {
      const pod = await replicaOf(i, 'get');
      const proxy = `${podsApi.path(namespace, `https:${pod.metadata.name!}:${SERVING_PORT}`)}/proxy${path}`;
      try {
        return { status: 200, body: await admin.requestText('GET', proxy) };
      } catch (e) {
        if (e instanceof KubeApiError) return { status: e.statusCode, body: e.message };
        throw e;
      }
    },
    waitUntilCalled,
    stop: () =>
      (stopped ??= (async () => {
        await policy
          .restore()
          .catch((e: unknown) => console.error(`[webhook harness] restoring the policy: ${String(e)}`));
        await deleteRunObjects(admin).catch((e: unknown) =>
          console.error(`[webhook harness] deleting the run's objects: ${String(e)}`),
        );
      })()),
  };
  return handle;
}
