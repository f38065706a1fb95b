// A stand-in for the kubelet of one Node, for the stand-in cluster (../cluster.ts): it registers its
// Node and keeps it Ready (status and a Lease in kube-node-lease, as the kubelet's heartbeat), runs
// the containers of the pods the scheduler binds to it (pod-plan.ts says what it does and does not
// do as the kubelet does), reports their status, restarts a container that exits, and ends a pod
// that is deleted: SIGTERM and the pod's grace period, then SIGKILL (grace period 0: at once), then
// the final delete the kubelet makes. It uses the admin identity (a real kubelet's is
// system:node:<name>, limited by the NodeRestriction plugin); only the containers' identities matter
// to the suites, and those are the pods' own ServiceAccounts.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '../../../api/schema/meta.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import { isConflict, isNotFound } from '../../../lib/kube/errors.js';
import { Informer } from '../../../lib/kube/informer.js';
import { Core } from '../../../lib/kube/resources.js';
import {
  containerPlan,
  podStatus,
  restartDelayMs,
  volumePlans,
  type ContainerPlan,
  type ContainerRuntimeState,
  type PodHost,
  type PodObject,
} from './pod-plan.js';
import { KUBELET_PORT, startLogServer } from './log-server.js';
import { probe, startContainer, stopContainer, type ContainerProcess } from './runtime.js';
import { podVolumes, type PodVolumes } from './volumes.js';

export interface KubeletOptions {
  nodeName: string;
  /** Where pods' volumes and container logs go: DIR/pods/<namespace>_<name>_<uid>/. */
  dir: string;
  /** The image's files (dist/): what every container runs. */
  distDir: string;
  apiserverHost: string;
  apiserverPort: number;
  /** The node's address (InternalIP, the pods' hostIP). */
  nodeIP: string;
  /** The first three octets of the pods' addresses: .2 to .254, all local to this host (network.ts). */
  podNetwork: string;
  /** Volume re-sync and node heartbeat period (the kubelet's are about a minute and 10 s). */
  syncPeriodMs?: number;
  log?: (line: string) => void;
}

export interface StandInKubelet {
  /** Pods running now, by uid. */
  pods(): string[];
  /** Where a pod's files are (its container logs: <container>.log). */
  podDir(pod: PodObject): string;
  stop(): Promise<void>;
}

type NodeObject = KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };

const RESOURCES = { cpu: '16', memory: '64Gi', pods: '110', 'ephemeral-storage': '100Gi' };

function nodeStatus(nodeIP: string, now: string, since: string): Record<string, unknown> {
  const heartbeat = (type: string, status: string, reason: string) => ({
    type,
    status,
    reason,
    message: 'stand-in kubelet',
    lastHeartbeatTime: now,
    lastTransitionTime: since,
  });
  return {
    capacity: RESOURCES,
    allocatable: RESOURCES,
    addresses: [{ type: 'InternalIP', address: nodeIP }],
    conditions: [
      heartbeat('Ready', 'True', 'KubeletReady'),
      heartbeat('MemoryPressure', 'False', 'KubeletHasSufficientMemory'),
      heartbeat('DiskPressure', 'False', 'KubeletHasNoDiskPressure'),
      heartbeat('PIDPressure', 'False', 'KubeletHasSufficientPID'),
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: KUBELET_PORT } },
    nodeInfo: {
      kubeletVersion: 'stand-in',
      operatingSystem: 'linux',
      architecture: 'amd64',
      containerRuntimeVersion: 'stand-in://processes',
    },
  };
}

class PodWorker {
  readonly #states: ContainerRuntimeState[];
  readonly #procs = new Map<string, ContainerProcess>();
  readonly #startTime = new Date().toISOString();
  #volumes: PodVolumes | undefined;
  #ending = false;
  #lastStatus = '';

