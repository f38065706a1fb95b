// Gang admission on the real control plane (webhook, maintenance, approval, budget and firmware
// controllers as processes) and the BMC simulator: two BMCVersions, each behind a BMC of two servers
// (two gangs of 2), and two BIOSVersions on a third BMC's servers, under one fleet budget of K=2.
// Polled throughout: the budget's ledger never holds part of a gang while a member of it still waits
// (no partial gang holds slots), never more than K; and every gang completes, each BMC flashed once.
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import { SYSTEM_NAMESPACE } from '../../../contract/names.js';
import { SETUP_TIMEOUT_MS } from '../../../e2e/harness/dist.js';
import { waitFor } from '../../../e2e/harness/env.js';
import { startFirmwareSuite, waitForState, type FirmwareSuite } from './harness.js';

let suite: FirmwareSuite;

beforeAll(async () => {
  suite = await startFirmwareSuite({ bmcs: 3, systems: () => 2, replicas: 1 });
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await suite?.stop();
});

const WAITING = new Set(['Pending', 'Announced', 'Approved']);

test('two 2-server gangs and BIOS work under K=2: never a partial gang holding slots, all complete', async () => {
  const { names, bmcs, sim, caseLabel } = await suite.servers('gang', [0, 1, 2]);
  const budget = `${names[0]}-k2`;
  await suite.lc.sdbs.create({
    metadata: { name: budget },
    spec: { serverSelector: { matchLabels: caseLabel }, maxUnavailable: 2 },
  });
  const bmcVersion = (i: number) => ({
    metadata: { name: `${bmcs[i]}-v` },
    spec: {
      bmcRef: { name: bmcs[i] },
      version: '6.0.0',
      serverMaintenancePolicy: 'Enforced',
      image: { URI: 'https://images.test/bmc/6.0.0' },
    },
  });
  const onBmc2 = names.filter((_, k) => sim[k]!.bmc === 2);
  const created = [
    await suite.bmcVersions.create(bmcVersion(0)),
    await suite.bmcVersions.create(bmcVersion(1)),
  ];
  for (const server of onBmc2)
    await suite.biosVersions.create({
      metadata: { name: `${server}-bios` },
      spec: {
        serverRef: { name: server },
        version: '2.1.0',
        serverMaintenancePolicy: 'Enforced',
        image: { URI: 'https://images.test/bios/2.1.0' },
      },
    });
  const gangOf = new Map(created.map((c) => [c.metadata.uid!, c.metadata.name!]));

  // Every 100 ms: the ledger against the gangs' maintenances.
  const violations: string[] = [];
  let peak = 0;
  let gangsSeen = 0;
  const look = async () => {
    const [b, ms] = await Promise.all([
      suite.lc.sdbs.get(budget),
      suite.maintenances.list({ namespace: SYSTEM_NAMESPACE }),
    ]);
    const granted = new Set((b.status?.grants ?? []).map((g) => g.maintenanceUID));
    peak = Math.max(peak, granted.size);
    if (granted.size > 2) violations.push(`ledger holds ${granted.size} > K=2`);
    const byGang = new Map<string, ServerMaintenance[]>();
    for (const m of ms.items) {
      const owner = m.metadata.ownerReferences?.[0]?.uid;
      if (!owner || !gangOf.has(owner) || !m.spec.gang) continue;
      byGang.set(owner, [...(byGang.get(owner) ?? []), m]);
    }
    gangsSeen = Math.max(gangsSeen, byGang.size);
    for (const [owner, members] of byGang) {
      const held = members.filter((m) => granted.has(m.metadata.uid!));
      const waiting = members.filter(
        (m) => !granted.has(m.metadata.uid!) && WAITING.has(m.status?.state ?? 'Pending'),
      );
      if (held.length > 0 && waiting.length > 0)
        violations.push(`${gangOf.get(owner)}: ${held.length} granted while ${waiting.length} wait`);
    }
  };
  let polling = true;
  const poller = (async () => {
    while (polling) {
      await look().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();

  try {
    for (const c of created) await waitForState(suite.bmcVersions, c.metadata.name!, 'Completed', 150_000);
    for (const server of onBmc2)
      await waitForState(suite.biosVersions, `${server}-bios`, 'Completed', 60_000);
  } finally {
    polling = false;
    await poller;
  }
  expect(gangsSeen).toBe(2);
  expect(violations).toEqual([]);
  expect(peak).toBeLessThanOrEqual(2);
  // Each BMC flashed once, each BIOS once.
  for (const i of [0, 1]) {
    const ledger = suite.sim.ledger().filter((l) => l.bmc === i);
    expect(ledger[0]?.bmcLedger).toMatchObject({ bmcUpdatesStarted: 1, bmcFlashes: 1 });
  }
  for (const l of suite.sim.ledger().filter((x) => x.bmc === 2)) expect(l.biosFlashes).toBe(1);
  await waitFor('the ledger empties', async () => {
    const b = await suite.lc.sdbs.get(budget);
    return (b.status?.grants ?? []).length === 0;
  });
}, 240_000);
