// Act 7: a MaintenancePipeline over new hardware (issue 26). Three racks of multi-node chassis, 30
// servers on 12 BMCs (six BMCs shared by three servers), arrive unclaimed and are brought to a
// baseline in five stages: the BMC's firmware and settings, a BIOS hop, BIOS settings and a second
// hop. One run per BMC, six at a time, each holding its servers in one maintenance for all stages.
// The simulator fails one server's BIOS flash mid-run: that lane stops, the run's other servers
// finish. After completion a factory reset on one server: the run reports DriftDetected and repairs
// it in place.
import type { MaintenancePipeline } from '../../../api/maintenance/v1alpha1/maintenancepipeline.js';
import type { MaintenancePipelineRun } from '../../../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import { PIPELINE_LABEL } from '../../../contract/names.js';
import { Core } from '../../../lib/kube/resources.js';
import type { KubeObject } from '../../../api/schema/meta.js';
import { MaintenancePipelineResource, MaintenancePipelineRunResource } from '../../../lib/kube/kinds.js';
import { RACK_LABEL } from '../../sim/fleet/decisions.js';
import { FLEET_LABEL, planFleet, rackName, seedFleet } from '../../sim/fleet/fleet.js';
import { CHASSIS_LAYOUT, CHASSIS_RACKS, attachBmc, bmcName, hostOf } from '../hardware.js';
import type { ActContext } from './context.js';
import {
  PIPELINE_STAGES,
  condition,
  failedLanes,
  finished,
  judgePipeline,
  runsLine,
} from './pipeline-judge.js';

const PIPELINE = 'chassis-baseline';

/** An events.k8s.io Event, as far as the act reads it. */
type KubeEvent = KubeObject & { reason?: string; note?: string; regarding?: { name?: string } };
const FLEET = 'chassis';
/** Runs at once, and a budget that fits them (a run holds all its servers at once: three at most). */
const MAX_RUNS = 6;
const CHASSIS_BUDGET = MAX_RUNS * 3;

