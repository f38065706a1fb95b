// Drift repaired end to end: a factory reset after a run completed is detected by the settled
// BIOSSettings child (Observe) and repaired for that server only, in one new maintenance, reusing the
// children, with exactly one more BIOS settings write in the simulator's ledger. Before the fix the
// re-activated child settled Applied from the previous attempt's flowState without writing, was
// settled to Observe again, found the same drift, and the run looped (controllers/firmware/flow.ts
// startAttempt now forgets the last attempt's per-item records; run-held.test.ts proves it in unit).
import { SETUP_TIMEOUT_MS } from '../../../e2e/harness/dist.js';
import { waitFor } from '../../../e2e/harness/env.js';
import { CASE, startPipelineSuite, type PipelineSuite } from './harness.js';

let suite: PipelineSuite;

beforeAll(async () => {
  suite = await startPipelineSuite({ bmcs: 1, systems: () => 2 });
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await suite?.stop();
});

test('a factory reset after completion: repaired for that server only, in one new maintenance', async () => {
  const { names, sim } = await suite.servers('drift', [0]);
  const pipeline = 'drift-fleet';
  await suite.pipelines.create({
    metadata: { name: pipeline },
    spec: {
      serverSelector: { matchLabels: { [CASE]: 'drift' } },
      stages: [
        {
          name: 'bios-tune',
          kind: 'BIOSSettings',
          template: {
            version: '1.0.0',
            serverMaintenancePolicy: 'Enforced',
            settingsFlow: [{ name: 'virt', priority: 10, settings: { SriovGlobalEnable: 'Enabled' } }],
          },
        },
      ],
    },
  });
  const completed = async () => (await suite.runsOf(pipeline)).every((r) => r.status?.phase === 'Completed');
  await waitFor('the run Completed', completed, { timeoutMs: 120_000 });
  await suite.released(pipeline, names);
  const host = suite.fw.sim.bmc(sim[0]!.bmc).host(sim[0]!.system)!;
  const writes = host.ledger.biosSettingsWrites;
  const children = (await suite.childrenOf(pipeline)).map((c) => c.metadata.uid).sort();
  host.bios.current.SriovGlobalEnable = 'Disabled';
  const held = new Map<string, Set<string>>();
  await waitFor(
    'the drift repaired',
    async () => {
      for (const m of await suite.maintenancesOf(pipeline))
        held.set(
          m.spec.serverRef.name,
          new Set([...(held.get(m.spec.serverRef.name) ?? []), m.metadata.uid ?? '']),
        );
      return host.ledger.biosSettingsWrites > writes && (await completed());
    },
    { timeoutMs: 120_000, intervalMs: 250 },
  );
  expect([...held.keys()]).toEqual([names[0]]);
  expect(held.get(names[0]!)!.size).toBe(1);
  expect(host.ledger.biosSettingsWrites).toBe(writes + 1);
  expect((await suite.childrenOf(pipeline)).map((c) => c.metadata.uid).sort()).toEqual(children);
  await suite.released(pipeline, names);
}, 300_000);
