// Act 3: maintenances announced to tenants, each approved a different way (by hand, standing,
// policy for a claim nobody consumes, deadline, and none needed on the cordoned server).
import { ensureNamespace } from '../../harness/processes.js';
import type { FleetPlan } from '../../sim/fleet/fleet.js';
import { OPS_NAMESPACE, createMaintenance, tenantOwner } from '../objects.js';
import { announcePlan } from '../announce-plan.js';
import type { ActContext } from './context.js';

export async function announce(c: ActContext, fleet: FleetPlan, cordoned: string): Promise<void> {
  c.beginAct(3, 'maintenances announced to tenants');
  await ensureNamespace(c.admin, OPS_NAMESPACE);
  const w = c.watch;
  const owner = fleet.claims[0]!;
  const orphan = w.claims!.getByName('orphan-1', fleet.namespaces[3 % fleet.namespaces.length])!;
  const plan = announcePlan(fleet, orphan, cordoned);
  for (const { row, server, spec } of plan) {
    row.key = await createMaintenance(c.admin, row.label, server, spec, '5s');
    c.s.rows.push(row);
  }
  c.log(
    `created ${plan.length} maintenances (Urgent: deadline 30 s) in namespace ${OPS_NAMESPACE}; the approval controller announces them on the claims`,
  );
  const first = c.s.rows[0]!;
  await c.until(
    `${first.label} announced`,
    () =>
      w.maintenances.get(first.key)?.status?.state === 'Announced' ||
      w.records.get(first.key)?.approvalSource,
    60_000,
  );
  await c.pause(4000);
  const ns = owner.metadata.namespace!;
  await c.kubectlMetal(await tenantOwner(c.admin, ns), [
    '-n',
    ns,
    'approve',
    owner.metadata.name!,
    first.label,
  ]);
  await c.until(
    'every announced maintenance done',
    () => c.s.rows.every((r) => w.records.get(r.key)?.deletedAt),
    180_000,
  );
  for (const r of c.s.rows) {
    const got = w.records.get(r.key)?.approvalSource;
    if (got !== r.expect)
      c.s.problems.push(`${r.label}: approved by ${got ?? 'nothing'}, expected ${r.expect}`);
  }
  const s = w.servers.getByName(cordoned);
  if (s?.spec.unclaimable !== true)
    c.s.problems.push(`the admin cordon on ${cordoned} did not survive its maintenance`);
  else
    c.log(
      `${cordoned}: the admin cordon survived its maintenance; the maintenance removed only its own taint`,
    );
}
