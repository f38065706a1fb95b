// Act 4: a budget-limited rollout. A BIOS security patch for every server of two racks, created at
// once; the budgets pace them and the rest wait with BudgetExhausted.
import { RACK_LABEL } from '../../sim/fleet/decisions.js';
import { createMaintenance } from '../objects.js';
import type { ActContext } from './context.js';

export async function rollout(c: ActContext): Promise<void> {
  c.beginAct(4, 'a budget-limited rollout');
  const w = c.watch;
  const racks = [...new Set(w.servers.list().map((s) => s.metadata.labels?.[RACK_LABEL] ?? ''))]
    .sort()
    .slice(0, 2);
  const targets = w.servers
    .list()
    .filter((s) => racks.includes(s.metadata.labels?.[RACK_LABEL] ?? '') && !s.spec.unclaimable)
    .map((s) => s.metadata.name!)
    .sort();
  c.s.rolloutStart = Date.now();
  for (const server of targets)
    c.s.rollout.push(
      await createMaintenance(
        c.admin,
        `bios-${server}`,
        server,
        {
          reason: 'SecurityPatch',
          class: 'Emergency',
          approval: { required: false },
          description: 'BIOS 2.19.1',
        },
        '4s',
      ),
    );
  c.log(
    `BIOS security patch for ${racks.join(' and ')}: ${targets.length} maintenances at once, no approval needed; the budgets pace them`,
  );
  let shown = false;
  await c.until(
    'the rollout to finish',
    () => {
      if (!shown) {
        const waiting = c.s.rollout.find((k) => w.records.get(k)?.waitedFor.has('BudgetExhausted'));
        if (waiting) {
          shown = true;
          const m = w.maintenances.get(waiting);
          const msg = m?.status?.conditions?.find((x) => x.type === 'Admitted')?.message ?? '';
          c.log(`${waiting.split('/')[1]} waits: BudgetExhausted${msg ? ` (${msg})` : ''}`);
        }
      }
      return c.s.rollout.every((k) => w.records.get(k)?.deletedAt);
    },
    300_000,
  );
  c.s.rolloutEnd = Date.now();
  c.log(
    `rollout done: ${targets.length} servers in ${((c.s.rolloutEnd - c.s.rolloutStart) / 1000).toFixed(0)} s, at most ${w.checker.peak} at once`,
  );
}
