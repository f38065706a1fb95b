// Placement (WS1): a write that binds a claim to a server is denied when the server is unclaimable
// (cordoned), carries a NoBind taint the claim does not tolerate, or is in maintenance. Binding writes:
// Server spec.serverClaimRef set or re-pointed, ServerClaim spec.serverRef set on an existing claim.
// A claim *created* with a serverRef only asks for that server: it is admitted with a warning and
// stays unbound (IEP-22). Setting or clearing unclaimable never touches bindings, so it always passes.
// No claim may tolerate the maintenance taint (the signal that makes metal-operator's binder skip a held
// server): a create or update that adds such a toleration is refused; one the claim had before is kept,
// with a warning, and the in-maintenance check below still refuses held servers for it.
import { METAL_GROUP } from '../../api/metal/v1alpha1/group.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { Toleration } from '../../api/schema/common.js';
import { Codes, type Code } from '../../contract/codes.js';
import { allow, deny, withWarnings, type Cause, type Decision } from '../../contract/denial.js';
import {
  describeTaint,
  hasNoBindTaint,
  reservedTolerations,
  untoleratedNoBindTaints,
} from '../../contract/taints.js';
import { type WorldView } from '../world.js';
import { isResource, objects, type RuleInput } from './common.js';
import { isTerminal } from '../../contract/lifecycle.js';
import { MAINTENANCE_TAINT_KEY, qualified } from '../../contract/names.js';

export interface Blocker {
  code: Code;
  message: string;
}

const BLOCKING_MAINTENANCE_STATES = new Set(['Approved', 'InMaintenance']);

/** Why a claim with these tolerations may not bind to the server now; empty when it may. */
export function bindingBlockers(
  server: Server,
  tolerations: readonly Toleration[] | undefined,
  world: WorldView,
): Blocker[] {
  const name = server.metadata.name ?? '';
  const blockers: Blocker[] = [];
  if (server.spec.unclaimable === true) {
    blockers.push({
      code: Codes.SERVER_UNCLAIMABLE,
      message: `server ${name} is cordoned (spec.unclaimable)`,
    });
  }
  const taints = untoleratedNoBindTaints(server.spec.taints, tolerations);
  if (taints.length > 0) {
    blockers.push({
      code: Codes.SERVER_TAINTED,
      message: `server ${name} has NoBind taint(s) the claim does not tolerate: ${taints.map(describeTaint).join(', ')}`,
    });
  }
  const maintenance = maintenanceHolding(server, world);
  if (maintenance) {
    blockers.push({
      code: Codes.SERVER_IN_MAINTENANCE,
      message: `server ${name} is in maintenance (${maintenance})`,
    });
  }
  return blockers;
}

/** A description of the maintenance holding the server, if any (typed status, legacy fields, or the index). */
function maintenanceHolding(server: Server, world: WorldView): string | undefined {
  const projected = server.status?.maintenance;
  if (projected && BLOCKING_MAINTENANCE_STATES.has(projected.state)) {
    const ref = projected.activeMaintenanceRef;
    return ref ? `${qualified(ref.namespace, ref.name)} is ${projected.state}` : `state ${projected.state}`;
  }
  if (server.status?.state === 'Maintenance') return 'legacy state Maintenance';
  if (server.spec.serverMaintenanceRef)
    return `legacy serverMaintenanceRef ${qualified(server.spec.serverMaintenanceRef.namespace, server.spec.serverMaintenanceRef.name)}`;
  const active = world
    .maintenancesByServer(server.metadata.name ?? '')
    .find((m) => !isTerminal(m) && BLOCKING_MAINTENANCE_STATES.has(m.status?.state ?? ''));
  return active
    ? `${qualified(active.metadata.namespace, active.metadata.name)} is ${active.status?.state}`
    : undefined;
}

function denyBlocked(what: string, blockers: Blocker[]): Decision {
  const first = blockers[0]!;
  const causes: Cause[] = blockers.map((b) => ({ reason: b.code, message: b.message }));
  return deny(first.code, `${what}: ${blockers.map((b) => b.message).join('; ')}`, { causes });
}

/**
 * The tolerations of the claim a server is being bound to. They matter only against a NoBind taint:
 * without one, the claim is not looked up (a fleet-sized cache, ~1.5 µs a review in bench:webhook).
 */
function claimTolerations(
  server: Server,
  ref: { namespace: string; name: string },
  world: WorldView,
): readonly Toleration[] | undefined {
  if (!hasNoBindTaint(server.spec.taints)) return undefined;
  return world.getClaim(ref.namespace, ref.name)?.spec.tolerations;
}

