// Act 6: a BIOS version rollout across racks under the demo's budgets (issue 25). A BIOSVersionSet
// selects the first three servers of every rack; each child asks for its own ServerMaintenance, so
// the fleet, rack and tenant budgets pace it beside maxConcurrent. The simulator fails the first
// server's flash: more Failed children than maxFailures (0) short-circuits the Set, which holds every
// child not yet past its maintenance gate. The admin raises maxFailures to 1 and the rest finish;
// the failed child is not retried.
import { HOLD_ANNOTATION } from '../../../controllers/firmware/sets/model.js';
import { BIOSVersionResource, BIOSVersionSetResource, ServerResource } from '../../../lib/kube/kinds.js';
import type { FleetPlan } from '../../sim/fleet/fleet.js';
import { attachBmc, bmcName } from '../hardware.js';
import { progressBar } from '../screen.js';
import type { ActContext } from './context.js';
import {
  conditionOf,
  judgeFirmware,
  rolloutTargets,
  setLine,
  tally,
  targetOf,
  type FirmwareObject,
} from './firmware-judge.js';

export const ROLLOUT_LABEL = 'demo.metal.ironcore.dev/bios-rollout';
const SET = 'bios-2-20';
const VERSION = '2.20.0';
const PER_RACK = 3;

export async function firmwareAct(c: ActContext, plan: FleetPlan): Promise<void> {
  c.beginAct(6, 'a BIOS rollout across racks, short-circuited by a failed flash');
  const hw = c.hardware!;
  const targets = rolloutTargets(plan.servers, PER_RACK);
  const index = (name: string) => plan.servers.findIndex((s) => s.metadata.name === name);
  const servers = c.admin.resource(ServerResource);
  for (const t of targets) {
    await attachBmc(c.admin, hw, index(t), [t]);
    await servers.patch(t, { metadata: { labels: { [ROLLOUT_LABEL]: 'wave-1' } } });
  }
  const failing = targets[0]!;
  hw.sim.bmc(index(failing)).faults.add({ kind: 'taskFail', times: 1 });
  c.log(
    `${targets.length} servers (${PER_RACK} per rack) behind simulated BMCs; the simulator will fail ${failing}'s next flash (${bmcName(index(failing))})`,
  );
  const sets = c.admin.resource<FirmwareObject>(BIOSVersionSetResource);
  c.say(
    `kubectl apply -f biosversionset.yaml   # ${SET}: BIOS ${VERSION} where ${ROLLOUT_LABEL}=wave-1, maxConcurrent 4, maxFailures 0`,
  );
  const created = await sets.create({
    metadata: { name: SET },
    spec: {
      serverSelector: { matchLabels: { [ROLLOUT_LABEL]: 'wave-1' } },
      biosVersionTemplate: {
        version: VERSION,
        serverMaintenancePolicy: 'Enforced',
        image: { URI: `https://images.demo/bios/${VERSION}` },
        retryPolicy: { maxAttempts: 0 },
      },
      maxConcurrent: 4,
      maxFailures: 0,
    },
  });
  const children = c.admin.resource<FirmwareObject>(BIOSVersionResource);
  let set: FirmwareObject | undefined;
  let mine: FirmwareObject[] = [];
  const read = async () => {
    set = await sets.get(SET);
    mine = (await children.list({})).items.filter((x) =>
      x.metadata.ownerReferences?.some((r) => r.uid === created.metadata.uid),
    );
    c.s.status = [setLine(SET, set, mine, targets.length, HOLD_ANNOTATION, (d, t) => progressBar(d, t))];
  };

  const shortCircuit = await c.poll(
    'the Set to short-circuit',
    async () => {
      await read();
      const sc = conditionOf(set, 'ShortCircuited');
      return sc?.status === 'True' && tally(mine, HOLD_ANNOTATION).inProgress === 0 && sc;
    },
    120_000,
  );
  const heldAtShortCircuit = tally(mine, HOLD_ANNOTATION).held;
  const failedNow = mine.filter((x) => x.status?.state === 'Failed');
  for (const f of failedNow)
    c.log(
      c.p.red(
        `${targetOf(f)}: Failed (${conditionOf(f, 'Failed')?.reason}): ${conditionOf(f, 'Failed')?.message}`,
      ),
    );
  c.log(
    c.p.yellow(
      `${SET}: ShortCircuited=True (${shortCircuit.reason}): ${shortCircuit.message}; ${heldAtShortCircuit} children held, nothing more starts`,
    ),
  );
  await c.pause(2000);
  c.say(
    `kubectl patch biosversionset ${SET} --type merge -p '{"spec":{"maxFailures":1}}'   # tolerate the one failure`,
  );
  await sets.patch(SET, { spec: { maxFailures: 1 } });
  await c.poll(
    'the rest of the rollout',
    async () => {
      await read();
      const t = tally(mine, HOLD_ANNOTATION);
      return t.completed + t.failed.length === targets.length && t.inProgress === 0;
    },
    180_000,
  );
  const cleared = conditionOf(set, 'ShortCircuited');
  // Each target is the only System behind its BMC.
  const ledger = new Map(
    targets.map((t) => {
      const host = hw.sim.bmc(index(t)).hosts[0];
      return [t, { version: host?.biosVersion ?? '', flashes: host?.ledger.biosFlashes ?? 0 }];
    }),
  );
  const verdict = judgeFirmware({
    set: SET,
    version: VERSION,
    targets,
    failing,
    children: mine,
    shortCircuit,
    heldAtShortCircuit,
    cleared,
    ledger,
  });
  c.s.outcomes.push(...verdict.rows);
  c.s.problems.push(...verdict.problems);
  for (const [, v] of verdict.rows) c.log(v);
  c.s.status = [];
}
