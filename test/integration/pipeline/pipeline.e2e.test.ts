// The pipeline controller as a process against the real control plane, with the firmware,
// maintenance, approval and budget controllers as processes and the BMC simulator (issue 26): six
// servers behind three BMCs, three stages (a BMC hop, BIOS settings, a BIOS hop). One run per BMC
// finishes; each server is held by exactly one ServerMaintenance for its whole run (the firmware
// controller requests none of its own); each stage ran exactly once on each server (the simulator's
// ledger); and at the end no maintenance and no run taint is left. A BIOS flash failing on one
// server ends its run Failed while the other server finishes; a pipeline deleted mid-run stops at
// a safe point and leaves no run, maintenance or taint behind. A run whose tenant never approves
// waits, touching nothing, until its maintenances' deadline, then proceeds on the deadline's approval.
// A pipeline whose stages are edited mid-run finishes the flash in flight, then re-plans from the
// first changed stage, inside the same maintenances.
import type { MaintenancePipelineRun } from '../../../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import { SYSTEM_NAMESPACE } from '../../../contract/names.js';
import { SETUP_TIMEOUT_MS } from '../../../e2e/harness/dist.js';
import { waitFor } from '../../../e2e/harness/env.js';
import { TEST_POLICY } from '../lifecycle/harness.js';
import { CASE, startPipelineSuite, type PipelineSuite } from './harness.js';
import { STAGES } from './stages.js';

let suite: PipelineSuite;

beforeAll(async () => {
  suite = await startPipelineSuite({ bmcs: 8, systems: () => 2 });
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await suite?.stop();
});

/** On failure, what the runs and the pipeline controller said (a failed wait names only itself). */
async function diagnosed<T>(pipeline: string, wait: () => Promise<T>): Promise<T> {
  try {
    return await wait();
  } catch (e) {
    const runs = await suite.runsOf(pipeline);
    const warnings = (b: { logs: Record<string, unknown>[] }) =>
      JSON.stringify(b.logs.filter((l) => Number(l.level) >= 40).slice(-10));
    const children = await suite.childrenOf(pipeline);
    throw new Error(
      [
        (e as Error).message,
        `runs: ${JSON.stringify(runs.map((r) => ({ name: r.metadata.name, status: r.status })))}`,
        `children: ${JSON.stringify(children.map((c) => ({ kind: c.kind, name: c.metadata.name, gen: c.metadata.generation, spec: c.spec, status: c.status })))}`,
        `pipeline-controller warnings: ${warnings(suite.controller)}`,
        `firmware-controller warnings: ${warnings(suite.fw.controller)}`,
        `firmware-controller tail: ${JSON.stringify(suite.fw.controller.logs.slice(-15))}`,
      ].join('\n'),
      { cause: e },
    );
  }
}