  constructor(
    private readonly client: KubeClient,
    private pod: PodObject,
    private readonly host: PodHost,
    private readonly dir: string,
    private readonly opts: KubeletOptions,
  ) {
    this.#states = pod.spec.containers.map((c) => ({
      name: c.name,
      running: false,
      ready: false,
      restartCount: 0,
    }));
  }

  get ending(): boolean {
    return this.#ending;
  }

  update(pod: PodObject): void {
    this.pod = pod;
  }

  async run(): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    let plans: ContainerPlan[];
    try {
      plans = this.pod.spec.containers.map((c) => containerPlan(this.pod, c, this.host));
      this.#volumes = podVolumes(this.client, this.pod, volumePlans(this.pod, this.host), this.dir);
    } catch (e) {
      await this.#report('CreateContainerConfigError');
      this.opts.log?.(`${this.#name}: ${(e as Error).message}`);
      return;
    }
    // The kubelet retries a volume whose Secret does not exist yet (cert-manager's, at first).
    let lastError = '';
    while (!this.#ending) {
      try {
        await this.#volumes.sync();
        break;
      } catch (e) {
        if ((e as Error).message !== lastError)
          this.opts.log?.(`${this.#name}: waiting: ${(e as Error).message}`);
        lastError = (e as Error).message;
        await this.#report('ContainerCreating');
        await sleep(1000);
      }
    }
    await Promise.all(plans.map((p, i) => this.#keepRunning(p, this.#states[i]!)));
  }

  get #name(): string {
    return `${this.pod.metadata.namespace}/${this.pod.metadata.name}`;
  }

  async #keepRunning(plan: ContainerPlan, state: ContainerRuntimeState): Promise<void> {
    while (!this.#ending) {
      const c = startContainer(plan, {
        distDir: this.opts.distDir,
        podDir: this.dir,
        mountSource: (v) => this.#volumes!.dirOf(v),
      });
      this.#procs.set(plan.name, c);
      Object.assign(state, { running: true, ready: !plan.readiness, startedAt: new Date().toISOString() });
      delete state.waiting;
      await this.#report();
      const stopProbing = this.#probeReadiness(plan, state);
      const exit = await c.exited;
      stopProbing();
      Object.assign(state, {
        running: false,
        ready: false,
        lastExit: { exitCode: exit.code, signal: exit.signal, finishedAt: new Date().toISOString() },
      });
      if (this.#ending) break;
      this.opts.log?.(`${this.#name}/${plan.name} exited (${exit.code ?? exit.signal}); restarting`);
      state.waiting = 'CrashLoopBackOff';
      await this.#report();
      await sleep(restartDelayMs(state.restartCount));
      state.restartCount++;
    }
  }

  #probeReadiness(plan: ContainerPlan, state: ContainerRuntimeState): () => void {
    const r = plan.readiness;
    if (!r) return () => {};
    let stopped = false;
    void (async () => {
      let failures = 0;
      while (!stopped && !this.#ending) {
        const ok = await probe(this.host.podIP, r.port, r.path);
        failures = ok ? 0 : failures + 1;
        const ready = ok || (state.ready && failures < r.failureThreshold);
        if (!stopped && ready !== state.ready) {
          state.ready = ready;
          await this.#report();
        }
        await sleep(state.ready ? r.periodMs : Math.min(r.periodMs, 500));
      }
    })();
    return () => {
      stopped = true;
    };
  }

  async #report(waiting?: string): Promise<void> {
    if (this.#ending) return;
    if (waiting) for (const s of this.#states) if (!s.running) s.waiting = waiting;
    const status = podStatus(this.pod, this.host, this.#states, this.#startTime, new Date().toISOString());
    const key = JSON.stringify({ ...status, conditions: status.conditions?.map((c) => [c.type, c.status]) });
    if (key === this.#lastStatus) return;
    this.#lastStatus = key;
    await this.client
      .resource<PodObject>(Core.Pod)
      .patch(
        this.pod.metadata.name!,
        { status },
        { namespace: this.pod.metadata.namespace, subresource: 'status' },
      )
      .catch((e: unknown) => {
        if (!isNotFound(e)) this.opts.log?.(`${this.#name}: status: ${(e as Error).message}`);
      });
  }

  async resync(): Promise<void> {
    if (!this.#ending)
      await this.#volumes?.sync().catch((e: Error) => this.opts.log?.(`${this.#name}: ${e.message}`));
  }

  /** Stops every container within `graceMs`; with `finalDelete`, then removes the pod object. */
  async end(graceMs: number, finalDelete: boolean): Promise<void> {
    this.#ending = true;
    await Promise.all([...this.#procs.values()].map((c) => stopContainer(c, graceMs)));
    if (finalDelete)
      await this.client
        .resource<PodObject>(Core.Pod)
        .delete(this.pod.metadata.name!, {
          namespace: this.pod.metadata.namespace,
          gracePeriodSeconds: 0,
          preconditions: { uid: this.pod.metadata.uid! },
        })
        .catch((e: unknown) => {
          if (!isNotFound(e) && !isConflict(e)) throw e;
        });
    rmSync(join(this.dir, 'volumes'), { recursive: true, force: true });
  }
}

/** Registers the Node and starts serving its pods. */
export async function startStandInKubelet(client: KubeClient, opts: KubeletOptions): Promise<StandInKubelet> {
  const nodes = client.resource<NodeObject>(Core.Node);
  const leases = client.resource<KubeObject & { spec?: Record<string, unknown> }>(Core.Lease);
  const since = new Date().toISOString();
  await nodes.create({
    metadata: {
      name: opts.nodeName,
      labels: {
        'kubernetes.io/hostname': opts.nodeName,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
      },
    },
    spec: {},
    status: nodeStatus(opts.nodeIP, since, since),
  });
  const period = opts.syncPeriodMs ?? 10_000;
  const heartbeat = async () => {
    const now = new Date().toISOString();
    await nodes
      .patch(opts.nodeName, { status: nodeStatus(opts.nodeIP, now, since) }, { subresource: 'status' })
      .catch((e: Error) => opts.log?.(`node status: ${e.message}`));
    const lease = {
      metadata: { name: opts.nodeName, namespace: 'kube-node-lease' },
      spec: { holderIdentity: opts.nodeName, leaseDurationSeconds: 40, renewTime: now.replace('Z', '000Z') },
    };
    await leases
      .apply(lease, { fieldManager: 'stand-in-kubelet' })
      .catch((e: Error) => opts.log?.(`node lease: ${e.message}`));
  };
  await heartbeat();

  const workers = new Map<string, PodWorker>();
  const addresses = new Map<string, string>(); // uid → pod IP
  const network = opts.podNetwork;
  const allocate = (uid: string) => {
    const used = new Set(addresses.values());
    for (let i = 2; i < 255; i++) {
      const ip = `${network}.${i}`;
      if (!used.has(ip)) {
        addresses.set(uid, ip);
        return ip;
      }
    }
    throw new Error(`stand-in kubelet: no free pod address in ${network}.0/24`);
  };
  const podDir = (p: PodObject) =>
    join(opts.dir, 'pods', `${p.metadata.namespace}_${p.metadata.name}_${p.metadata.uid}`);
  const end = (uid: string, graceMs: number, finalDelete: boolean) => {
    const w = workers.get(uid);
    if (!w || w.ending) return;
    void w
      .end(graceMs, finalDelete)
      .catch((e: Error) => opts.log?.(`ending pod ${uid}: ${e.message}`))
      .finally(() => {
        workers.delete(uid);
        addresses.delete(uid);
        for (const [k, p] of byName) if (p.metadata.uid === uid) byName.delete(k);
      });
  };
  const seen = (p: PodObject) => {
    const uid = p.metadata.uid!;
    const w = workers.get(uid);
    if (p.metadata.deletionTimestamp) {
      end(uid, (p.metadata.deletionGracePeriodSeconds ?? 30) * 1000, true);
      return;
    }
    if (w) {
      w.update(p);
      return;
    }
    if (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') return;
    const host: PodHost = {
      podIP: allocate(uid),
      hostIP: opts.nodeIP,
      apiserverHost: opts.apiserverHost,
      apiserverPort: opts.apiserverPort,
    };
    const worker = new PodWorker(client, p, host, podDir(p), opts);
    workers.set(uid, worker);
    byName.set(`${p.metadata.namespace}/${p.metadata.name}`, p);
    void worker
      .run()
      .catch((e: Error) => opts.log?.(`pod ${p.metadata.namespace}/${p.metadata.name}: ${e.message}`));
  };
  const byName = new Map<string, PodObject>(); // namespace/name → the pod a worker runs
  const logs = await startLogServer(opts.dir, opts.nodeIP, (namespace, name, container) => {
    const p = byName.get(`${namespace}/${name}`);
    return p && join(podDir(p), `${container}.log`);
  });
  const informer = new Informer<PodObject>(client.resource<PodObject>(Core.Pod), {
    fieldSelector: `spec.nodeName=${opts.nodeName}`,
  });
  informer.on({
    add: seen,
    update: (_old, p) => seen(p),
    // Gone without a graceful end (deleted with grace period 0, or its node's object removed): kill now.
    delete: (p) => end(p.metadata.uid!, 0, false),
  });
  informer.start();
  await informer.waitForSync();

  const timer = setInterval(() => {
    void heartbeat();
    for (const w of workers.values()) void w.resync();
  }, period);
  return {
    pods: () => [...workers.keys()],
    podDir,
    async stop() {
      clearInterval(timer);
      await informer.stop();
      logs.closeAllConnections();
      await new Promise((resolve) => logs.close(resolve));
      await Promise.all([...workers.values()].map((w) => w.end(0, false)));
      workers.clear();
    },
  };
}
