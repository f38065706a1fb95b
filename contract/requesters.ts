// Requesters: who may ask for a server to be taken out of service, and who may skip its owner's
// approval. RBAC only says who may create ServerMaintenances in a namespace; it cannot say "of the
// servers this namespace has claimed". Without this rule a tenant able to create maintenances in its
// own namespace could name another tenant's server with approval.required false (or class Emergency)
// and park it without its owner ever being asked.
//
// The rule: an operator (an identity or group in policy.requesters.operators) may request maintenance
// of any server and skip approval. Anybody else may request maintenance only of a server claimed by a
// ServerClaim in the maintenance's own namespace, and only with the owner's approval required.
import type { ServerMaintenance } from '../api/maintenance/v1alpha1/servermaintenance.js';
import type { Server } from '../api/metal/v1alpha1/server.js';
import type { Policy } from '../policies/schema.js';
import { approvalRequired } from './approval.js';
import { qualified } from './names.js';

/** Who is asking: the admission request's userInfo. */
export interface Requester {
  username?: string;
  groups?: readonly string[];
}

export type RequestVerdict =
  { ok: true; as: 'Operator' | 'Owner' } | { ok: false; field: string; message: string };

const OPERATORS_FIELD = 'policy requesters.operators';

/** Whether the requester is an operator: its username or one of its groups is named by the policy. */
export function isOperator(who: Requester, policy: Policy): boolean {
  const { users, groups } = policy.requesters.operators;
  if (who.username !== undefined && users.includes(who.username)) return true;
  return (who.groups ?? []).some((g) => groups.includes(g));
}

/**
 * Whether `who` may request maintenance `m` (its namespace, serverRef and approval requirement) of
 * `server` (undefined: not known). Pure: the webhook calls it on every create and on every update that
 * changes whether approval is required.
 */
export function requestVerdict(
  who: Requester,
  m: ServerMaintenance,
  server: Server | undefined,
  policy: Policy,
): RequestVerdict {
  if (isOperator(who, policy)) return { ok: true, as: 'Operator' };
  const user = JSON.stringify(who.username ?? '');
  const serverName = m.spec.serverRef.name;
  const namespace = m.metadata.namespace ?? '';
  const claimRef = server?.spec.serverClaimRef;
  if (!claimRef) {
    const state = server ? 'is not claimed' : 'is not known';
    return {
      ok: false,
      field: 'spec.serverRef',
      message: `${user} may not request maintenance of server ${serverName}: it ${state}, and only operators (${OPERATORS_FIELD}) may request maintenance of a server no claim in namespace ${namespace} holds`,
    };
  }
  const owner = qualified(claimRef.namespace, claimRef.name);
  if (claimRef.namespace !== namespace) {
    return {
      ok: false,
      field: 'spec.serverRef',
      message: `${user} may not request maintenance of server ${serverName}: it is claimed by ${owner}, not by a claim in namespace ${namespace}; only that claim's namespace or an operator (${OPERATORS_FIELD}) may`,
    };
  }
  if (!approvalRequired(m, policy)) {
    const why =
      m.spec.approval?.required === false
        ? 'spec.approval.required is false'
        : `class ${m.spec.class ?? 'Planned'} needs no approval by default`;
    return {
      ok: false,
      field: 'spec.approval.required',
      message: `${user} may not skip the approval of ${owner} (owner of server ${serverName}): ${why}; only operators (${OPERATORS_FIELD}) may; set spec.approval.required: true`,
    };
  }
  return { ok: true, as: 'Owner' };
}
