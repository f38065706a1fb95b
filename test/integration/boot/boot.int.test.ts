// The boot controller as a process from the image's files, as its Deployment starts it (its own
// ServiceAccount from manifests/boot-controller/rbac.yaml), against the real control plane and the BMC simulator: boots by virtual media and UEFI HTTP reach
// Running and restore; a BMC-initiated reboot mid-maintenance comes back into the image (upstream
// #938); a host that never comes back fails visibly within the phase timeout with nothing left
// half-changed; deletion mid-phase restores; the maintenance gate holds; credentials never leak.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminClient, freshNamespace, waitFor } from '../../../e2e/harness/env.js';
import { spawnShipped } from '../../../e2e/harness/deployed.js';
import { SETUP_TIMEOUT_MS, prepareDist } from '../../../e2e/harness/dist.js';
import { kubeconfigForBinary, type RunningBinary } from '../../../e2e/harness/processes.js';
import { startBmcSimulator, type BmcSimulator } from '../../../e2e/sim/bmc/server.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import { KubeApiError } from '../../../lib/kube/errors.js';
import { Core, resourceOf } from '../../../lib/kube/resources.js';
import { defaultPolicyData, startWebhook } from '../../../e2e/harness/webhook.js';
import { POLICY_CONFIGMAP } from '../../../policies/schema.js';
import {
  ServerBootConfigurationKind,
  type ServerBootConfiguration,
} from '../../../api/metal/v1alpha1/serverbootconfiguration.js';
import type { KubeObject } from '../../../api/schema/meta.js';
import {
  boots,
  condition,
  createBoot,
  eventsOf,
  inPhase,
  maintenance,
  setMaintenanceState,
  simServer,
  waitForBoot,
} from './fixtures.js';
import { localTargetOnly } from '../../../e2e/harness/target.js';

localTargetOnly(
  'test/integration/boot/boot.int.test.ts',
  "it starts the boot controller with flags of its own (the BMC simulator's CA, sub-second poll intervals, a 1.5 s Redfish timeout); the installed Deployment runs with its shipped args",
);

const ISO = 'https://images.example.test/maintenance-os.iso';

let admin: KubeClient;
let sim: BmcSimulator;
let controller: RunningBinary;
let ns: string;

beforeAll(async () => {
  await prepareDist();
  admin = await adminClient();
  sim = await startBmcSimulator({
    count: 14,
    // BMC 3 is a Lenovo: Continuous refused, so pinning runs on a re-armed Once override.
    profile: (i) => (i === 3 ? 'lenovo' : 'generic'),
    timing: { powerOnMs: 400, restartMs: 800, forceOffMs: 100, gracefulShutdownMs: 300 },
  });
  const caFile = join(mkdtempSync(join(tmpdir(), 'boot-ca-')), 'ca.pem');
  writeFileSync(caFile, sim.ca);
  const { kubeconfig } = await kubeconfigForBinary(admin, 'boot-controller');
  // From the image's files with its Deployment's command and args; the flags below come after them.
  controller = spawnShipped('boot-controller', [
    `--kubeconfig=${kubeconfig}`,
    '--ops-host=127.0.0.1',
    '--ops-port=0',
    '--lease-duration=4',
    '--renew-deadline=3',
    '--retry-period=1',
    `--bmc-ca-file=${caFile}`,
    '--redfish-timeout=1.5',
    '--poll-interval=0.15',
    '--pin-poll-interval=0.2',
    '--power-settle=10',
    '--retry-interval=0.5',
  ]);
  await controller.waitForLog((l) => l.msg === 'boot-controller started', 30_000);
  ns = await freshNamespace(admin, 'boot');
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await controller?.stop();
  await sim?.close();
  await admin?.close();
});