describe('pipeline controller', () => {
  test('6 servers on 3 BMCs, 3 stages: every run completes inside one maintenance per server, nothing left after', async () => {
    const { names, bmcs } = await suite.servers('small', [0, 1, 2]);
    expect(names).toHaveLength(6);
    const pipeline = 'small-fleet';
    await suite.pipelines.create({
      metadata: { name: pipeline },
      spec: { serverSelector: { matchLabels: { [CASE]: 'small' } }, stages: STAGES, maxConcurrent: 3 },
    });
    // Every maintenance a run ever held, by server (uids), and every taint seen, while it runs.
    const held = new Map<string, Set<string>>();
    let runs: MaintenancePipelineRun[] = [];
    await diagnosed(pipeline, () =>
      waitFor(
        'every run Completed',
        async () => {
          for (const m of await suite.maintenancesOf(pipeline)) {
            const set = held.get(m.spec.serverRef.name) ?? new Set<string>();
            set.add(m.metadata.uid ?? '');
            held.set(m.spec.serverRef.name, set);
          }
          runs = await suite.runsOf(pipeline);
          const failed = runs.find((r) => r.status?.phase === 'Failed');
          if (failed) throw new Error(`run ${failed.metadata.name} Failed: ${JSON.stringify(failed.status)}`);
          return runs.length === 3 && runs.every((r) => r.status?.phase === 'Completed');
        },
        { timeoutMs: 240_000, intervalMs: 250 },
      ),
    );
    expect(runs.map((r) => r.spec.bmcRef.name).sort()).toEqual([...bmcs].sort());
    for (const r of runs) {
      expect(r.spec.serverRefs).toHaveLength(2);
      expect(r.status?.stages?.map((s) => [s.name, s.phase])).toEqual([
        ['bmc-fw', 'Completed'],
        ['bios-tune', 'Completed'],
        ['bios-fw', 'Completed'],
      ]);
      expect(r.status?.completedStages).toBe(3);
    }
    // One maintenance per server for the whole run.
    expect([...held.keys()].sort()).toEqual([...names].sort());
    for (const [server, uids] of held)
      expect({ server, maintenances: uids.size }).toEqual({ server, maintenances: 1 });
    // The firmware controller took none of its own for the run's children.
    const own = await suite.fw.maintenances.list({
      namespace: SYSTEM_NAMESPACE,
      labelSelector: 'firmware.metal.ironcore.dev/owner-uid',
    });
    expect(own.items.filter((m) => names.includes(m.spec.serverRef.name))).toEqual([]);
    // Each stage executed exactly once per server (BMC work once per BMC).
    const ledger = suite.fw.sim.ledger().filter((l) => l.bmc <= 2);
    for (const l of ledger) {
      expect({ bmc: l.bmc, system: l.system, bmcVersion: l.bmcVersion, biosVersion: l.biosVersion }).toEqual({
        bmc: l.bmc,
        system: l.system,
        bmcVersion: '6.0.0',
        biosVersion: '2.1.0',
      });
      expect(l.biosFlashes).toBe(1);
      expect(l.biosSettingsWrites).toBe(1);
      expect(l.bmcLedger.bmcFlashes).toBe(1);
    }
    // Nothing left: the runs gave their maintenances back and took their taints off.
    await suite.released(pipeline, names);
  }, 300_000);

  test('one server failing mid-stage: its run ends Failed, the other server finishes, both given back', async () => {
    const { names } = await suite.servers('failing', [3]);
    // The BMC's next SimpleUpdate ends in Exception: the first BIOS flash of the two servers.
    suite.fw.sim.bmc(3).faults.add({ kind: 'taskFail', times: 1 });
    const pipeline = 'failing-fleet';
    const stages = STAGES.filter((s) => s.kind !== 'BMCVersion');
    await suite.pipelines.create({
      metadata: { name: pipeline },
      spec: { serverSelector: { matchLabels: { [CASE]: 'failing' } }, stages },
    });
    let run: MaintenancePipelineRun | undefined;
    await diagnosed(pipeline, () =>
      waitFor(
        'the run Failed',
        async () => {
          [run] = await suite.runsOf(pipeline);
          return run?.status?.phase === 'Failed';
        },
        { timeoutMs: 120_000, intervalMs: 250 },
      ),
    );
    const hop = run!.status!.stages!.find((s) => s.name === 'bios-fw')!;
    expect(hop.phase).toBe('Failed');
    expect(hop.servers!.map((s) => s.phase).sort()).toEqual(['Completed', 'Failed']);
    const flashes = suite.fw.sim
      .ledger()
      .filter((l) => l.bmc === 3)
      .map((l) => l.biosFlashes)
      .sort();
    expect(flashes).toEqual([0, 1]);
    await suite.released(pipeline, names);
  }, 300_000);

  test('a pipeline deleted mid-run: its runs stop at a safe point and leave nothing behind', async () => {
    const { names } = await suite.servers('deleted', [4, 5]);
    const pipeline = 'deleted-fleet';
    await suite.pipelines.create({
      metadata: { name: pipeline },
      spec: { serverSelector: { matchLabels: { [CASE]: 'deleted' } }, stages: STAGES, maxConcurrent: 2 },
    });
    await diagnosed(pipeline, () =>
      waitFor(
        'a stage in flight',
        async () =>
          (await suite.runsOf(pipeline)).some((r) =>
            r.status?.stages?.some((st) => st.phase === 'InProgress'),
          ),
        { timeoutMs: 120_000, intervalMs: 100 },
      ),
    );
    await suite.pipelines.delete(pipeline);
    await diagnosed(pipeline, () =>
      waitFor(
        'runs, maintenances and taints gone',
        async () =>
          (await suite.runsOf(pipeline)).length === 0 &&
          (await suite.maintenancesOf(pipeline)).length === 0 &&
          (await suite.tainted(names)).length === 0,
        { timeoutMs: 120_000, intervalMs: 250 },
      ),
    );
    // Nothing half-flashed: every update a BMC started became active.
    for (const l of suite.fw.sim.ledger().filter((x) => x.bmc === 4 || x.bmc === 5)) {
      expect({ system: l.system, started: l.biosUpdatesStarted }).toEqual({
        system: l.system,
        started: l.biosFlashes,
      });
      expect(l.bmcLedger.bmcUpdatesStarted).toBe(l.bmcLedger.bmcFlashes);
    }
  }, 300_000);

  test('stages edited mid-run: the flash in flight finishes, then the run re-plans from the first changed stage, in the same maintenances', async () => {
    const { names } = await suite.servers('edited', [7]);
    const pipeline = 'edited-fleet';
    await suite.pipelines.create({
      metadata: { name: pipeline },
      spec: { serverSelector: { matchLabels: { [CASE]: 'edited' } }, stages: STAGES },
    });
    await diagnosed(pipeline, () =>
      waitFor(
        'the BMC flash in flight',
        async () =>
          (await suite.runsOf(pipeline)).some((r) =>
            r.status?.stages?.some((st) => st.name === 'bmc-fw' && st.phase === 'InProgress'),
          ),
        { timeoutMs: 120_000, intervalMs: 50 },
      ),
    );
    // The first stage changes under the run: the BMC is to end on 6.1.0, not 6.0.0.
    const edited = STAGES.map((st) =>
      st.kind === 'BMCVersion'
        ? {
            ...st,
            template: { ...st.template, version: '6.1.0', image: { URI: 'https://images.test/bmc/6.1.0' } },
          }
        : st,
    );
    const current = (await suite.pipelines.find(pipeline))!;
    const updated = await suite.pipelines.replace({ ...current, spec: { ...current.spec, stages: edited } });
    const held = new Map<string, Set<string>>();
    let run: MaintenancePipelineRun | undefined;
    await diagnosed(pipeline, () =>
      waitFor(
        'the run Completed on the edited stages',
        async () => {
          for (const m of await suite.maintenancesOf(pipeline)) {
            const set = held.get(m.spec.serverRef.name) ?? new Set<string>();
            set.add(m.metadata.uid ?? '');
            held.set(m.spec.serverRef.name, set);
          }
          [run] = await suite.runsOf(pipeline);
          if (run?.status?.phase === 'Failed') throw new Error(`run Failed: ${JSON.stringify(run.status)}`);
          return (
            run?.status?.phase === 'Completed' &&
            run.status.observedPipelineGeneration === updated.metadata.generation
          );
        },
        { timeoutMs: 240_000, intervalMs: 250 },
      ),
    );
    const ledger = suite.fw.sim.ledger().filter((l) => l.bmc === 7);
    expect(ledger).toHaveLength(2);
    // The flash in flight at the edit was not interrupted, and the edited hop ran after it: two BMC
    // flashes, each started one finished. The BIOS stages, unchanged, ran once each.
    expect(ledger[0]!.bmcLedger).toMatchObject({ bmcUpdatesStarted: 2, bmcFlashes: 2 });
    for (const l of ledger) {
      expect({ system: l.system, bmcVersion: l.bmcVersion, biosVersion: l.biosVersion }).toEqual({
        system: l.system,
        bmcVersion: '6.1.0',
        biosVersion: '2.1.0',
      });
      expect({ system: l.system, flashes: l.biosFlashes, writes: l.biosSettingsWrites }).toEqual({
        system: l.system,
        flashes: 1,
        writes: 1,
      });
    }
    // One maintenance per server through the edit.
    expect([...held.keys()].sort()).toEqual([...names].sort());
    for (const [server, uids] of held)
      expect({ server, maintenances: uids.size }).toEqual({ server, maintenances: 1 });
    await suite.released(pipeline, names);
  }, 300_000);

  test('a tenant that never approves: the run waits, touching nothing, until the deadline, then completes on the deadline approval', async () => {
    // Planned maintenances get a 12 s deadline from announcement (the suite's policy says 1 h).
    const classes = { ...TEST_POLICY.classes, Planned: { ...TEST_POLICY.classes.Planned, deadline: '12s' } };
    await suite.fw.lc.setPolicy({ classes });
    try {
      const { names, sim } = await suite.servers('deadline', [6], { claims: 'consumer' });
      const pipeline = 'deadline-fleet';
      const stages = [
        {
          ...STAGES[1]!,
          template: { ...STAGES[1]!.template, serverMaintenancePolicy: 'OwnerApproval' as const },
        },
      ];
      await suite.pipelines.create({
        metadata: { name: pipeline },
        spec: { serverSelector: { matchLabels: { [CASE]: 'deadline' } }, stages },
      });
      // Announced to the tenant with a deadline; nobody answers.
      const announced = await diagnosed(pipeline, () =>
        waitFor(
          'both maintenances Announced with a deadline',
          async () => {
            const ms = await suite.maintenancesOf(pipeline);
            return ms.length === 2 && ms.every((m) => m.status?.state === 'Announced' && m.status.deadline)
              ? ms
              : undefined;
          },
          { timeoutMs: 60_000, intervalMs: 250 },
        ),
      );
      const deadline = Math.max(...announced.map((m) => Date.parse(m.status!.deadline!)));
      // Until the deadline nothing is written to the hardware and the stage has not started.
      const writes = () => sim.map((x) => suite.fw.sim.bmc(x.bmc).host(x.system)!.ledger.biosSettingsWrites);
      while (Date.now() < deadline - 1_000) {
        expect(writes()).toEqual([0, 0]);
        const [run] = await suite.runsOf(pipeline);
        expect(run?.status?.phase).not.toBe('Completed');
        expect(run?.status?.stages?.[0]?.phase).toBe('Pending');
        await new Promise((r) => setTimeout(r, 500));
      }
      // At the deadline the maintenances proceed without the tenant's answer, and the run completes.
      const approved = new Map<string, string | undefined>();
      await diagnosed(pipeline, () =>
        waitFor(
          'the run Completed after the deadline',
          async () => {
            for (const m of await suite.maintenancesOf(pipeline))
              if (m.status?.approval) approved.set(m.spec.serverRef.name, m.status.approval.source);
            const [run] = await suite.runsOf(pipeline);
            if (run?.status?.phase === 'Failed') throw new Error(`run Failed: ${JSON.stringify(run.status)}`);
            return run?.status?.phase === 'Completed';
          },
          { timeoutMs: 90_000, intervalMs: 250 },
        ),
      );
      expect(Object.fromEntries(approved)).toEqual(Object.fromEntries(names.map((n) => [n, 'Deadline'])));
      expect(writes()).toEqual([1, 1]);
      await suite.released(pipeline, names);
    } finally {
      await suite.fw.lc.setPolicy({});
    }
  }, 300_000);
});
