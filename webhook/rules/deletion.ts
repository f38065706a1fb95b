// Deletes that take effect at once but have consequences the deleter may not expect: admitted, with an
// admission warning that says what will happen (kubectl prints it). Nothing is refused here: a budget
// or a server that must go must be deletable, and a refusal would only make people remove the webhook.
import { MAINTENANCE_GROUP } from '../../api/maintenance/v1alpha1/group.js';
import type { LedgerEntry } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { METAL_GROUP } from '../../api/metal/v1alpha1/group.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import { allow, type Decision } from '../../contract/denial.js';
import { qualified } from '../../contract/names.js';
import { isResource, objects, type RuleInput } from './common.js';

const LISTED = 5;

function list(names: string[]): string {
  const shown = names.slice(0, LISTED).join(', ');
  return names.length > LISTED ? `${shown} and ${names.length - LISTED} more` : shown;
}

/** A budget whose ledger holds grants: the grants go with it, their maintenances run on. */
function budgetDelete({ request }: RuleInput, kind: string): Decision {
  // A delete is checked for its metadata only (a malformed object must stay deletable): read warily.
  const { oldObject } = objects<{ status?: { grants?: unknown } }>(request);
  const ledger = oldObject?.status?.grants;
  const grants = Array.isArray(ledger) ? (ledger as Partial<LedgerEntry>[]) : [];
  if (grants.length === 0) return allow();
  const what = `${kind} ${qualified(request.namespace, request.name)}`;
  const held = list(
    grants.map((g) => qualified(g?.maintenance?.namespace, g?.maintenance?.name ?? g?.maintenanceUID ?? '?')),
  );
  return allow([
    `${what} holds ${grants.length} grant(s) (${held}): those maintenances keep running, their grants go with the budget, and until another budget selects its servers nothing limits how many of them are taken out of service`,
  ]);
}

/** A server with a maintenance InMaintenance: the maintenance controller fails that maintenance. */
function serverDelete({ request, world }: RuleInput): Decision {
  const { oldObject: server } = objects<Server>(request);
  const name = request.name ?? server?.metadata.name ?? '';
  const running = world
    .maintenancesByServer(name)
    .filter((m) => m.status?.state === 'InMaintenance')
    .map((m) => qualified(m.metadata.namespace, m.metadata.name));
  if (running.length === 0) return allow();
  return allow([
    `server ${name} is in maintenance ${list(running)}: it will be marked Failed (reason ServerDeleted) and its budget grants released`,
  ]);
}

export function deletion(input: RuleInput): Decision {
  const { request } = input;
  if (request.operation !== 'DELETE') return allow();
  if (isResource(request, MAINTENANCE_GROUP, 'serverdisruptionbudgets'))
    return budgetDelete(input, 'ServerDisruptionBudget');
  if (isResource(request, MAINTENANCE_GROUP, 'serverclaimdisruptionbudgets'))
    return budgetDelete(input, 'ServerClaimDisruptionBudget');
  if (isResource(request, METAL_GROUP, 'servers')) return serverDelete(input);
  return allow();
}
