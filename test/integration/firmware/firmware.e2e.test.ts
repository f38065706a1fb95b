// The firmware controller as a process against the real control plane (webhook, maintenance,
// approval and budget controllers as processes) and the BMC simulator: a BIOS version update and
// BIOS settings applied only inside an admitted maintenance and verified by read-back; a stalled
// update task failing within its timeout with the maintenance released; a BMC serving three
// servers flashed once, only after all three are InMaintenance; BMC settings on a Dell-shaped BMC
// written once and applied by a BMC reset, and one naming an attribute its registry marks read-only
// refused before any maintenance; the simulator's ledger proving
// each flash and each settings write happened once; a BIOSVersionSet over five servers paused,
// capped by maxConcurrent, short-circuited by a failed child, completed, and rolled out again when
// its template changes; a BMCVersionSet over two BMCs, one child each, counters true. The kill -9
// soak is soak.e2e.test.ts.
import type { KubeObject } from '../../../api/schema/meta.js';
import { SYSTEM_NAMESPACE } from '../../../contract/names.js';
import { HOLD_ANNOTATION } from '../../../controllers/firmware/sets/model.js';
import { SETUP_TIMEOUT_MS } from '../../../e2e/harness/dist.js';
import { uniqueName, waitFor } from '../../../e2e/harness/env.js';
import {
  conditionOf,
  maintenancesOf,
  startFirmwareSuite,
  waitForState,
  type Firmware,
  type FirmwareSuite,
} from './harness.js';

let suite: FirmwareSuite;

// BMC 2 has three Systems (a multi-node chassis), BMC 13 two, the others one. BMCs 5–9 serve the
// BIOSVersionSet, 12 and 13 the BMCVersionSet. BMCs 10 and 11 are Dell-shaped: their attributes
// live in DellAttributes, described by a registry.
beforeAll(async () => {
  suite = await startFirmwareSuite({
    bmcs: 14,
    systems: (i) => (i === 2 ? 3 : i === 13 ? 2 : 1),
    profile: (i) => (i >= 10 ? 'dell' : 'generic'),
  });
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await suite?.stop();
});

const ledgerOf = (bmc: number, system?: string) =>
  suite.sim.ledger().filter((l) => l.bmc === bmc && (system === undefined || l.system === system));
/** Each server's BIOS version and flash count in the simulator's ledger, in the order given. */
const biosOf = (servers: readonly { bmc: number; system?: string }[]) =>
  servers.map((x) => {
    const [l] = ledgerOf(x.bmc, x.system);
    return { version: l?.biosVersion, flashes: l?.biosFlashes };
  });