export async function pipelineAct(c: ActContext, fleetRacks: number): Promise<void> {
  c.beginAct(7, 'a five-stage pipeline over new chassis, a failed flash, a factory reset');
  const hw = c.hardware!;
  const total = CHASSIS_LAYOUT.reduce((a, b) => a + b, 0);
  // New racks after the fleet's, unclaimed, under their own budget (three chassis' worth at once).
  const plan = planFleet({
    name: FLEET,
    servers: total,
    racks: CHASSIS_RACKS,
    tenants: 0,
    fleetBudget: CHASSIS_BUDGET,
  });
  plan.servers.forEach((s, i) => {
    const rack = Math.floor(i / (total / CHASSIS_RACKS));
    s.metadata.name = `r${fleetRacks + rack + 1}-${String((i % (total / CHASSIS_RACKS)) + 1).padStart(2, '0')}`;
    s.metadata.labels![RACK_LABEL] = rackName(fleetRacks + rack, fleetRacks + CHASSIS_RACKS);
  });
  await seedFleet(c.admin, plan);
  const names = plan.servers.map((s) => s.metadata.name!);
  await c.until(
    'the chassis discovered',
    () => names.every((n) => c.watch.servers.getByName(n)?.status?.state === 'Available'),
    90_000,
  );
  let k = 0;
  for (const [j, n] of CHASSIS_LAYOUT.entries()) {
    await attachBmc(c.admin, hw, hw.chassisBase + j, names.slice(k, k + n));
    k += n;
  }
  c.log(
    `${total} new servers in ${CHASSIS_RACKS} racks on ${CHASSIS_LAYOUT.length} BMCs (${CHASSIS_LAYOUT.filter((n) => n === 3).length} shared by three servers), budget: ${CHASSIS_BUDGET} at once`,
  );
  c.say(
    `kubectl apply -f pipeline.yaml   # ${PIPELINE}: ${PIPELINE_STAGES.map((s) => `${s.name} (${s.kind})`).join(' → ')}, maxConcurrent ${MAX_RUNS}`,
  );
  await c.admin.resource<MaintenancePipeline>(MaintenancePipelineResource).create({
    metadata: { name: PIPELINE },
    spec: {
      serverSelector: { matchLabels: { [FLEET_LABEL]: FLEET } },
      stages: PIPELINE_STAGES,
      maxConcurrent: 4,
    },
  });
  const runsApi = c.admin.resource<MaintenancePipelineRun>(MaintenancePipelineRunResource);
  let runs: MaintenancePipelineRun[] = [];
  const read = async () => {
    runs = (await runsApi.list({ labelSelector: `${PIPELINE_LABEL}=${PIPELINE}` })).items;
    c.s.status = [runsLine(PIPELINE, runs)];
  };

  // The failure: the first chassis' next SimpleUpdate once its BMC hop is done, i.e. the first BIOS
  // flash of its three servers (the BMC settings stage between flashes nothing).
  const failBmc = hw.chassisBase;
  const failRun = () => runs.find((r) => r.spec.bmcRef.name === bmcName(failBmc));
  let armed = false;
  await c
    .poll(
      'every run done',
      async () => {
        await read();
        if (!armed && failRun()?.status?.stages?.find((s) => s.name === 'bmc-fw')?.phase === 'Completed') {
          armed = true;
          hw.sim.bmc(failBmc).faults.add({ kind: 'taskFail', times: 1 });
          c.log(`simulator: the next BIOS flash behind ${bmcName(failBmc)} will fail`);
        }
        return runs.length === CHASSIS_LAYOUT.length && runs.every(finished);
      },
      240_000,
    )
    .catch((e: unknown) => {
      // Where each unfinished run stands, in the log before the act stops.
      for (const r of runs.filter((x) => !finished(x)))
        c.log(
          `${r.metadata.name}: ${(r.status?.stages ?? []).map((st) => `${st.name} ${st.phase}`).join(', ')}`,
        );
      throw e;
    });
  for (const l of failedLanes(failRun() ?? runs[0]!))
    c.log(
      c.p.red(
        `${l.server}: its lane stopped at ${l.stage}; the other servers of ${failRun()?.metadata.name} finished`,
      ),
    );
  await c.kubectlMetal(c.o.kubeconfig, ['pipeline', 'status', PIPELINE]);

  // The factory reset: a server of a completed run loses its BIOS settings.
  const victimRun =
    runs.find((r) => r.status?.phase === 'Completed' && r.spec.serverRefs.length === 3) ?? runs[1]!;
  const victim = victimRun.spec.serverRefs[0]!.name;
  const host = hostOf(hw, c.watch.servers.getByName(victim)!)!;
  const writesBefore = host.ledger.biosSettingsWrites;
  c.say(`(in the lab) factory reset of ${victim}'s BIOS settings: SriovGlobalEnable back to Disabled`);
  host.bios.current.SriovGlobalEnable = 'Disabled';
  const runOf = () => runs.find((r) => r.metadata.name === victimRun.metadata.name);
  // The condition, or the run's DriftDetected Event if a fast repair cleared it between two reads.
  const events = c.admin.resource<KubeEvent>(Core.Event);
  const driftEvent = async () =>
    (await events.list({ namespace: 'default' })).items.find(
      (e) => e.reason === 'DriftDetected' && e.regarding?.name === victimRun.metadata.name,
    );
  const seen = await c
    .poll(
      'DriftDetected',
      async () => {
        await read();
        const d = condition(runOf(), 'DriftDetected');
        if (d?.status === 'True') return `(${d.reason}): ${d.message}`;
        const e = await driftEvent();
        return e && `(Event ${e.reason}): ${e.note}`;
      },
      60_000,
    )
    .catch(() => undefined);
  if (seen) c.log(c.p.yellow(`${victimRun.metadata.name}: DriftDetected=True ${seen}`));
  const cleared = await c
    .poll(
      'the drift repaired',
      async () => {
        await read();
        const r = runOf();
        return (
          r?.status?.phase === 'Completed' &&
          condition(r, 'DriftDetected')?.status !== 'True' &&
          host.ledger.biosSettingsWrites > writesBefore
        );
      },
      90_000,
    )
    .catch(() => false);
  if (cleared)
    c.log(
      `${victimRun.metadata.name}: Completed again, DriftDetected=${condition(runOf(), 'DriftDetected')?.status ?? 'False'}; ${victim} SriovGlobalEnable=${String(host.bios.current.SriovGlobalEnable)}`,
    );
  const ledger = new Map(
    names.map((n) => {
      const h = hostOf(hw, c.watch.servers.getByName(n)!);
      const b = hw.sim.bmc(Number(c.watch.servers.getByName(n)!.spec.bmcRef!.name.slice(4)));
      return [
        n,
        {
          bios: h?.biosVersion ?? '',
          bmc: b.firmware.BMC,
          biosFlashes: h?.ledger.biosFlashes ?? 0,
          settingsWrites: h?.ledger.biosSettingsWrites ?? 0,
        },
      ];
    }),
  );
  const verdict = judgePipeline({
    pipeline: PIPELINE,
    runs,
    servers: total,
    bmcs: CHASSIS_LAYOUT.length,
    ledger,
    drift: {
      server: victim,
      run: victimRun.metadata.name ?? '',
      seen: !!seen,
      cleared: !!cleared,
      writesBefore,
      writesAfter: host.ledger.biosSettingsWrites,
      value: host.bios.current.SriovGlobalEnable,
    },
  });
  c.s.outcomes.push(...verdict.rows);
  c.s.problems.push(...verdict.problems);
  for (const [, v] of verdict.rows) c.log(v);
  c.s.status = [];
}
