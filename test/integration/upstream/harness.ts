// The upstream suite's world: a control plane of its own (metal-operator's manager reconciles every
// Server and ServerClaim in the cluster, so the shared one's leftovers from other files would be
// bound and changed), our CRDs, our webhook and lifecycle controllers as processes from the image's
// files with their Deployments' command, args and env (as in test/integration/lifecycle), upstream's real manager (e2e/peers/metal-operator.ts) with one Redfish
// mock per machine, and the boot stand-ins (boot-operator, metalprobe) that let discovery finish.
//
//   const up = await startUpstream({ machines: 6, labels: (i) => ({ pool: i < 3 ? 'a' : 'b' }) });
//   await up.waitAvailable();
//   ...
//   await up.killManager(); await up.startManager();        // kill -9 and a fresh start (crash file)
//   await up.kill('maintenance-controller'); await up.start('maintenance-controller');
//   await up.stop();
import { stringify } from 'yaml';
import type { Server } from '../../../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../../../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import type { KubeObject } from '../../../api/schema/meta.js';
import { KubeClient, type ResourceClient } from '../../../lib/kube/client.js';
import { Core } from '../../../lib/kube/resources.js';
import { POLICY_CONFIGMAP } from '../../../policies/schema.js';
import { controlPlaneUp, installCRDs, scratchControlPlaneDir } from '../../../e2e/harness/control-plane.js';
import { waitFor } from '../../../e2e/harness/env.js';
import { spawnShipped } from '../../../e2e/harness/deployed.js';
import { prepareDist } from '../../../e2e/harness/dist.js';
import {
  ensureNamespace,
  kubeconfigForBinary,
  SYSTEM_NAMESPACE,
  tokenKubeconfig,
  type RunningBinary,
} from '../../../e2e/harness/processes.js';
import { startWebhook, type WebhookHandle } from '../../../e2e/harness/webhook.js';
import { startMetalOperator, type MetalOperator } from '../../../e2e/peers/metal-operator.js';
import { BootStandins, BOOT_STANDIN_RULES } from '../../../e2e/peers/testing/boot-standins.js';
import { ServerClaimResource, ServerMaintenanceResource, ServerResource } from '../../../lib/kube/kinds.js';
import { CONTROLLERS, TEST_POLICY, type ControllerName } from '../lifecycle/harness.js';
import { startMachines, type Machine } from './fleet.js';

export interface UpstreamOptions {
  machines: number;
  labels?: (i: number) => Record<string, string>;
  /** Our lifecycle controllers to run (default: all three). */
  controllers?: readonly ControllerName[];
  managerArgs?: string[];
  /** Extra flags for every controller of ours (e.g. short Leases, so a restart after kill -9 leads at once). */
  controllerArgs?: string[];
}

