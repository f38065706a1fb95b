// Cluster mode (E2E_TARGET=cluster): the binaries as the install left them. A binary is found by its
// Deployment's labels (app.kubernetes.io/part-of=metal-maintenance, app.kubernetes.io/component=
// <binary>), which kustomize and the chart both keep, so a prefix or namespace an overlay adds does
// not matter. Ready means what `kubectl rollout status` means: every replica updated, ready, and no
// old pod left. A kill is what it is in a cluster: deleting the pods (SIGKILL: grace period 0, SIGTERM:
// the pod's own grace period); their ReplicaSet starts the replacements.
import type { KubeObject } from '../../api/schema/meta.js';
import type { KubeClient } from '../../lib/kube/client.js';
import { isNotFound } from '../../lib/kube/errors.js';
import { Core } from '../../lib/kube/resources.js';
import { waitFor } from './env.js';
import { SYSTEM_NAMESPACE } from './processes.js';
import { TargetError } from './target.js';

export interface PodObject extends KubeObject {
  spec: { nodeName?: string; containers: { name: string; args?: string[]; command?: string[] }[] };
  status?: {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { name: string; restartCount: number; ready: boolean }[];
  };
}

export interface DeploymentObject extends KubeObject {
  spec: {
    replicas?: number;
    selector: { matchLabels?: Record<string, string> };
    template: { spec: { containers: { name: string; command?: string[]; args?: string[] }[] } };
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
  };
}

export const isPodReady = (p: PodObject): boolean =>
  !p.metadata.deletionTimestamp &&
  (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** The install's namespace: METAL_E2E_NAMESPACE, else the one manifests/ installs into. */
export function installNamespace(env: NodeJS.ProcessEnv = process.env): string {
  return env.METAL_E2E_NAMESPACE ?? SYSTEM_NAMESPACE;
}

export interface InstalledBinary {
  binary: string;
  namespace: string;
  deployment(): Promise<DeploymentObject>;
  /** The Deployment's pods (terminating ones included). */
  pods(): Promise<PodObject[]>;
  /** Waits until the rollout is complete: every replica updated and ready, no old pod left. */
  waitReady(timeoutMs?: number): Promise<DeploymentObject>;
  /**
   * Deletes every pod of the Deployment (SIGKILL: gracePeriodSeconds 0; SIGTERM: the pod's own) and
   * waits until they are gone; returns their names.
   */
  kill(signal?: NodeJS.Signals, timeoutMs?: number): Promise<string[]>;
  /** Waits for the ReplicaSet's replacements of `killed` to be ready. */
  waitReplaced(killed: readonly string[], timeoutMs?: number): Promise<PodObject[]>;
}

export function describeDeployment(d: DeploymentObject | undefined): string {
  if (!d) return 'no Deployment';
  const s = d.status ?? {};
  return (
    `replicas ${s.replicas ?? 0}/${d.spec.replicas ?? 1}, updated ${s.updatedReplicas ?? 0}, ` +
    `ready ${s.readyReplicas ?? 0}, observed generation ${s.observedGeneration ?? 0}/${d.metadata.generation ?? 0}`
  );
}

/** The installed Deployment of `binary` (`webhook` or `<name>-controller`); fails if there is none or several. */
export function installedBinary(
  admin: KubeClient,
  binary: string,
  namespace = installNamespace(),
): InstalledBinary {
  const deployments = admin.resource<DeploymentObject>(Core.Deployment);
  const podsApi = admin.resource<PodObject>(Core.Pod);
  const selector = `app.kubernetes.io/part-of=metal-maintenance,app.kubernetes.io/component=${binary}`;
  const deployment = async () => {
    const list = await deployments.list({ namespace, labelSelector: selector });
    if (list.items.length !== 1)
      throw new TargetError(
        `cluster mode: ${list.items.length} Deployments in ${namespace} carry ${selector}, want one ` +
          '(install the system from manifests/ or the chart first; METAL_E2E_NAMESPACE names another namespace)',
      );
    return list.items[0]!;
  };
  const pods = async () => {
    const d = await deployment();
    const match = d.spec.selector.matchLabels ?? {};
    const labelSelector = Object.entries(match)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    return (await podsApi.list({ namespace, labelSelector })).items;
  };
  const waitReady = async (timeoutMs = 120_000) => {
    let last: DeploymentObject | undefined;
    return waitFor(
      `Deployment of ${binary} in ${namespace} rolled out and ready`,
      async () => {
        const d = (last = await deployment());
        const want = d.spec.replicas ?? 1;
        const s = d.status ?? {};
        return (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 1) &&
          s.updatedReplicas === want &&
          s.readyReplicas === want &&
          s.replicas === want
          ? d
          : undefined;
      },
      { timeoutMs, intervalMs: 250 },
    ).catch((e: Error) => {
      throw new Error(`${e.message}; last seen: ${describeDeployment(last)}`, { cause: e });
    });
  };
  return {
    binary,
    namespace,
    deployment,
    pods,
    waitReady,
    async kill(signal = 'SIGKILL', timeoutMs = 60_000) {
      const victims = (await pods()).filter((p) => !p.metadata.deletionTimestamp);
      const names = victims.map((p) => p.metadata.name!);
      await Promise.all(
        victims.map((p) =>
          podsApi
            .delete(p.metadata.name!, {
              namespace,
              preconditions: { uid: p.metadata.uid! },
              ...(signal === 'SIGKILL' ? { gracePeriodSeconds: 0 } : {}),
            })
            .catch((e: unknown) => {
              if (!isNotFound(e)) throw e;
            }),
        ),
      );
      await waitFor(
        `pods ${names.join(', ')} of ${binary} gone`,
        async () => {
          const left = new Set((await pods()).map((p) => p.metadata.name));
          return names.every((n) => !left.has(n));
        },
        { timeoutMs, intervalMs: 200 },
      );
      return names;
    },
    async waitReplaced(killed, timeoutMs = 120_000) {
      const gone = new Set(killed);
      await waitReady(timeoutMs);
      return waitFor(
        `replacements of ${killed.join(', ')} ready`,
        async () => {
          const ps = await pods();
          return ps.some((p) => gone.has(p.metadata.name!)) ? undefined : ps.filter(isPodReady);
        },
        { timeoutMs, intervalMs: 250 },
      );
    },
  };
}

/**
 * The installed policy ConfigMap's data as it is now, and a way to put it back: a cluster-mode suite
 * sets its own short policy and restores the operator's when it ends.
 */
export async function snapshotConfigMap(
  admin: KubeClient,
  name: string,
  namespace: string,
): Promise<{ data: Record<string, string>; restore(): Promise<void> }> {
  type CM = KubeObject & { data?: Record<string, string> };
  const cms = admin.resource<CM>(Core.ConfigMap);
  const before = await cms.get(name, namespace);
  const data = { ...(before.data ?? {}) };
  return {
    data,
    async restore() {
      const now = await cms.get(name, namespace);
      await cms.replace({ ...now, data });
    },
  };
}

/** Parsed JSON lines of a log text (pino); other lines are skipped. */
export function jsonLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a line cut by the container's end
    }
  }
  return out;
}

