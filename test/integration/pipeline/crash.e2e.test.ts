// kill -9 of the pipeline and firmware controllers while a pipeline runs (issue 26): two replicas of
// each (one leads, one stands by), the leader of one or the other SIGKILLed ten times at
// pseudo-random moments of a three-stage run over four servers on two BMCs (a 30 s flash keeps the
// run going through the kills, and all ten must land before the runs are done). Every run
// still completes; each server is held by exactly one ServerMaintenance for the whole run; each
// stage ran exactly once per server and the BMC hop once per BMC (the simulator's ledger); and no
// maintenance or run taint is left. A kill costs a takeover (the dead leader's 3 s Lease, a new standby),
// so ten of them take about a minute of the run's two.
import { SETUP_TIMEOUT_MS } from '../../../e2e/harness/dist.js';
import { waitFor } from '../../../e2e/harness/env.js';
import { TEST_POLICY } from '../lifecycle/harness.js';
import { CASE, startPipelineSuite, type PipelineSuite } from './harness.js';
import { STAGES } from './stages.js';

let suite: PipelineSuite;
const ROUNDS = 10;

beforeAll(async () => {
  suite = await startPipelineSuite({
    bmcs: 2,
    systems: () => 2,
    replicas: 2,
    firmwareReplicas: 2,
    timing: { updateMs: 30_000 },
  });
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await suite?.stop();
});

test('kill -9 of the pipeline and firmware controllers mid-run: every run completes, each stage once per server, one maintenance per server, nothing left', async () => {
  // Phase timeouts count the controllers' downtime too: long enough for every takeover.
  const long = { admission: '300s', issue: '120s', task: '120s', reboot: '120s', verify: '120s' };
  await suite.fw.lc.setPolicy({ firmware: { ...TEST_POLICY.firmware, timeouts: long } });
  const { names } = await suite.servers('crash', [0, 1]);
  expect(names).toHaveLength(4);
  const pipeline = 'crash-fleet';
  // Every maintenance a run ever held, by server (uids), sampled all through the run.
  const held = new Map<string, Set<string>>();
  let sampling = true;
  const sample = (async () => {
    while (sampling) {
      for (const m of await suite.maintenancesOf(pipeline)) {
        const set = held.get(m.spec.serverRef.name) ?? new Set<string>();
        set.add(m.metadata.uid ?? '');
        held.set(m.spec.serverRef.name, set);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  const runs = () => suite.runsOf(pipeline);
  const done = async () => {
    const rs = await runs();
    return rs.length === 2 && rs.every((r) => r.status?.phase === 'Completed');
  };
  try {
    await suite.pipelines.create({
      metadata: { name: pipeline },
      spec: { serverSelector: { matchLabels: { [CASE]: 'crash' } }, stages: STAGES, maxConcurrent: 2 },
    });
    // A fixed sequence of delays, so a failure replays the same way; pipeline and firmware alternate.
    let seed = 26;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    // Kills only while the runs are unfinished (a Completed run stays Completed here), so every
    // kill counted lands mid-run; a 30 s flash per stage leaves room for all ten.
    let midRun = 0;
    for (let round = 0; round < ROUNDS && !(await done()); round++) {
      await new Promise((r) => setTimeout(r, 500 + Math.floor(next() * 2_500)));
      if (await done()) break;
      if (round % 2 === 0) await suite.killLeader();
      else await suite.fw.killLeader();
      midRun++;
    }
    expect(midRun).toBe(ROUNDS);
    await waitFor(
      'every run Completed',
      async () => {
        const failed = (await runs()).find((r) => r.status?.phase === 'Failed');
        if (failed) throw new Error(`run ${failed.metadata.name} Failed: ${JSON.stringify(failed.status)}`);
        return done();
      },
      { timeoutMs: 150_000, intervalMs: 250 },
    ).catch(async (e: Error) => {
      const children = await suite.childrenOf(pipeline);
      throw new Error(
        `${e.message}\nruns: ${JSON.stringify((await runs()).map((r) => ({ name: r.metadata.name, status: r.status })))}\nchildren: ${JSON.stringify(children.map((c) => ({ name: c.metadata.name, spec: c.spec, status: c.status })))}`,
        { cause: e },
      );
    });
  } finally {
    sampling = false;
    await sample;
  }
  for (const r of await runs())
    expect(r.status?.stages?.map((s) => [s.name, s.phase])).toEqual([
      ['bmc-fw', 'Completed'],
      ['bios-tune', 'Completed'],
      ['bios-fw', 'Completed'],
    ]);
  // One maintenance per server for the whole run, through every takeover.
  expect([...held.keys()].sort()).toEqual([...names].sort());
  for (const [server, uids] of held)
    expect({ server, maintenances: uids.size }).toEqual({ server, maintenances: 1 });
  // Each stage once per server, the BMC hop once per BMC: no replay after a kill.
  for (const l of suite.fw.sim.ledger().filter((x) => x.bmc <= 1)) {
    expect({
      bmc: l.bmc,
      system: l.system,
      biosVersion: l.biosVersion,
      biosUpdates: l.biosUpdatesStarted,
      biosFlashes: l.biosFlashes,
      settingsWrites: l.biosSettingsWrites,
      bmcVersion: l.bmcVersion,
      bmcUpdates: l.bmcLedger.bmcUpdatesStarted,
      bmcFlashes: l.bmcLedger.bmcFlashes,
    }).toEqual({
      bmc: l.bmc,
      system: l.system,
      biosVersion: '2.1.0',
      biosUpdates: 1,
      biosFlashes: 1,
      settingsWrites: 1,
      bmcVersion: '6.0.0',
      bmcUpdates: 1,
      bmcFlashes: 1,
    });
  }
  // Nothing left: maintenances given back, taints off.
  await suite.released(pipeline, names);
  await suite.fw.lc.setPolicy({});
}, 300_000);
