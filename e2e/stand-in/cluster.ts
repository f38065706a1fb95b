// A stand-in cluster, so the e2e suite's cluster mode (E2E_TARGET=cluster) runs on this machine, which
// has no container engine: the real kube-apiserver and etcd (scripts/control-plane.sh, profile
// "cluster"), the real kube-controller-manager (Deployments, ReplicaSets, endpoints, namespaces,
// ServiceAccounts, the cluster CA ConfigMap, node lifecycle) and kube-scheduler, the real cert-manager,
// and one stand-in kubelet (kubelet/) that runs the scheduled pods of ours as processes from the
// image's files. The system is installed the way docs/operations.md tells an operator:
// `kubectl apply --server-side -k manifests`. Nothing of the suite's knows: it sees Deployments, pods,
// the webhook behind its Service, and the API.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient } from '../../lib/kube/client.js';
import { startCertManager, type CertManager } from '../harness/cert-manager.js';
import { REPO_ROOT, controlPlaneDownSync, controlPlaneUp, downOnExit } from '../harness/control-plane.js';
import { prepareDist } from '../harness/dist.js';
import { installedBinary } from '../harness/installed.js';
import { kubectl } from '../harness/k8s-tools.js';
import { startControllerManager, startScheduler, stopProcess } from '../harness/kube-components.js';
import { startStandInKubelet, type StandInKubelet } from './kubelet/kubelet.js';
import { NODE_IP, POD_NETWORK, setUpPodNetwork } from './network.js';

/** kube-controller-manager's controllers a cluster needs to run our install (names as in ≥ 1.27). */
export const CLUSTER_CONTROLLERS = [
  'deployment-controller',
  'replicaset-controller',
  'endpoints-controller',
  'endpointslice-controller',
  'garbage-collector-controller',
  'namespace-controller',
  'serviceaccount-controller',
  'root-ca-certificate-publisher-controller',
  'node-lifecycle-controller',
  'disruption-controller',
] as const;

/** The binaries the install runs, by their Deployments' component label. */
export const INSTALLED_BINARIES = [
  'webhook',
  'maintenance-controller',
  'approval-controller',
  'budget-controller',
  'boot-controller',
  'firmware-controller',
  'pipeline-controller',
  'drain-controller',
] as const;

export interface StandInCluster {
  dir: string;
  /** The admin kubeconfig: what the suite gets as KUBECONFIG. */
  kubeconfig: string;
  stop(): Promise<void>;
}

export async function startStandInCluster(
  options: { log?: (line: string) => void; prefix?: string } = {},
): Promise<StandInCluster> {
  const log = options.log ?? ((l: string) => process.stderr.write(`[stand-in cluster] ${l}\n`));
  setUpPodNetwork();
  const distDir = await prepareDist();
  const dir = mkdtempSync(join(tmpdir(), options.prefix ?? 'metal-stand-in-cluster-'));
  const stops: (() => Promise<void>)[] = [];
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    for (const s of stops.reverse()) await s().catch((e: Error) => log(`stopping: ${e.message}`));
    try {
      controlPlaneDownSync(dir);
    } catch {
      // never started
    }
    if (!process.env.METAL_STAND_IN_KEEP) rmSync(dir, { recursive: true, force: true });
  };
  downOnExit(dir, () => stopped);
  try {
    const t0 = Date.now();
    const cp = await controlPlaneUp(dir, { profile: 'cluster' });
    log(`control plane ready (${Date.now() - t0} ms): ${cp.kubeconfig}`);
    const kcm = await startControllerManager(dir, cp.kubeconfig, CLUSTER_CONTROLLERS, [
      `--root-ca-file=${join(dir, 'pki', 'ca.crt')}`,
    ]);
    stops.push(() => stopProcess(kcm.proc));
    const scheduler = await startScheduler(dir, cp.kubeconfig);
    stops.push(() => stopProcess(scheduler.proc));
    await kcm.ready();
    await scheduler.ready();
    const admin = await KubeClient.fromFile(cp.kubeconfig);
    stops.push(() => admin.close());
    const kubelet: StandInKubelet = await startStandInKubelet(admin, {
      nodeName: 'stand-in-node-0',
      dir,
      distDir,
      apiserverHost: '127.0.0.1',
      apiserverPort: cp.apiserverPort,
      nodeIP: NODE_IP,
      podNetwork: POD_NETWORK,
      log,
    });
    stops.push(() => kubelet.stop());
    const certManager: CertManager = await startCertManager(cp.kubeconfig);
    stops.push(() => certManager.stop());
    log(`controller-manager, scheduler, stand-in kubelet and cert-manager running (${Date.now() - t0} ms)`);
    const applied = await kubectl(
      cp.kubeconfig,
      ['apply', '--server-side', '-k', join(REPO_ROOT, 'manifests')],
      {
        timeoutMs: 180_000,
      },
    );
    if (applied.code !== 0) throw new Error(`kubectl apply --server-side -k manifests: ${applied.stderr}`);
    for (const binary of INSTALLED_BINARIES)
      await installedBinary(admin, binary)
        .waitReady(180_000)
        .catch((e: Error) => {
          throw new Error(`${e.message} (pod logs under ${dir}/pods)`, { cause: e });
        });
    log(`installed and rolled out (${Date.now() - t0} ms)`);
    writeFileSync(join(dir, 'ready'), cp.kubeconfig);
    return { dir, kubeconfig: cp.kubeconfig, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