function serverBinding({ request, world }: RuleInput): Decision {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow();
  const { object: server, oldObject: old } = objects<Server>(request);
  const ref = server?.spec?.serverClaimRef;
  if (!server || !ref) return allow();
  const oldRef = old?.spec?.serverClaimRef;
  if (oldRef && oldRef.namespace === ref.namespace && oldRef.name === ref.name) return allow();
  const blockers = bindingBlockers(server, claimTolerations(server, ref, world), world);
  if (blockers.length === 0) return allow();
  return denyBlocked(
    `binding claim ${qualified(ref.namespace, ref.name)} to server ${server.metadata.name ?? ''} is not allowed`,
    blockers,
  );
}

/** A claim created with a serverRef only asks for that server: admit, and say why it will wait. */
function claimRequest(serverName: string, claimName: string, claim: ServerClaim, world: WorldView): Decision {
  const server = world.getServer(serverName);
  if (!server)
    return allow([
      `server ${serverName} does not exist (yet); claim ${claimName} stays unbound until it does`,
    ]);
  return allow(
    bindingBlockers(server, claim.spec.tolerations, world).map(
      (b) => `claim ${claimName} stays unbound: ${b.message}`,
    ),
  );
}

interface ClaimTarget {
  claim: ServerClaim;
  serverName: string;
  namespace: string | undefined;
  claimName: string;
}

/** The claim and the server this write newly points it at, if it does. */
function claimTarget(request: RuleInput['request']): ClaimTarget | undefined {
  const { object: claim, oldObject: old } = objects<ServerClaim>(request);
  const serverName = claim?.spec?.serverRef?.name;
  if (!claim || !serverName || old?.spec?.serverRef?.name === serverName) return undefined;
  const namespace = claim.metadata.namespace ?? request.namespace;
  return {
    claim,
    serverName,
    namespace,
    claimName: qualified(namespace, claim.metadata.name ?? request.name),
  };
}

const RESERVED_WHY =
  `tolerates ${MAINTENANCE_TAINT_KEY}, the taint by which the maintenance contract tells metal-operator ` +
  'that a server is held for maintenance (such a claim would be refused on every held server); ' +
  'tolerate any other key';

/**
 * A claim's tolerations of the maintenance taint: refused when this write adds one (naming each), kept
 * with a warning when the stored claim had one already (a claim from before this rule must stay bindable).
 */
function reservedTolerationCheck(request: RuleInput['request']): Decision {
  const { object: claim, oldObject: old } = objects<ServerClaim>(request);
  const found = reservedTolerations(claim?.spec?.tolerations, MAINTENANCE_TAINT_KEY);
  if (found.length === 0) return allow();
  const name = qualified(
    claim?.metadata?.namespace ?? request.namespace,
    claim?.metadata?.name ?? request.name,
  );
  const had =
    request.operation === 'UPDATE' &&
    reservedTolerations(old?.spec?.tolerations, MAINTENANCE_TAINT_KEY).length > 0;
  const fields = found.map((i) => `spec.tolerations[${i}]`);
  if (had)
    return allow([
      `claim ${name}: ${fields.join(', ')} ${RESERVED_WHY}; servers in maintenance stay refused to it`,
    ]);
  return deny(Codes.TOLERATION_RESERVED, `claim ${name}: ${fields.join(', ')} ${RESERVED_WHY}`, {
    causes: found.map((i) => ({
      field: `spec.tolerations[${i}].key`,
      reason: 'FieldValueForbidden',
      message: `is ${MAINTENANCE_TAINT_KEY}, reserved for the maintenance contract; use any other key`,
    })),
  });
}

function claimBinding({ request, world }: RuleInput): Decision {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow();
  const reserved = reservedTolerationCheck(request);
  if (!reserved.allowed) return reserved;
  return withWarnings(bindingOfClaim(request, world), reserved.warnings);
}

function bindingOfClaim(request: RuleInput['request'], world: WorldView): Decision {
  const target = claimTarget(request);
  if (!target) return allow();
  const { claim, serverName, namespace, claimName } = target;
  const server = world.getServer(serverName);
  // A serverRef to a server nobody knows binds nothing: admitted with the create's warning, never a
  // 429 (kubectl retries those for 100 s, and retrying changes nothing). When the server appears, the
  // Server side of the binding (serverBinding) is judged as usual.
  if (request.operation === 'CREATE' || !server) return claimRequest(serverName, claimName, claim, world);
  // metal-operator binds the Server first, then records serverRef on the claim: that write follows a
  // binding that already happened and a later cordon must not strand it.
  const bound = server.spec.serverClaimRef;
  if (bound?.name === claim.metadata.name && bound?.namespace === namespace) return allow();
  const blockers = bindingBlockers(server, claim.spec.tolerations, world);
  if (blockers.length === 0) return allow();
  return denyBlocked(`binding claim ${claimName} to server ${serverName} is not allowed`, blockers);
}

export function placement(input: RuleInput): Decision {
  if (isResource(input.request, METAL_GROUP, 'servers')) return serverBinding(input);
  if (isResource(input.request, METAL_GROUP, 'serverclaims')) return claimBinding(input);
  return allow();
}
