// The firmware suite's world: the lifecycle stack (real webhook, maintenance/approval/budget
// controllers as processes, the fleet simulator) plus the BMC simulator and the firmware
// controller as its own process under its own ServiceAccount, from the run's image files with its
// Deployment's command, args and env (e2e/harness/deployed.ts). Servers of a case point at
// simulated BMCs (several Systems behind one BMC where asked).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import type { KubeObject } from '../../../api/schema/meta.js';
import { REDFISH_PATH_PREFIX_ANNOTATION } from '../../../controllers/shared/bmc-access.js';
import { SYSTEM_NAMESPACE } from '../../../contract/names.js';
import { waitFor, uniqueName } from '../../../e2e/harness/env.js';
import { kubeconfigForBinary, type RunningBinary } from '../../../e2e/harness/processes.js';
import { spawnShipped } from '../../../e2e/harness/deployed.js';
import type { SimTiming } from '../../../e2e/sim/bmc/model.js';
import type { SimProfileName } from '../../../e2e/sim/bmc/profiles.js';
import { startBmcSimulator, type BmcSimulator, type SimServer } from '../../../e2e/sim/bmc/server.js';
import type { ResourceClient } from '../../../lib/kube/client.js';
import {
  BIOSSettingsResource,
  BIOSVersionResource,
  BIOSVersionSetResource,
  BMCResource,
  BMCSecretResource,
  BMCSettingsResource,
  BMCVersionResource,
  BMCVersionSetResource,
  ServerMaintenanceResource,
} from '../../../lib/kube/kinds.js';
import { CASE_LABEL, startLifecycle, type Lifecycle } from '../lifecycle/harness.js';
import { SHORT_LEASE_ARGS } from '../../../e2e/harness/dist.js';

export type Firmware = KubeObject & {
  spec: Record<string, unknown>;
  status?: {
    state?: string;
    conditions?: { type: string; status: string; reason: string; message: string }[];
    [k: string]: unknown;
  };
};

export interface FirmwareSuite {
  lc: Lifecycle;
  sim: BmcSimulator;
  controller: RunningBinary;
  biosVersions: ResourceClient<Firmware>;
  biosSettings: ResourceClient<Firmware>;
  bmcVersions: ResourceClient<Firmware>;
  bmcSettings: ResourceClient<Firmware>;
  biosVersionSets: ResourceClient<Firmware>;
  bmcVersionSets: ResourceClient<Firmware>;
  maintenances: ResourceClient<ServerMaintenance>;
  /**
   * Servers of a new case, each behind its simulated BMC and System; BMC objects named
   * `<case>-bmc<i>`; `caseLabel` selects exactly these servers and BMCs (a Set's selector).
   */
  servers(
    caseName: string,
    bmcIndexes: number[],
    opts?: { claims?: 'consumer' | 'none' },
  ): Promise<{ names: string[]; bmcs: string[]; sim: SimServer[]; caseLabel: Record<string, string> }>;
  /**
   * kill -9 of the leading replica once another replica is synced; a standby takes over, a new
   * standby is started behind it.
   */
  killLeader(): Promise<void>;
  stop(): Promise<void>;
}

