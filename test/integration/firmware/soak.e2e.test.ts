// kill -9 soak of the firmware controller: three replicas (one leads, two stand by, as a
// Deployment with spare replicas runs them); the leader is killed with SIGKILL ten times during a
// rollout of BIOS versions and settings on four servers, each kill only once a standby has synced
// (a kill of the only warm replica would test a cold start, not a takeover). The servers start
// three rounds apart (the last before the last round) and a flash takes 20 s, so the kills fall
// into different phases of different servers, and all ten while the rollout is unfinished (asserted). The simulator's ledger
// must show every flash and every settings write exactly once, and no maintenance or grant may be
// left behind.
import { SETUP_TIMEOUT_MS } from '../../../e2e/harness/dist.js';
import { waitFor } from '../../../e2e/harness/env.js';
import { TEST_POLICY } from '../lifecycle/harness.js';
import {
  conditionOf,
  maintenancesOf,
  startFirmwareSuite,
  waitForState,
  type FirmwareSuite,
} from './harness.js';

let suite: FirmwareSuite;

beforeAll(async () => {
  suite = await startFirmwareSuite({ bmcs: 9, replicas: 3, timing: { updateMs: 20_000 } });
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await suite?.stop();
});

const ledgerOf = (bmc: number, system?: string) =>
  suite.sim.ledger().filter((l) => l.bmc === bmc && (system === undefined || l.system === system));

/** Where each object of the rollout stands, with its maintenances: for a failure message. */
async function whereItStands(names: string[]): Promise<string> {
  const where: string[] = [];
  for (const server of names)
    for (const [c, n] of [
      [suite.biosVersions, `${server}-bios`],
      [suite.biosSettings, `${server}-settings`],
    ] as const) {
      const o = await c.get(n);
      const p = conditionOf(o, 'Progressing');
      const ms = await maintenancesOf(suite, o.metadata.uid!);
      where.push(
        `${n}: ${o.status?.state} ${p?.reason}: ${p?.message}; maintenances ${ms.map((m) => `${m.metadata.name}=${m.status?.state ?? 'Pending'}:${m.status?.message ?? ''}`).join(', ')}`,
      );
    }
  return where.join('\n');
}

describe('firmware controller under kill -9', () => {
  test('kill -9 soak: 10 rounds of killing the controller mid-rollout; every flash and settings write exactly once', async () => {
    // Phase timeouts count the controller's downtime too: long enough for ten restarts (each waits
    // out the dead leader's Lease).
    const long = { admission: '300s', issue: '120s', task: '120s', reboot: '120s', verify: '120s' };
    await suite.lc.setPolicy({ firmware: { ...TEST_POLICY.firmware, timeouts: long } });
    const { names, sim } = await suite.servers('soak', [5, 6, 7, 8]);
    const uids: string[] = [];
    const start = async (i: number) => {
      const server = names[i]!;
      const v = await suite.biosVersions.create({
        metadata: { name: `${server}-bios` },
        spec: {
          serverRef: { name: server },
          version: '4.0.0',
          serverMaintenancePolicy: 'Enforced',
          image: { URI: 'https://images.test/bios/4.0.0' },
        },
      });
      const st = await suite.biosSettings.create({
        metadata: { name: `${server}-settings` },
        spec: {
          serverRef: { name: server },
          version: '1.0.0',
          serverMaintenancePolicy: 'Enforced',
          settingsFlow: [
            {
              name: 'turbo',
              priority: 1,
              settings: { ProcTurboMode: i % 2 ? 'Disabled' : 'Enabled', SriovGlobalEnable: 'Enabled' },
            },
          ],
        },
      });
      uids.push(v.metadata.uid!, st.metadata.uid!);
    };
    const done = async () => {
      for (const server of names) {
        if ((await suite.biosVersions.find(`${server}-bios`))?.status?.state !== 'Completed') return false;
        if ((await suite.biosSettings.find(`${server}-settings`))?.status?.state !== 'Applied') return false;
      }
      return true;
    };
    // A fixed sequence of kill delays (ms), so a failure replays the same way.
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    let midRollout = 0;
    for (let round = 0; round < 10; round++) {
      // The last server starts before the last round: its flash alone outlasts that kill.
      if (round % 3 === 0) await start(round / 3);
      await new Promise((r) => setTimeout(r, 200 + Math.floor(next() * 1200)));
      await suite.killLeader();
      // Not done after the kill: not done when it landed (Completed and Applied are final here).
      if (!(await done())) midRollout++;
    }
    expect(midRollout).toBe(10);
    try {
      for (const server of names) {
        await waitForState(suite.biosVersions, `${server}-bios`, 'Completed', 60_000);
        await waitForState(suite.biosSettings, `${server}-settings`, 'Applied', 60_000);
      }
    } catch (e) {
      throw new Error(`${(e as Error).message}\n${await whereItStands(names)}`, { cause: e });
    }
    for (const s of sim) {
      const [l] = ledgerOf(s.bmc, s.system);
      expect({
        bmc: s.bmc,
        updates: l?.biosUpdatesStarted,
        flashes: l?.biosFlashes,
        writes: l?.biosSettingsWrites,
      }).toEqual({
        bmc: s.bmc,
        updates: 1,
        flashes: 1,
        writes: 1,
      });
      expect(l?.biosVersion).toBe('4.0.0');
    }
    await waitFor(
      'no maintenance left behind',
      async () => {
        for (const uid of uids) if ((await maintenancesOf(suite, uid)).length > 0) return false;
        return true;
      },
      { timeoutMs: 20_000 },
    );
    await suite.lc.setPolicy({});
    // No grant left behind: every budget ledger entry belongs to a maintenance that still exists.
    const sdbs = await suite.lc.sdbs.list({});
    for (const b of sdbs.items)
      for (const e of (b.status as { ledger?: { maintenance?: { name: string } }[] } | undefined)?.ledger ??
        [])
        expect(names.some((n) => e.maintenance?.name.includes(n))).toBe(false);
  }, 240_000);
});