export interface Upstream {
  admin: KubeClient;
  webhook: WebhookHandle;
  /** The running manager (a new one after startManager()). */
  readonly manager: MetalOperator;
  standins: BootStandins;
  machines: Machine[];
  controllers: Partial<Record<ControllerName, RunningBinary>>;
  /** kill -9 of upstream's manager (the program, not the namespace agent around it); resolves once it is gone. */
  killManager(): Promise<void>;
  /** Starts upstream's manager again, as the first time; resolves when it is ready. */
  startManager(): Promise<MetalOperator>;
  /** kill -9 of one of our controllers; resolves once it is gone. */
  kill(name: ControllerName): Promise<void>;
  /** Starts one of our controllers again with the same flags; resolves when it logs that it started. */
  start(name: ControllerName): Promise<RunningBinary>;
  servers: ResourceClient<Server>;
  claims: ResourceClient<ServerClaim>;
  maintenances: ResourceClient<ServerMaintenance>;
  /** Waits until every machine's Server is Available (discovered) and powered off: claimable upstream. */
  waitAvailable(timeoutMs?: number): Promise<Server[]>;
  stop(): Promise<void>;
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(what)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

async function writePolicy(admin: KubeClient): Promise<void> {
  await ensureNamespace(admin, SYSTEM_NAMESPACE);
  await admin.resource<KubeObject & { data?: Record<string, string> }>(Core.ConfigMap).create({
    metadata: { name: POLICY_CONFIGMAP.name, namespace: POLICY_CONFIGMAP.namespace },
    data: { [POLICY_CONFIGMAP.key]: stringify(TEST_POLICY) },
  });
}

async function standinClient(admin: KubeClient): Promise<KubeClient> {
  const name = 'boot-standins';
  await admin.resource(Core.ServiceAccount).create({ metadata: { name, namespace: SYSTEM_NAMESPACE } });
  await admin
    .resource(Core.ClusterRole)
    .create({ metadata: { name }, rules: BOOT_STANDIN_RULES } as KubeObject);
  await admin.resource(Core.ClusterRoleBinding).create({
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: [{ kind: 'ServiceAccount', name, namespace: SYSTEM_NAMESPACE }],
  } as KubeObject);
  return KubeClient.fromFile((await tokenKubeconfig(admin, SYSTEM_NAMESPACE, name)).kubeconfig);
}

export async function startUpstream(options: UpstreamOptions): Promise<Upstream> {
  const cp = scratchControlPlaneDir('metal-upstream-cp-');
  const stops: (() => Promise<unknown>)[] = [];
  const stopAll = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
    cp.teardown();
  };
  try {
    await prepareDist();
    const { kubeconfig } = await controlPlaneUp(cp.dir);
    const admin = await KubeClient.fromFile(kubeconfig);
    stops.push(() => admin.close());
    await installCRDs(admin);
    await writePolicy(admin);
    const webhook = await startWebhook(admin, { replicas: 1, controlPlaneDir: cp.dir, fromDist: true });
    stops.push(() => webhook.stop());

    const controllers: Partial<Record<ControllerName, RunningBinary>> = {};
    const kubeconfigs = new Map<ControllerName, string>();
    const spawnController = (name: ControllerName) =>
      (controllers[name] = spawnShipped(name, [
        `--kubeconfig=${kubeconfigs.get(name)!}`,
        '--ops-host=127.0.0.1',
        '--ops-port=0',
        ...(options.controllerArgs ?? []),
      ]));
    const started = (name: ControllerName, bin: RunningBinary) =>
      bin.waitForLog((l) => l.msg === `${name} started`, 60_000);
    for (const name of options.controllers ?? CONTROLLERS) {
      kubeconfigs.set(name, (await kubeconfigForBinary(admin, name)).kubeconfig);
      spawnController(name);
    }
    stops.push(() => Promise.all(Object.values(controllers).map((bin) => bin.stop('SIGTERM', 15_000))));
    await Promise.all(Object.entries(controllers).map(([name, bin]) => started(name as ControllerName, bin)));

    const machines = await startMachines(admin, 'up', options.machines, options.labels ?? (() => ({})));
    for (const m of machines) stops.push(() => m.mock.stop());
    const bmcPorts = machines.map((m) => Number(new URL(m.mock.endpoint).port));
    const launch = () => startMetalOperator(admin, { bmcPorts, args: options.managerArgs ?? [] });
    let manager = await launch();
    stops.push(() => manager.stop());
    const standins = new BootStandins({
      client: await standinClient(admin),
      managerNamespace: 'metal-operator-system',
      // The registry's host port is the running manager's (a restart bridges it out anew).
      registryAddress: (url) => manager.registryAddress(url),
      reregisterMs: 5_000,
    });
    await standins.start();
    stops.push(() => standins.stop());

    const servers = admin.resource<Server>(ServerResource);
    return {
      admin,
      webhook,
      get manager() {
        return manager;
      },
      standins,
      machines,
      controllers,
      async killManager() {
        const { pid, exited } = manager.process;
        process.kill(pid, 'SIGKILL');
        await withTimeout(exited, 15_000, `metal-operator's manager (pid ${pid}) still there after kill -9`);
      },
      async startManager() {
        manager = await launch();
        return manager;
      },
      async kill(name) {
        const bin = controllers[name];
        if (!bin) throw new Error(`${name} is not part of this world`);
        bin.proc.kill('SIGKILL');
        await withTimeout(bin.exited, 15_000, `${name} still there after kill -9`);
      },
      async start(name) {
        const bin = spawnController(name);
        await started(name, bin);
        return bin;
      },
      servers,
      claims: admin.resource<ServerClaim>(ServerClaimResource),
      maintenances: admin.resource<ServerMaintenance>(ServerMaintenanceResource),
      waitAvailable: (timeoutMs = 120_000) => {
        let last = '';
        return waitFor(
          'every machine discovered (Server Available)',
          async () => {
            const list = (await servers.list()).items;
            const states = machines.map((m) => {
              const s = list.find((x) => x.metadata.name === m.server)?.status;
              return `${s?.state ?? '-'}/${s?.powerState ?? '-'}`;
            });
            last = states.join(',');
            return states.every((s) => s === 'Available/Off') ? list : undefined;
          },
          { timeoutMs, intervalMs: 500 },
        ).catch((e: unknown) => {
          throw new Error(
            `${(e as Error).message}; states: ${last}; stand-in errors: ${standins.errors.slice(-5).join(' | ')}; ` +
              `manager: ${manager.process.lines.slice(-8).join('\n')}`,
          );
        });
      },
      stop: stopAll,
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}