export async function startFirmwareSuite(opts: {
  bmcs: number;
  systems?: (i: number) => number;
  /** Replicas of the controller: one leads, the rest stand by. Default 2. */
  replicas?: number;
  /** Simulator timing over the suite's defaults (a slower flash keeps a rollout going longer). */
  timing?: Partial<SimTiming>;
  /** The vendor profile of BMC i (default generic). */
  profile?: (i: number) => SimProfileName;
}): Promise<FirmwareSuite> {
  const lc = await startLifecycle({});
  const sim = await startBmcSimulator({
    count: opts.bmcs,
    systems: opts.systems ?? 1,
    ...(opts.profile ? { profile: opts.profile } : {}),
    timing: { updateMs: 600, restartMs: 300, powerOnMs: 200, managerResetOutageMs: 800, ...opts.timing },
  });
  const caFile = join(mkdtempSync(join(tmpdir(), 'fw-ca-')), 'ca.pem');
  writeFileSync(caFile, sim.ca);
  const { kubeconfig } = await kubeconfigForBinary(lc.admin, 'firmware-controller');
  const spawn = () =>
    spawnShipped('firmware-controller', [
      `--kubeconfig=${kubeconfig}`,
      '--ops-host=127.0.0.1',
      '--ops-port=0',
      ...SHORT_LEASE_ARGS,
      `--bmc-ca-file=${caFile}`,
      '--redfish-timeout=2',
      '--poll-interval=0.3',
    ]);
  // Replicas: the first leads, the others stand by (as the Deployment runs it), so a kill -9 costs a
  // Lease takeover rather than a process start.
  const identity = (b: RunningBinary) =>
    b.logs.find((l) => l.msg === 'firmware-controller started')?.identity;
  const leads = (b: RunningBinary) => {
    const seen = b.logs.filter((l) => l.msg === 'leader observed');
    return seen.length > 0 && identity(b) !== undefined && seen[seen.length - 1]!.leader === identity(b);
  };
  // Synced: its caches are filled and it campaigns for the Lease, so it can take over at once.
  const synced = (b: RunningBinary) => b.logs.some((l) => l.msg === 'caches synced');
  const replicas = Array.from({ length: opts.replicas ?? 2 }, () => spawn());
  await Promise.all(
    replicas.map((r) => r.waitForLog((l) => l.msg === 'firmware-controller started', 90_000)),
  );
  await waitFor('a firmware-controller leads', () => replicas.some(leads), { timeoutMs: 30_000 });
  let controller = replicas.find(leads)!;
  const admin = lc.admin;
  const port = Number(new URL(sim.url).port);
  const suite: FirmwareSuite = {
    lc,
    sim,
    get controller() {
      return controller;
    },
    biosVersions: admin.resource<Firmware>(BIOSVersionResource),
    biosSettings: admin.resource<Firmware>(BIOSSettingsResource),
    bmcVersions: admin.resource<Firmware>(BMCVersionResource),
    bmcSettings: admin.resource<Firmware>(BMCSettingsResource),
    biosVersionSets: admin.resource<Firmware>(BIOSVersionSetResource),
    bmcVersionSets: admin.resource<Firmware>(BMCVersionSetResource),
    maintenances: admin.resource<ServerMaintenance>(ServerMaintenanceResource),
    async servers(caseName, bmcIndexes, opts) {
      const all = sim.servers();
      const picked = all.filter((s) => bmcIndexes.includes(s.bmc));
      const fleet = await lc.fleet(caseName, { servers: picked.length, claims: opts?.claims ?? 'none' });
      const id = uniqueName(caseName);
      const bmcNames = new Map<number, string>();
      for (const i of bmcIndexes) {
        const name = `${id}-bmc${i}`;
        bmcNames.set(i, name);
        await admin.resource(BMCSecretResource).create({
          metadata: { name },
          data: {
            username: Buffer.from(sim.credentials.username).toString('base64'),
            password: Buffer.from(sim.credentials.password).toString('base64'),
          },
        } as KubeObject);
        await admin.resource(BMCResource).create({
          // The case label on the BMC too: a BMCVersionSet's bmcSelector selects exactly these.
          metadata: {
            name,
            labels: { [CASE_LABEL]: fleet.name },
            annotations: { [REDFISH_PATH_PREFIX_ANNOTATION]: `/bmc/${i}` },
          },
          spec: {
            access: { ip: '127.0.0.1' },
            protocol: { name: 'Redfish', port, scheme: 'https' },
            bmcSecretRef: { name },
          },
        } as KubeObject);
      }
      await Promise.all(
        fleet.servers.map((name, k) =>
          lc.servers.patch(name, {
            spec: {
              bmcRef: { name: bmcNames.get(picked[k]!.bmc) },
              systemURI: `/redfish/v1/Systems/${picked[k]!.system}`,
            },
          }),
        ),
      );
      return {
        names: fleet.servers,
        bmcs: bmcIndexes.map((i) => bmcNames.get(i)!),
        sim: picked,
        caseLabel: { [CASE_LABEL]: fleet.name },
      };
    },
    async killLeader() {
      const leader = replicas.find(leads);
      if (!leader) throw new Error('no firmware-controller leads');
      // Never kill the only warm replica: a replacement still starting (tsx, informer lists) is no
      // standby, and a kill then costs a cold start instead of a Lease takeover.
      await waitFor(
        'a synced firmware-controller standby',
        () => replicas.some((r) => r !== leader && synced(r)),
        {
          timeoutMs: 90_000,
          intervalMs: 50,
        },
      );
      leader.proc.kill('SIGKILL');
      await leader.exited;
      replicas.splice(replicas.indexOf(leader), 1);
      replicas.push(spawn());
      // A standby takes the Lease once the dead leader's expires (--lease-duration=3).
      await waitFor('a new firmware-controller leader', () => replicas.some(leads), {
        timeoutMs: 30_000,
        intervalMs: 50,
      });
      controller = replicas.find(leads)!;
    },
    async stop() {
      await Promise.all(replicas.map((r) => r.stop('SIGTERM', 15_000)));
      await sim.close();
      await lc.stop();
    },
  };
  return suite;
}

/** Waits until the object's status.state is `state`; returns it. */
export async function waitForState(
  client: ResourceClient<Firmware>,
  name: string,
  state: string,
  timeoutMs = 60_000,
): Promise<Firmware> {
  let last: Firmware | undefined;
  await waitFor(
    `${name} ${state}`,
    async () => {
      last = await client.get(name);
      if (last.status?.state === 'Failed' && state !== 'Failed')
        throw new Error(`${name} Failed: ${JSON.stringify(last.status.conditions)}`);
      return last.status?.state === state;
    },
    { timeoutMs, intervalMs: 200 },
  );
  return last!;
}

export const conditionOf = (o: Firmware | undefined, type: string) =>
  o?.status?.conditions?.find((c) => c.type === type);

/** The maintenances the firmware controller requested for an object (by owner uid). */
export async function maintenancesOf(suite: FirmwareSuite, uid: string): Promise<ServerMaintenance[]> {
  const list = await suite.maintenances.list({
    namespace: SYSTEM_NAMESPACE,
    labelSelector: `firmware.metal.ironcore.dev/owner-uid=${uid}`,
  });
  return list.items;
}