/**
 * What a suite reads of a binary's logs, in cluster mode: the logs of every current pod of its
 * Deployment, through the API (pods/log, what `kubectl logs` reads). A replaced pod's lines are gone,
 * as in a cluster. `logs` is what the last read saw; waitForLog reads again until a line matches.
 */
export interface InstalledLogs {
  name: string;
  logs: Record<string, unknown>[];
  refresh(): Promise<Record<string, unknown>[]>;
  waitForLog(
    pred: (line: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
}

export function installedLogs(admin: KubeClient, binary: InstalledBinary): InstalledLogs {
  const podsApi = admin.resource<PodObject>(Core.Pod);
  const logs: InstalledLogs = {
    name: binary.binary,
    logs: [],
    async refresh() {
      const pods = (await binary.pods()).filter((p) => p.status?.phase === 'Running');
      const texts = await Promise.all(
        pods.map((p) =>
          admin
            .requestText('GET', `${podsApi.path(binary.namespace, p.metadata.name)}/log`, {
              query: { container: p.spec.containers[0]?.name },
            })
            .catch((e: unknown) => {
              if (isNotFound(e)) return '';
              throw e;
            }),
        ),
      );
      logs.logs = texts.flatMap(jsonLines);
      return logs.logs;
    },
    waitForLog(pred, timeoutMs = 10_000) {
      return waitFor(
        `a log line of ${binary.binary} (pods/log)`,
        async () => (await logs.refresh()).find(pred),
        { timeoutMs, intervalMs: 500 },
      );
    },
  };
  return logs;
}

/**
 * The Prometheus text the leader of `binary` serves on its ops port, through the API server's pod
 * proxy (what a port-forward reaches): the leader is the pod whose name starts the holder identity
 * of the binary's Lease (`<hostname>_<pid>`, and a pod's hostname is its name).
 */
export async function leaderMetrics(
  admin: KubeClient,
  binary: InstalledBinary,
  opsPort = 8081,
): Promise<string> {
  const lease = await admin
    .resource<KubeObject & { spec?: { holderIdentity?: string } }>(Core.Lease)
    .get(binary.binary, binary.namespace);
  const holder = lease.spec?.holderIdentity ?? '';
  const pods = (await binary.pods()).filter(isPodReady);
  const leader = pods.find((p) => holder.startsWith(`${p.metadata.name}_`));
  if (!leader)
    throw new Error(
      `no ready pod of ${binary.binary} holds its Lease (holder ${holder || 'none'}; pods ` +
        `${pods.map((p) => p.metadata.name).join(', ') || 'none'})`,
    );
  const path = `${admin.resource(Core.Pod).path(binary.namespace, `${leader.metadata.name}:${opsPort}`)}/proxy/metrics`;
  return admin.requestText('GET', path);
}
