// A tenant's workload cluster for tests: a second real kube-apiserver + etcd (scripts/control-plane.sh,
// the same harness as the metal cluster), kube-controller-manager with the controllers a drain meets
// (Deployment, ReplicaSet, disruption, garbage collector), kube-scheduler, and kwok simulating the
// kubelets of the Nodes a test adds, so pods start, terminate and land elsewhere as in a real cluster.
// Binaries come from scripts/lib/k8s-tools.sh and scripts/lib/kwok.sh. Everything it starts is
// stopped by stop(), and killed when the test process exits whatever happens.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient } from '../../lib/kube/client.js';
import { Core } from '../../lib/kube/resources.js';
import type { KubeObject } from '../../api/schema/meta.js';
import {
  controlPlaneDownSync,
  controlPlaneUp,
  startApiserver,
  stopApiserver,
  type ControlPlane,
} from './control-plane.js';
import { k8sToolPath, kwokFiles } from './k8s-tools.js';
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
    conditions?: { type: string; status: string }[];
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

const live = new Set<ChildProcess>();
let hooked = false;
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.once('exit', () => {
    for (const p of live) p.kill('SIGKILL');
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Starts `bin` with its output in DIR/<name>.log; the test fails naming the log if it exits early. */
function startProcess(dir: string, name: string, bin: string, args: string[]): ChildProcess {
  hookExit();
  const log = openSync(join(dir, `${name}.log`), 'a');
  const proc = spawn(bin, args, {
    cwd: dir,
    // kwok reads ~/.kwok/kwok.yaml: give every process the cluster's directory as HOME.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  live.add(proc);
  proc.once('exit', () => live.delete(proc));
  return proc;
}

async function stopProcess(proc: ChildProcess, timeoutMs = 10_000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  await exited;
  clearTimeout(timer);
}

/** GET https://127.0.0.1:port/healthz of a component serving a self-signed certificate. */
function healthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/healthz', rejectUnauthorized: false, timeout: 2000 },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

async function waitHealthy(name: string, proc: ChildProcess, port: number, dir: string): Promise<void> {
  await waitFor(
    `${name} /healthz on 127.0.0.1:${port}`,
    async () => {
      if (proc.exitCode !== null)
        throw new Error(`${name} exited (${proc.exitCode}); see ${dir}/${name}.log`);
      return healthy(port);
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
}

/**
 * Starts a workload cluster in a fresh directory. Fails loudly (with how to get them) when kubectl,
 * kube-controller-manager, kube-scheduler or kwok cannot be built.
 */
export async function startWorkloadCluster(prefix = 'metal-workload-'): Promise<WorkloadCluster> {
  const kcmBin = k8sToolPath('kube-controller-manager');
  const schedBin = k8sToolPath('kube-scheduler');
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
  process.once('exit', () => {
    if (stopped) return;
    try {
      controlPlaneDownSync(dir);
    } catch {
      // already down
    }
  });
  try {
    const cp = await controlPlaneUp(dir);
    const k = cp.kubeconfig;
    const kcmPort = await freePort();
    mkdirSync(join(dir, 'kcm-certs'));
    const kcm = startProcess(dir, 'kube-controller-manager', kcmBin, [
      `--kubeconfig=${k}`,
      `--authentication-kubeconfig=${k}`,
      `--authorization-kubeconfig=${k}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${kcmPort}`,
      `--cert-dir=${join(dir, 'kcm-certs')}`,
      '--leader-elect=false',
      `--controllers=${WORKLOAD_CONTROLLERS.join(',')}`,
      '--v=1',
    ]);
    procs.push(kcm);
    const schedPort = await freePort();
    mkdirSync(join(dir, 'scheduler-certs'));
    const sched = startProcess(dir, 'kube-scheduler', schedBin, [
      `--kubeconfig=${k}`,
      `--authentication-kubeconfig=${k}`,
      `--authorization-kubeconfig=${k}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${schedPort}`,
      `--cert-dir=${join(dir, 'scheduler-certs')}`,
      '--leader-elect=false',
      '--v=1',
    ]);
    procs.push(sched);
    const kwok = startProcess(dir, 'kwok', kwokBin.bin, [
      `--kubeconfig=${k}`,
      `--config=${kwokBin.stages}`,
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
      '--cidr=10.64.0.1/16',
      '--node-ip=10.63.0.1',
    ]);
    procs.push(kwok);
    await waitHealthy('kube-controller-manager', kcm, kcmPort, dir);
    await waitHealthy('kube-scheduler', sched, schedPort, dir);
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
