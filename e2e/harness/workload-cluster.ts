// A tenant's workload cluster for tests: a second real kube-apiserver + etcd (scripts/control-plane.sh,
// the same harness as the metal cluster), kube-controller-manager with the controllers a drain meets
// (Deployment, ReplicaSet, disruption, garbage collector), kube-scheduler, and kwok simulating the
// kubelets of the Nodes a test adds, so pods start, terminate and land elsewhere as in a real cluster.
// Binaries come from scripts/lib/k8s-tools.sh and scripts/lib/kwok.sh. Everything it starts is
// stopped by stop(), and killed when the test process exits whatever happens.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient } from '../../lib/kube/client.js';
import { Core } from '../../lib/kube/resources.js';
import type { KubeObject } from '../../api/schema/meta.js';
import {
  controlPlaneDownSync,
  downOnExit,
  controlPlaneUp,
  startApiserver,
  stopApiserver,
  type ControlPlane,
} from './control-plane.js';
import { kwokFiles } from './k8s-tools.js';
import { startControllerManager, startProcess, startScheduler, stopProcess } from './kube-components.js';
import { waitFor } from './env.js';

/**
 * The controllers of kube-controller-manager a drain depends on (names as in Kubernetes ≥ 1.27). The
 * node lifecycle controller lifts the not-ready taint the API server puts on every new Node once kwok
 * reports it Ready, as in a real cluster.
 */
export const WORKLOAD_CONTROLLERS = [
  'node-lifecycle-controller',
  'deployment-controller',
  'replicaset-controller',
  'disruption-controller',
  'garbage-collector-controller',
] as const;

/** The annotation kwok selects its Nodes by (--manage-nodes-with-annotation-selector). */
export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';

export interface NodeSpec {
  name: string;
  providerID?: string;
  labels?: Record<string, string>;
  /** Created already cordoned (an admin's cordon, set before anything of ours runs). */
  unschedulable?: boolean;
}

export interface Node extends KubeObject {
  spec?: { providerID?: string; unschedulable?: boolean; taints?: { key: string; effect: string }[] };
  status?: {
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    allocatable?: Record<string, string>;
    capacity?: Record<string, string>;
  };
}

export interface WorkloadCluster {
  dir: string;
  kubeconfig: string;
  controlPlane: ControlPlane;
  /** An admin client of the workload cluster (closed by stop()). */
  admin: KubeClient;
  /** Creates Nodes that kwok runs, and waits until each is Ready and without the not-ready taint. */
  addNodes(nodes: NodeSpec[], timeoutMs?: number): Promise<void>;
  /** Stops the workload kube-apiserver only (an unreachable workload cluster). */
  stopApiserver(): Promise<void>;
  startApiserver(): Promise<void>;
  /** Process ids of everything it runs (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok). */
  pids(): number[];
  /** Stops every process it started and removes its directory; safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Starts a workload cluster in a fresh directory. Fails loudly (with how to get them) when kubectl,
 * kube-controller-manager, kube-scheduler or kwok cannot be built.
 */
export async function startWorkloadCluster(prefix = 'metal-workload-'): Promise<WorkloadCluster> {
  const kwokBin = kwokFiles();
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const procs: ChildProcess[] = [];
  let admin: KubeClient | undefined;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await admin?.close();
    for (const p of procs.reverse()) await stopProcess(p);
    try {
      controlPlaneDownSync(dir);
    } catch {
      // never started
    }
    rmSync(dir, { recursive: true, force: true });
  };
  downOnExit(dir, () => stopped);
  try {
    const cp = await controlPlaneUp(dir);
    const k = cp.kubeconfig;
    // kwok's Node heartbeats run late on a loaded machine: past the grace period the node lifecycle
    // controller marks every pod of the Node Ready=False, which kwok never turns back (a kubelet
    // would), so budgets count them unhealthy for ever. Nothing here tests a Node going NotReady.
    const kcm = await startControllerManager(dir, k, WORKLOAD_CONTROLLERS, [
      '--node-monitor-grace-period=10m',
    ]);
    procs.push(kcm.proc);
    const sched = await startScheduler(dir, k);
    procs.push(sched.proc);
    const kwok = startProcess(dir, 'kwok', kwokBin.bin, [
      `--kubeconfig=${k}`,
      `--config=${kwokBin.stages}`,
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
      '--cidr=10.64.0.1/16',
      '--node-ip=10.63.0.1',
    ]);
    procs.push(kwok);
    await kcm.ready();
    await sched.ready();
    admin = await KubeClient.fromFile(k);
    const client = admin;
    return {
      dir,
      kubeconfig: k,
      controlPlane: cp,
      admin: client,
      addNodes: async (nodes, timeoutMs = 30_000) => {
        const res = client.resource<Node>(Core.Node);
        for (const n of nodes) await res.create(nodeObject(n));
        for (const n of nodes)
          await waitFor(
            `Node ${n.name} Ready (kwok; see ${dir}/kwok.log)`,
            async () => {
              if (kwok.exitCode !== null)
                throw new Error(`kwok exited: ${readFileSync(join(dir, 'kwok.log'), 'utf8').slice(-2000)}`);
              const node = await res.get(n.name);
              const ready = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
              // Schedulable only once the node lifecycle controller lifted the not-ready taint.
              return ready && !node.spec?.taints?.some((t) => t.key === 'node.kubernetes.io/not-ready');
            },
            { timeoutMs },
          );
      },
      pids: () => [
        ...['etcd', 'kube-apiserver']
          .map((n) => join(dir, `${n}.pid`))
          .filter((f) => existsSync(f))
          .map((f) => Number(readFileSync(f, 'utf8').trim())),
        ...procs.map((p) => p.pid ?? 0),
      ],
      stopApiserver: () => stopApiserver(dir),
      startApiserver: () => startApiserver(dir),
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

function nodeObject(n: NodeSpec): Node & Record<string, unknown> {
  const resources = { cpu: '32', memory: '256Gi', pods: '110' };
  return {
    metadata: {
      name: n.name,
      annotations: { [KWOK_NODE_ANNOTATION]: 'fake' },
      labels: { 'kubernetes.io/hostname': n.name, type: 'kwok', ...n.labels },
    },
    spec: {
      ...(n.providerID ? { providerID: n.providerID } : {}),
      ...(n.unschedulable ? { unschedulable: true } : {}),
    },
    // Nodes keep status given on create: the scheduler needs allocatable before kwok's first heartbeat.
    status: { allocatable: resources, capacity: resources },
  };
}