describe('boot controller', () => {
  test('virtual media on a claimed server inside its maintenance: Running, then restored when the maintenance ends', async () => {
    const srv = await simServer(admin, sim, 1, { claimed: { namespace: ns, name: 'tenant-claim' } });
    const m = await maintenance(admin, ns, srv.name, 'InMaintenance');
    const b = await createBoot(admin, ns, {
      serverRef: { name: srv.name },
      maintenanceRef: { name: m.metadata.name! },
      method: 'VirtualMedia',
      image: ISO,
    });
    const running = await waitForBoot(admin, b, 'Running', inPhase('Running'));
    expect(running.status).toMatchObject({
      bootCount: 1,
      previousBoot: { overrideEnabled: 'Disabled', overrideTarget: 'None' },
      appliedBoot: { overrideEnabled: 'Continuous', overrideTarget: 'Cd' },
    });
    expect(condition(running, 'Booted')?.status).toBe('True');
    // Status is applied by the controller's own field manager, under its own identity.
    expect(running.metadata.managedFields).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          manager: 'metal-maintenance/boot-controller',
          operation: 'Apply',
          subresource: 'status',
        }),
      ]),
    );
    const bmc = sim.bmc(1);
    expect(bmc.counters.bootLog.at(-1)).toMatchObject({ device: 'Cd', media: ISO, cause: 'reset' });
    expect(bmc.media[0]).toMatchObject({ image: ISO, inserted: true });
    // Pinned and idle: the controller keeps looking at the BMC but writes nothing.
    const settled = await waitForBoot(admin, b, 'settled', (x) => condition(x, 'Pinned')?.reason === 'Armed');
    const polls = bmc.counters.requests;
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await boots(admin).get(b.metadata.name!, ns)).metadata.resourceVersion).toBe(
      settled.metadata.resourceVersion,
    );
    expect(sim.bmc(1).counters.requests).toBeGreaterThan(polls);

    await setMaintenanceState(admin, m, 'Completed');
    const done = await waitForBoot(admin, b, 'Completed', inPhase('Completed'));
    expect(condition(done, 'Restored')?.status).toBe('True');
    expect(bmc.boot).toMatchObject({ enabled: 'Disabled' });
    expect(bmc.media[0]).toMatchObject({ inserted: false });
    const reasons = (await eventsOf(admin, b)).map((e) => e.reason);
    expect(reasons).toEqual(
      expect.arrayContaining([
        'PreparingMedia',
        'SettingOverride',
        'Resetting',
        'WaitingForPower',
        'Running',
        'Restoring',
        'Completed',
      ]),
    );
    // The boot is over: deleting it releases the finalizer without touching the BMC again.
    const patches = bmc.counters.bootPatches;
    await boots(admin).delete(b.metadata.name!, { namespace: ns });
    await waitFor('the deleted boot to go', async () => !(await boots(admin).find(b.metadata.name!, ns)));
    expect(sim.bmc(1).counters.bootPatches).toBe(patches);
  });

  test('UEFI HTTP boot on an unclaimed server: Running with the image URI, restored when its maintenance ends', async () => {
    const uki = 'https://images.example.test/diagnostics.efi';
    const srv = await simServer(admin, sim, 2);
    const m = await maintenance(admin, ns, srv.name, 'InMaintenance');
    const b = await createBoot(admin, ns, {
      serverRef: { name: srv.name },
      maintenanceRef: { name: m.metadata.name! },
      method: 'UefiHttp',
      image: uki,
    });
    const running = await waitForBoot(admin, b, 'Running', inPhase('Running'));
    expect(running.status?.appliedBoot).toMatchObject({
      overrideEnabled: 'Continuous',
      overrideTarget: 'UefiHttp',
      httpBootUri: uki,
    });
    expect(sim.bmc(2).counters.bootLog.at(-1)).toMatchObject({
      device: 'UefiHttp',
      httpBootUri: uki,
      cause: 'reset',
    });
    expect(sim.bmc(2).counters.mediaInserts).toBe(0);
    await setMaintenanceState(admin, m, 'Failed');
    await waitForBoot(admin, b, 'Completed', inPhase('Completed'));
    expect(sim.bmc(2).boot).toMatchObject({ enabled: 'Disabled', httpBootUri: null });
  });

  test('a BMC-initiated reboot mid-maintenance comes back into the image (upstream #938), with Once re-armed and with Continuous', async () => {
    // BMC 3 refuses Continuous: the one-time override is consumed by every boot and re-armed.
    const lenovo = await simServer(admin, sim, 3, { claimed: { namespace: ns, name: 'tenant-claim' } });
    const m = await maintenance(admin, ns, lenovo.name, 'InMaintenance');
    const b = await createBoot(admin, ns, {
      serverRef: { name: lenovo.name },
      maintenanceRef: { name: m.metadata.name! },
      method: 'VirtualMedia',
      image: ISO,
    });
    await waitForBoot(
      admin,
      b,
      'Running, override re-armed',
      (x) => x.status?.phase === 'Running' && (x.status.rearms ?? 0) >= 1,
    );
    const bmc = sim.bmc(3);
    expect(bmc.boot).toMatchObject({ enabled: 'Once', target: 'Cd' });
    for (const round of [2, 3]) {
      // Round 3: a BMC reset dropped the virtual media just before the host reboots.
      if (round === 3) bmc.media[0] = { ...bmc.media[0]!, image: null, inserted: false };
      bmc.bmcInitiatedReboot(); // a firmware update activating
      await waitForBoot(
        admin,
        b,
        `boot ${round} seen and re-armed`,
        (x) => x.status?.bootCount === round && (x.status.rearms ?? 0) >= round,
      );
      await waitFor(
        'the override armed again',
        () => sim.bmc(3).boot.enabled === 'Once' && sim.bmc(3).boot.target === 'Cd',
      );
    }
    const bmcBoots = sim.bmc(3).counters.bootLog.filter((r) => r.cause === 'bmc');
    expect(bmcBoots).toHaveLength(2);
    for (const r of bmcBoots) expect(r).toMatchObject({ device: 'Cd', media: ISO });
    const pinEvents = await eventsOf(admin, b);
    expect(pinEvents.some((e) => e.reason === 'MediaReinserted' && e.type === 'Warning')).toBe(true);
    const rearmed = pinEvents.filter((e) => e.reason === 'Rearmed');
    expect(rearmed.length).toBeGreaterThanOrEqual(1);
    expect(rearmed[0]!.note).toMatch(/consumed the one-time override/);

    // BMC 4 allows Continuous: the override survives the reboot, nothing needs re-arming.
    const generic = await simServer(admin, sim, 4);
    const g = await createBoot(admin, ns, {
      serverRef: { name: generic.name },
      method: 'VirtualMedia',
      image: ISO,
    });
    await waitForBoot(admin, g, 'Running', inPhase('Running'));
    sim.bmc(4).bmcInitiatedReboot();
    await waitFor('the BMC reboot to finish', () =>
      sim.bmc(4).counters.bootLog.some((r) => r.cause === 'bmc'),
    );
    expect(sim.bmc(4).counters.bootLog.find((r) => r.cause === 'bmc')).toMatchObject({
      device: 'Cd',
      media: ISO,
    });
    expect(sim.bmc(4).boot).toMatchObject({ enabled: 'Continuous', target: 'Cd' });

    // Control: the same reboot without the pin boots the production disk, which is #938.
    const unpinned = await simServer(admin, sim, 5);
    const u = await createBoot(admin, ns, {
      serverRef: { name: unpinned.name },
      method: 'VirtualMedia',
      image: ISO,
      pin: false,
    });
    await waitForBoot(admin, u, 'Running', inPhase('Running'));
    sim.bmc(5).bmcInitiatedReboot();
    await waitFor('the BMC reboot to finish', () =>
      sim.bmc(5).counters.bootLog.some((r) => r.cause === 'bmc'),
    );
    expect(sim.bmc(5).counters.bootLog.find((r) => r.cause === 'bmc')).toMatchObject({ device: 'Hdd' });

    // The maintenance ends: the pinned boot gives the previous settings back.
    await setMaintenanceState(admin, m, 'Completed');
    await waitForBoot(admin, b, 'Completed', inPhase('Completed'));
    expect(sim.bmc(3).boot).toMatchObject({ enabled: 'Disabled' });
    expect(sim.bmc(3).media[0]).toMatchObject({ inserted: false });
    await Promise.all([g, u].map((x) => boots(admin).delete(x.metadata.name!, { namespace: ns })));
    await waitFor(
      'unmaintained boots restored and gone',
      async () =>
        !(await boots(admin).find(g.metadata.name!, ns)) && !(await boots(admin).find(u.metadata.name!, ns)),
    );
    expect(sim.bmc(4).boot).toMatchObject({ enabled: 'Disabled' });
    expect(sim.bmc(4).media[0]).toMatchObject({ inserted: false });
  }, 60_000);

  test('a host that never comes back fails visibly within the phase timeout, with the override and media restored', async () => {
    const srv = await simServer(admin, sim, 6);
    sim.bmc(6).hostStuck = true;
    const b = await createBoot(admin, ns, {
      serverRef: { name: srv.name },
      method: 'VirtualMedia',
      image: ISO,
      phaseTimeout: '3s',
    });
    const waiting = await waitForBoot(admin, b, 'WaitingForPower', inPhase('WaitingForPower'));
    const waitingSeen = Date.now();
    const failed = await waitForBoot(admin, b, 'Failed', inPhase('Failed'), 10_000);
    // Failed when the 3 s are up: not earlier, and no later than one poll plus reconcile time.
    const took = Date.parse(failed.status!.phaseSince!) - Date.parse(waiting.status!.phaseSince!);
    expect(took).toBeGreaterThanOrEqual(3_000);
    expect(took).toBeLessThan(4_000);
    expect(Date.now() - waitingSeen).toBeLessThan(4_500);
    expect(failed.status?.failedPhase).toBe('WaitingForPower');
    expect(condition(failed, 'Failed')).toMatchObject({ status: 'True', reason: 'PhaseTimeout' });
    expect(condition(failed, 'Failed')?.message).toMatch(
      /^WaitingForPower: did not finish within 3s \(last: waiting for the host to come back on \(PowerState (Off|PoweringOn|PoweringOff)\)\)$/,
    );
    const restored = await waitForBoot(
      admin,
      b,
      'restored after the failure',
      (x) => condition(x, 'Restored')?.status === 'True',
    );
    expect(restored.status?.notRestored).toBeUndefined();
    expect(sim.bmc(6).boot).toMatchObject({ enabled: 'Disabled', target: 'None' });
    expect(sim.bmc(6).media[0]).toMatchObject({ inserted: false });
    expect((await eventsOf(admin, b)).some((e) => e.type === 'Warning' && e.reason === 'Failed')).toBe(true);
  });

  test('a BMC that stops answering: Failed in time, says precisely what it could not undo, and undoes it once the BMC is back', async () => {
    const srv = await simServer(admin, sim, 7);
    sim.bmc(7).hostStuck = true;
    const b = await createBoot(admin, ns, {
      serverRef: { name: srv.name },
      method: 'VirtualMedia',
      image: ISO,
      phaseTimeout: '3s',
    });
    await waitForBoot(admin, b, 'WaitingForPower', inPhase('WaitingForPower'));
    sim.bmc(7).faults.add({ kind: 'reset' }); // every request: connection dropped
    const failed = await waitForBoot(
      admin,
      b,
      'Failed, undo pending',
      (x) => x.status?.phase === 'Failed' && condition(x, 'Restored')?.reason === 'BMCUnavailable',
      10_000,
    );
    expect(failed.status?.notRestored).toEqual([
      'boot override not confirmed restored to no override (BMC: METAL_ERR_REDFISH_CONNECTION)',
      `virtual media ${ISO} not confirmed ejected (BMC: METAL_ERR_REDFISH_CONNECTION)`,
    ]);
    expect(sim.bmc(7).boot).toMatchObject({ enabled: 'Continuous', target: 'Cd' });
    sim.bmc(7).faults.clear();
    sim.bmc(7).hostStuck = false;
    const restored = await waitForBoot(
      admin,
      b,
      'restored',
      (x) => condition(x, 'Restored')?.status === 'True',
    );
    expect(restored.status?.phase).toBe('Failed');
    expect(sim.bmc(7).boot).toMatchObject({ enabled: 'Disabled' });
    expect(sim.bmc(7).media[0]).toMatchObject({ inserted: false });
  });

  test('deleting a ServerBoot mid-phase restores the previous settings before it goes', async () => {
    const srv = await simServer(admin, sim, 8);
    const bmc = sim.bmc(8);
    bmc.media[0] = { ...bmc.media[0]!, image: 'https://other.example.test/previous.iso', inserted: true };
    bmc.hostStuck = true;
    const b = await createBoot(admin, ns, {
      serverRef: { name: srv.name },
      method: 'VirtualMedia',
      image: ISO,
      phaseTimeout: '60s',
    });
    const waiting = await waitForBoot(admin, b, 'WaitingForPower', inPhase('WaitingForPower'));
    expect(waiting.status?.previousBoot?.mediaImage).toBe('https://other.example.test/previous.iso');
    expect(waiting.metadata.finalizers).toContain('maintenance.metal.ironcore.dev/serverboot-restore');
    expect(sim.bmc(8).media[0]).toMatchObject({ image: ISO, inserted: true });
    await boots(admin).delete(b.metadata.name!, { namespace: ns });
    await waitFor('the deleted boot to go', async () => !(await boots(admin).find(b.metadata.name!, ns)), {
      timeoutMs: 15_000,
    });
    expect(sim.bmc(8).boot).toMatchObject({ enabled: 'Disabled' });
    // The image that was in the CD before the boot is back.
    expect(sim.bmc(8).media[0]).toMatchObject({
      image: 'https://other.example.test/previous.iso',
      inserted: true,
    });
    const reasons = (await eventsOf(admin, b)).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['Restoring', 'FinalizerReleased']));
    bmc.hostStuck = false;
  });

  test('a claimed server without an InMaintenance maintenance holds without touching the BMC, and starts when it is', async () => {
    const srv = await simServer(admin, sim, 9, { claimed: { namespace: ns, name: 'tenant-claim' } });
    const m = await maintenance(admin, ns, srv.name, 'Approved');
    const noRef = await createBoot(admin, ns, {
      serverRef: { name: srv.name },
      method: 'VirtualMedia',
      image: ISO,
    });
    const b = await createBoot(admin, ns, {
      serverRef: { name: srv.name },
      maintenanceRef: { name: m.metadata.name! },
      method: 'VirtualMedia',
      image: ISO,
    });
    const held = await waitForBoot(
      admin,
      b,
      'held',
      (x) => condition(x, 'Admitted')?.reason === 'WaitingForMaintenance',
    );
    expect(held.status?.phase).toBe('Pending');
    const heldNoRef = await waitForBoot(
      admin,
      noRef,
      'held',
      (x) => condition(x, 'Admitted')?.reason === 'ClaimedWithoutMaintenance',
    );
    expect(condition(heldNoRef, 'Admitted')?.message).toMatch(/is claimed by .*tenant-claim/);
    await new Promise((r) => setTimeout(r, 500));
    expect(sim.bmc(9).counters.requests).toBe(0);
    expect((await eventsOf(admin, b)).map((e) => e.reason)).toEqual(['Held']);
    await setMaintenanceState(admin, m, 'InMaintenance');
    await waitForBoot(admin, b, 'Running', inPhase('Running'));
    expect((await boots(admin).get(noRef.metadata.name!, ns)).status?.phase).toBe('Pending');
    await Promise.all([b, noRef].map((x) => boots(admin).delete(x.metadata.name!, { namespace: ns })));
  });

  test('credentials reach no log line, Event or condition, even when the BMC echoes them back', async () => {
    const srv = await simServer(admin, sim, 10);
    // The session login answers 500 with the request (user name and password) echoed in the body.
    sim.bmc(10).faults.add({
      kind: 'status',
      status: 500,
      echo: true,
      method: 'POST',
      path: '/SessionService/Sessions',
      times: 4,
    });
    const b = await createBoot(admin, ns, {
      serverRef: { name: srv.name },
      method: 'VirtualMedia',
      image: ISO,
    });
    const refused = await waitForBoot(admin, b, 'the echoed login error', (x) =>
      /redacted/.test(condition(x, 'BMCReady')?.message ?? ''),
    );
    expect(condition(refused, 'BMCReady')).toMatchObject({ status: 'False', reason: 'Unreachable' });
    expect(condition(refused, 'BMCReady')?.message).toMatch(
      /METAL_ERR_REDFISH_HTTP: POST .*Sessions answered HTTP 500/,
    );
    await waitForBoot(admin, b, 'Running once the BMC behaves', inPhase('Running'));
    const { username, password } = sim.credentials;
    const forms = [
      password,
      Buffer.from(password).toString('base64'),
      Buffer.from(`${username}:${password}`).toString('base64'),
    ];
    const everything = JSON.stringify({
      logs: controller.logs,
      events: (await admin.resource(Core.Event).list({ namespace: ns })).items,
      boots: (await boots(admin).list({ namespace: ns })).items.map((x) => x.status),
      refused: refused.status,
    });
    for (const form of forms) expect(everything).not.toContain(form);
    // The echo did happen, and was scrubbed before it reached the condition.
    expect(condition(refused, 'BMCReady')?.message).toContain('"Password":"[redacted]"');
  });

  test('metrics: boots by phase and method, results, phase durations and Redfish errors by code', async () => {
    const line = await controller.waitForLog(
      (l) => typeof l.port === 'number' && String(l.msg).startsWith('ops server'),
    );
    const text = await (await fetch(`http://127.0.0.1:${String(line.port)}/metrics`)).text();
    const value = (re: RegExp) => Number(re.exec(text)?.[1] ?? NaN);
    expect(
      value(/metal_serverboot_results_total\{[^}]*method="VirtualMedia"[^}]*result="Completed"[^}]*\} (\d+)/),
    ).toBeGreaterThanOrEqual(2);
    expect(
      value(/metal_serverboot_results_total\{[^}]*method="VirtualMedia"[^}]*result="Failed"[^}]*\} (\d+)/),
    ).toBeGreaterThanOrEqual(2);
    expect(
      value(/metal_serverboot_phase\{[^}]*phase="Running"[^}]*method="VirtualMedia"[^}]*\} (\d+)/),
    ).toBeGreaterThanOrEqual(1);
    expect(
      value(
        /metal_serverboot_phase_duration_seconds_count\{[^}]*phase="WaitingForPower"[^}]*method="VirtualMedia"[^}]*\} (\d+)/,
      ),
    ).toBeGreaterThanOrEqual(3);
    expect(
      value(/metal_serverboot_redfish_errors_total\{[^}]*code="METAL_ERR_REDFISH_CONNECTION"[^}]*\} (\d+)/),
    ).toBeGreaterThanOrEqual(1);
    expect(
      value(/metal_serverboot_rearms_total\{[^}]*method="VirtualMedia"[^}]*\} (\d+)/),
    ).toBeGreaterThanOrEqual(2);
  });

  test('PXE through a ServerBootConfiguration: created and owned, Ready from boot-operator, PXE once, removed on delete', async () => {
    const srv = await simServer(admin, sim, 12);
    const image = 'ghcr.io/ironcore-dev/maintenance-os:1.0';
    const b = await createBoot(admin, ns, { serverRef: { name: srv.name }, method: 'Pxe', image });
    const sbcs = admin.resource<ServerBootConfiguration>(resourceOf(ServerBootConfigurationKind));
    const sbc = await waitFor('the ServerBootConfiguration', () => sbcs.find(b.metadata.name!, ns));
    expect(sbc.spec).toEqual({ serverRef: { name: srv.name }, image });
    expect(sbc.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        kind: 'ServerBoot',
        name: b.metadata.name,
        controller: true,
        blockOwnerDeletion: true,
      }),
    ]);
    const waiting = await waitForBoot(
      admin,
      b,
      'waiting for Ready',
      (x) => condition(x, 'MediaReady')?.reason === 'WaitingForBootConfiguration',
    );
    expect(waiting.status?.phase).toBe('PreparingMedia');
    expect(sim.bmc(12).counters.bootPatches).toBe(0);
    // boot-operator's part: the image is served.
    await sbcs.replaceStatus({ ...sbc, status: { state: 'Ready' } });
    await waitForBoot(admin, b, 'Running', inPhase('Running'));
    expect(sim.bmc(12).counters.bootLog.at(-1)).toMatchObject({ device: 'Pxe', cause: 'reset' });
    await boots(admin).delete(b.metadata.name!, { namespace: ns });
    await waitFor(
      'boot and configuration gone',
      async () =>
        !(await boots(admin).find(b.metadata.name!, ns)) && !(await sbcs.find(b.metadata.name!, ns)),
    );
    expect(sim.bmc(12).boot).toMatchObject({ enabled: 'Disabled' });
  });

  test('without spec.phaseTimeout the policy ConfigMap timeouts.bootPhase applies', async () => {
    const cms = admin.resource<KubeObject & { data?: Record<string, string> }>(Core.ConfigMap);
    const data = defaultPolicyData();
    const key = POLICY_CONFIGMAP.key;
    expect(data[key]).toContain('bootPhase: 10m');
    const write = async (text: string) => {
      const current = await cms.find(POLICY_CONFIGMAP.name, POLICY_CONFIGMAP.namespace);
      const body = {
        metadata: { name: POLICY_CONFIGMAP.name, namespace: POLICY_CONFIGMAP.namespace },
        data: { ...data, [key]: text },
      };
      if (current)
        await cms.replace({
          ...body,
          metadata: { ...body.metadata, resourceVersion: current.metadata.resourceVersion },
        });
      else await cms.create(body);
    };
    await write(data[key]!.replace('bootPhase: 10m', 'bootPhase: 2s'));
    try {
      await new Promise((r) => setTimeout(r, 500)); // the controller's informer picks it up
      const srv = await simServer(admin, sim, 13);
      sim.bmc(13).hostStuck = true;
      const b = await createBoot(admin, ns, {
        serverRef: { name: srv.name },
        method: 'UefiHttp',
        image: 'https://images.example.test/x.efi',
      });
      const failed = await waitForBoot(admin, b, 'Failed', inPhase('Failed'), 10_000);
      expect(condition(failed, 'Failed')?.message).toMatch(/^WaitingForPower: did not finish within 2s/);
    } finally {
      await write(data[key]!);
    }
  });

  test('with the admission webhook running: a boot on a claimed server without its maintenance is denied, with it admitted and run', async () => {
    const srv = await simServer(admin, sim, 11, { claimed: { namespace: ns, name: 'tenant-claim' } });
    const m = await maintenance(admin, ns, srv.name, 'InMaintenance');
    const webhook = await startWebhook(admin, { replicas: 1, fromDist: true });
    try {
      const denied = await createBoot(admin, ns, {
        serverRef: { name: srv.name },
        method: 'VirtualMedia',
        image: ISO,
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(denied).toBeInstanceOf(KubeApiError);
      expect((denied as KubeApiError).statusCode).toBe(403);
      expect((denied as KubeApiError).status.message).toContain('METAL_ERR_BOOT_NEEDS_MAINTENANCE');
      const b = await createBoot(admin, ns, {
        serverRef: { name: srv.name },
        maintenanceRef: { name: m.metadata.name! },
        method: 'VirtualMedia',
        image: ISO,
      });
      await waitForBoot(admin, b, 'Running', inPhase('Running'));
      expect(sim.bmc(11).counters.bootLog.at(-1)).toMatchObject({ device: 'Cd', media: ISO });
    } finally {
      await webhook.stop();
    }
  }, 90_000);
});