describe('firmware controller', () => {
  test('BIOSVersion: flashed inside its maintenance, verified, maintenance released; exactly one flash', async () => {
    const { names, sim } = await suite.servers('biosv', [0]);
    const name = `${names[0]}-bios`;
    const created = await suite.biosVersions.create({
      metadata: { name },
      spec: {
        serverRef: { name: names[0] },
        version: '2.1.0',
        serverMaintenancePolicy: 'Enforced',
        image: { URI: 'https://images.test/bios/2.1.0' },
      },
    });
    const done = await waitForState(suite.biosVersions, name, 'Completed', 60_000);
    expect(conditionOf(done, 'VersionUpgradeCompleted')?.status).toBe('True');
    expect(done.status?.upgradeTask).toMatchObject({ state: 'Completed' });
    const [ledger] = ledgerOf(0, sim[0]!.system);
    expect(ledger?.biosVersion).toBe('2.1.0');
    expect(ledger?.biosUpdatesStarted).toBe(1);
    expect(ledger?.biosFlashes).toBe(1);
    await waitFor(
      'maintenance released',
      async () => (await maintenancesOf(suite, created.metadata.uid!)).length === 0,
    );
    const spec = (await suite.biosVersions.get(name)).spec as {
      serverMaintenanceRef?: { name: string; namespace: string };
    };
    expect(spec.serverMaintenanceRef?.namespace).toBe(SYSTEM_NAMESPACE);
  });

  test('BIOSVersion already at the target: Completed without a maintenance', async () => {
    const { names } = await suite.servers('biosv-same', [3]);
    const name = `${names[0]}-bios`;
    const created = await suite.biosVersions.create({
      metadata: { name },
      spec: {
        serverRef: { name: names[0] },
        version: '1.0.0',
        image: { URI: 'https://images.test/bios/1.0.0' },
      },
    });
    await waitForState(suite.biosVersions, name, 'Completed', 30_000);
    expect(await maintenancesOf(suite, created.metadata.uid!)).toHaveLength(0);
    expect(ledgerOf(3)[0]?.biosUpdatesStarted).toBe(0);
  });

  test('BIOSSettings: only differing attributes written, reset inside the maintenance, read back', async () => {
    const { names, sim } = await suite.servers('bioss', [1]);
    const name = `${names[0]}-settings`;
    await suite.biosSettings.create({
      metadata: { name },
      spec: {
        serverRef: { name: names[0] },
        version: '1.0.0',
        serverMaintenancePolicy: 'Enforced',
        settingsFlow: [
          { name: 'virt', priority: 10, settings: { SriovGlobalEnable: 'Enabled', BootMode: 'Uefi' } },
          { name: 'numa', priority: 20, settings: { NumaNodes: '4' } },
        ],
      },
    });
    const done = await waitForState(suite.biosSettings, name, 'Applied', 60_000);
    const flow = done.status?.flowState as { name: string; flowState: string; lastAppliedTime?: string }[];
    expect(flow.map((f) => [f.name, f.flowState])).toEqual([
      ['virt', 'Applied'],
      ['numa', 'Applied'],
    ]);
    const [ledger] = ledgerOf(1, sim[0]!.system);
    // One PATCH per item (BootMode already Uefi was not sent), each applied by one reset.
    expect(ledger?.biosSettingsWrites).toBe(2);
    expect(ledger?.biosSettingsApplied).toBe(2);
  });

  test('BIOSSettings naming a read-only attribute: refused up front, naming it, no maintenance', async () => {
    const { names } = await suite.servers('bioss-ro', [4]);
    const name = `${names[0]}-settings`;
    const created = await suite.biosSettings.create({
      metadata: { name },
      spec: {
        serverRef: { name: names[0] },
        version: '1.0.0',
        settingsFlow: [{ name: 'a', priority: 1, settings: { NoSuchAttribute: 'x' } }],
      },
    });
    const failed = await waitForState(suite.biosSettings, name, 'Failed', 30_000);
    expect(conditionOf(failed, 'Failed')).toMatchObject({ reason: 'AttributeRefused' });
    expect(conditionOf(failed, 'Failed')?.message).toContain('NoSuchAttribute');
    expect(await maintenancesOf(suite, created.metadata.uid!)).toHaveLength(0);
  });

  test('BMCSettings on a Dell BMC: written once to DellAttributes, applied by a BMC reset, read back', async () => {
    const { bmcs } = await suite.servers('bmcs', [10]);
    const name = `${bmcs[0]}-settings`;
    const created = await suite.bmcSettings.create({
      metadata: { name },
      spec: {
        bmcRef: { name: bmcs[0] },
        version: '5.10.0',
        serverMaintenancePolicy: 'Enforced',
        settingsFlow: [
          {
            name: 'logging',
            priority: 1,
            settings: { 'Syslog.1.Enable': 'Enabled', 'NTP.1.Server': 'pool.ntp.org' },
          },
        ],
      },
    });
    const done = await waitForState(suite.bmcSettings, name, 'Applied', 60_000);
    const tags = done.status?.appliedETags as Record<string, { uri?: string }>;
    expect(Object.keys(tags).sort()).toEqual(['logging/NTP.1.Server', 'logging/Syslog.1.Enable']);
    expect(tags['logging/Syslog.1.Enable']?.uri).toContain('/Oem/Dell/DellAttributes/');
    // NTP.1.Server already had its value: one PATCH, of Syslog.1.Enable only, applied by the reset.
    const bmc = suite.sim.bmc(10);
    expect(bmc.ledger.bmcSettingsWrites).toBe(1);
    expect(bmc.counters.managerApplied).toEqual([{ 'Syslog.1.Enable': 'Enabled' }]);
    await waitFor(
      'maintenance released',
      async () => (await maintenancesOf(suite, created.metadata.uid!)).length === 0,
    );
  });

  test('BMCSettings naming an attribute the registry marks read-only: refused up front, no maintenance', async () => {
    const { bmcs } = await suite.servers('bmcs-ro', [11]);
    const name = `${bmcs[0]}-settings`;
    const created = await suite.bmcSettings.create({
      metadata: { name },
      spec: {
        bmcRef: { name: bmcs[0] },
        version: '5.10.0',
        settingsFlow: [{ name: 'a', priority: 1, settings: { 'Info.1.Product': 'renamed' } }],
      },
    });
    const failed = await waitForState(suite.bmcSettings, name, 'Failed', 30_000);
    expect(conditionOf(failed, 'Failed')).toMatchObject({ reason: 'AttributeRefused' });
    expect(conditionOf(failed, 'Failed')?.message).toContain('Info.1.Product (read-only');
    expect(await maintenancesOf(suite, created.metadata.uid!)).toHaveLength(0);
    expect(suite.sim.bmc(11).ledger.bmcSettingsWrites).toBe(0);
  });

  test('a stalled update task: Failed within the task timeout + 30 s, naming the phase, maintenance released', async () => {
    const { names } = await suite.servers('stall', [3]);
    const name = `${names[0]}-bios`;
    const created = await suite.biosVersions.create({
      metadata: { name },
      spec: {
        serverRef: { name: names[0] },
        version: '3.0.0',
        serverMaintenancePolicy: 'Enforced',
        image: { URI: 'https://images.test/bios/stall/3.0.0' },
      },
    });
    await waitFor(
      'flashing',
      async () => conditionOf(await suite.biosVersions.get(name), 'Progressing')?.reason === 'Flashing',
      { timeoutMs: 30_000 },
    );
    const flashingSince = Date.now();
    // Policy firmware.timeouts.task is 8s in this suite.
    const failed = await waitForState(suite.biosVersions, name, 'Failed', 8_000 + 30_000);
    expect(Date.now() - flashingSince).toBeLessThan(8_000 + 30_000);
    const cond = conditionOf(failed, 'Failed');
    expect(cond?.reason).toBe('PhaseTimeout');
    expect(cond?.message).toMatch(/^Flashing: no result within 8s; last BMC answer: task .*Running/);
    await waitFor(
      'maintenance released',
      async () => (await maintenancesOf(suite, created.metadata.uid!)).length === 0,
      {
        timeoutMs: 15_000,
      },
    );
    const events = await suite.lc.admin
      .resource<{ reason?: string; regarding?: { name?: string } } & KubeObject>({
        group: 'events.k8s.io',
        version: 'v1',
        plural: 'events',
        kind: 'Event',
        namespaced: true,
      })
      .list({});
    expect(events.items.some((e) => e.regarding?.name === name && e.reason === 'PhaseTimeout')).toBe(true);
  });

  test('BMCVersion behind a BMC serving three servers: all three InMaintenance first, one flash', async () => {
    const { names, bmcs } = await suite.servers('bmcv', [2]);
    expect(names).toHaveLength(3);
    const name = `${bmcs[0]}-fw`;
    const seen = new Map<string, string>();
    const created = await suite.bmcVersions.create({
      metadata: { name },
      spec: {
        bmcRef: { name: bmcs[0] },
        version: '6.0.0',
        serverMaintenancePolicy: 'Enforced',
        image: { URI: 'https://images.test/bmc/6.0.0' },
      },
    });
    // Record every state of its maintenances while it runs, and when the BMC's update started.
    let updateStartedWith: number | undefined;
    const done = await waitFor(
      'BMCVersion Completed',
      async () => {
        for (const m of await maintenancesOf(suite, created.metadata.uid!))
          seen.set(m.spec.serverRef.name, m.status?.state ?? 'Pending');
        const ledger = ledgerOf(2);
        if (updateStartedWith === undefined && ledger[0]?.bmcLedger.bmcUpdatesStarted)
          updateStartedWith = [...seen.values()].filter((s) => s === 'InMaintenance').length;
        const o = await suite.bmcVersions.get(name);
        if (o.status?.state === 'Failed') throw new Error(JSON.stringify(o.status.conditions));
        return o.status?.state === 'Completed' ? o : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 100 },
    );
    expect(conditionOf(done, 'VersionUpgradeCompleted')?.status).toBe('True');
    expect(seen.size).toBe(3);
    const ledger = ledgerOf(2);
    expect(ledger.map((l) => l.bmcVersion)).toEqual(['6.0.0', '6.0.0', '6.0.0']);
    expect(ledger[0]?.bmcLedger).toMatchObject({ bmcUpdatesStarted: 1, bmcFlashes: 1 });
    expect(updateStartedWith).toBe(3);
    await waitFor(
      'maintenances released',
      async () => (await maintenancesOf(suite, created.metadata.uid!)).length === 0,
    );
  });

  test('BIOSVersionSet: paused, at most maxConcurrent at once, short-circuited by a failure, then complete', async () => {
    const { names, sim, caseLabel } = await suite.servers('biosvs', [5, 6, 7, 8, 9]);
    const setName = uniqueName('biosvs');
    const set = await suite.biosVersionSets.create({
      metadata: { name: setName },
      spec: {
        serverSelector: { matchLabels: caseLabel },
        biosVersionTemplate: {
          version: '2.5.0',
          serverMaintenancePolicy: 'Enforced',
          image: { URI: 'https://images.test/bios/2.5.0' },
          retryPolicy: { maxAttempts: 0 },
        },
        paused: true,
        maxConcurrent: 2,
        maxFailures: 0,
      },
    });
    const children = async () =>
      (await suite.biosVersions.list({})).items.filter((c) =>
        c.metadata.ownerReferences?.some((r) => r.uid === set.metadata.uid),
      );
    const held = (c: Firmware) => c.metadata.annotations?.[HOLD_ANNOTATION];
    const updatesStarted = (i: number) => ledgerOf(sim[i]!.bmc, sim[i]!.system)[0]?.biosUpdatesStarted;
    // Samples the children every 100 ms until `until` holds; the peak of InProgress children. On a
    // timeout the message says where each child stands.
    const watch = async (
      what: string,
      until: (cs: Firmware[], s: Firmware) => boolean,
      timeoutMs: number,
    ) => {
      let peak = 0;
      let last: Firmware[] = [];
      try {
        await waitFor(
          what,
          async () => {
            last = await children();
            peak = Math.max(peak, last.filter((c) => c.status?.state === 'InProgress').length);
            return until(last, await suite.biosVersionSets.get(setName));
          },
          { timeoutMs, intervalMs: 100 },
        );
      } catch (e) {
        const where = last.map((c) => {
          const p = conditionOf(c, 'Progressing');
          return `${c.metadata.name}: ${c.status?.state} ${p?.reason}: ${p?.message} hold=${held(c)}`;
        });
        const st = (await suite.biosVersionSets.get(setName)).status;
        where.push(`ledger: ${JSON.stringify(sim.map((x) => ledgerOf(x.bmc, x.system)[0]))}`);
        throw new Error(`${(e as Error).message}\n${where.join('\n')}\nset: ${JSON.stringify(st)}`, {
          cause: e,
        });
      }
      return peak;
    };

    // Paused: one child per server, every one held, no maintenance, nothing flashed.
    await watch(
      'five children, all held Paused',
      (cs, s) =>
        cs.length === 5 &&
        cs.every((c) => held(c) === 'Paused') &&
        conditionOf(s, 'Paused')?.status === 'True',
      30_000,
    );
    await new Promise((r) => setTimeout(r, 2_000));
    for (const c of await children()) {
      expect(c.status?.state ?? 'Pending').toBe('Pending');
      expect(await maintenancesOf(suite, c.metadata.uid!)).toHaveLength(0);
    }
    expect(names.map((_, i) => updatesStarted(i))).toEqual([0, 0, 0, 0, 0]);

    // Resumed with the first server's next update failing: two start (target order), one fails,
    // maxFailures 0 is exceeded and the three not yet started stay held.
    suite.sim.bmc(sim[0]!.bmc).faults.add({ kind: 'taskFail', times: 1 });
    await suite.biosVersionSets.patch(setName, { spec: { paused: false } });
    const peakBefore = await watch(
      'ShortCircuited, nothing in progress',
      (cs, s) =>
        conditionOf(s, 'ShortCircuited')?.status === 'True' &&
        cs.every((c) => c.status?.state !== 'InProgress'),
      60_000,
    );
    expect(peakBefore).toBeLessThanOrEqual(2);
    const afterFailure = await children();
    const failed = afterFailure.filter((c) => c.status?.state === 'Failed');
    expect(failed.map((c) => (c.spec.serverRef as { name: string }).name)).toEqual([names[0]]);
    expect(afterFailure.filter((c) => held(c) === 'ShortCircuited').length).toBeGreaterThanOrEqual(3);
    expect(conditionOf(await suite.biosVersionSets.get(setName), 'ShortCircuited')?.message).toContain(
      '1 of 5 BIOSVersion children Failed',
    );
    for (let i = 2; i < 5; i++) expect(updatesStarted(i)).toBe(0);

    // Tolerating one failure: the rest roll out, two at a time; the failed one is not retried.
    await suite.biosVersionSets.patch(setName, { spec: { maxFailures: 1 } });
    const peakAfter = await watch(
      'four children Completed',
      (cs) => cs.filter((c) => c.status?.state === 'Completed').length === 4,
      90_000,
    );
    expect(peakAfter).toBe(2);
    let s = await suite.biosVersionSets.get(setName);
    expect(conditionOf(s, 'ShortCircuited')?.status).toBe('False');
    expect(conditionOf(s, 'RolloutComplete')?.status).toBe('False');
    expect(updatesStarted(0)).toBe(1);

    // Deleting the failed child is the way on: the Set stamps a new one, which succeeds.
    const oldChild = failed[0]!;
    await suite.biosVersions.delete(oldChild.metadata.name!);
    let seenMeta = '';
    await waitFor(
      'a new child for the first server',
      async () => {
        const c = await suite.biosVersions.find(oldChild.metadata.name!);
        seenMeta = JSON.stringify({ ...c?.metadata, managedFields: undefined });
        return c !== undefined && c.metadata.uid !== oldChild.metadata.uid;
      },
      { timeoutMs: 20_000 },
    ).catch((e: Error) => {
      throw new Error(`${e.message}; last seen ${seenMeta}`, { cause: e });
    });
    await watch('RolloutComplete', (_, x) => conditionOf(x, 'RolloutComplete')?.status === 'True', 60_000);
    s = await suite.biosVersionSets.get(setName);
    expect(s.status).toMatchObject({
      fullyLabeledServers: 5,
      availableBIOSVersion: 5,
      completedBIOSVersion: 5,
      failedBIOSVersion: 0,
      heldChildren: 0,
    });
    expect(biosOf(sim)).toEqual(sim.map(() => ({ version: '2.5.0', flashes: 1 })));
    expect(updatesStarted(0)).toBe(2);
    for (const c of await children()) {
      expect(conditionOf(c, 'VersionUpgradeCompleted')?.status).toBe('True');
      // Released: deleted right after the read-back, gone once the maintenance controller's
      // cleanup finalizer has run.
      await waitFor(
        `${c.metadata.name}'s maintenance gone`,
        async () => (await maintenancesOf(suite, c.metadata.uid!)).length === 0,
      );
    }

    // A changed template goes to every child: each is re-stamped and flashed again, two at a time
    // (re-runs wait for slots like first attempts), inside a new maintenance.
    await suite.biosVersionSets.patch(setName, {
      spec: {
        biosVersionTemplate: {
          version: '2.6.0',
          serverMaintenancePolicy: 'Enforced',
          image: { URI: 'https://images.test/bios/2.6.0' },
          retryPolicy: { maxAttempts: 0 },
        },
      },
    });
    const peakRerun = await watch(
      'every child re-stamped and Completed at 2.6.0',
      (cs, x) =>
        cs.length === 5 &&
        cs.every((c) => c.spec.version === '2.6.0' && c.status?.state === 'Completed') &&
        conditionOf(x, 'RolloutComplete')?.status === 'True',
      120_000,
    );
    expect(peakRerun).toBeLessThanOrEqual(2);
    expect(biosOf(sim)).toEqual(sim.map(() => ({ version: '2.6.0', flashes: 2 })));
    expect((await suite.biosVersionSets.get(setName)).status).toMatchObject({
      completedBIOSVersion: 5,
      heldChildren: 0,
    });
  }, 300_000);

  test('BMCVersionSet over two BMCs (one serving two servers): one child per BMC, one flash each, counters true', async () => {
    const { names, bmcs, caseLabel } = await suite.servers('bmcvs', [12, 13]);
    expect(names).toHaveLength(3);
    const setName = uniqueName('bmcvs');
    const set = await suite.bmcVersionSets.create({
      metadata: { name: setName },
      spec: {
        bmcSelector: { matchLabels: caseLabel },
        bmcVersionTemplate: {
          version: '6.0.0',
          serverMaintenancePolicy: 'Enforced',
          image: { URI: 'https://images.test/bmc/6.0.0' },
        },
      },
    });
    const done = await waitFor(
      'BMCVersionSet RolloutComplete',
      async () => {
        const s = await suite.bmcVersionSets.get(setName);
        return conditionOf(s, 'RolloutComplete')?.status === 'True' ? s : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 200 },
    );
    expect(done.status).toMatchObject({
      fullyLabeledBMCs: 2,
      availableBMCVersion: 2,
      completedBMCVersion: 2,
      pendingBMCVersion: 0,
      inProgressBMCVersion: 0,
      failedBMCVersion: 0,
    });
    const children = (await suite.bmcVersions.list({})).items.filter((c) =>
      c.metadata.ownerReferences?.some((r) => r.uid === set.metadata.uid),
    );
    expect(children.map((c) => (c.spec.bmcRef as { name: string }).name).sort()).toEqual([...bmcs].sort());
    for (const bmc of [12, 13]) {
      expect(ledgerOf(bmc).map((l) => l.bmcVersion)).toEqual(bmc === 13 ? ['6.0.0', '6.0.0'] : ['6.0.0']);
      expect(ledgerOf(bmc)[0]?.bmcLedger).toMatchObject({ bmcUpdatesStarted: 1, bmcFlashes: 1 });
    }
    for (const c of children)
      await waitFor(
        `maintenances of ${c.metadata.name} released`,
        async () => (await maintenancesOf(suite, c.metadata.uid!)).length === 0,
      );
  });
});
