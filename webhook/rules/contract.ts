// Contract rules: approvals and deferrals must name a maintenance announced to the claim, a deferral
// stays within the announced deadline, a maintenance is requested only by whom contract/requesters.ts
// lets request it, only the controllers write announcements and ServerMaintenance
// status, a ServerBoot on a claimed server runs inside that server's InMaintenance maintenance, and
// BIOS*/BMC* objects are frozen while their maintenance is InMaintenance.
import { MAINTENANCE_GROUP } from '../../api/maintenance/v1alpha1/group.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerBoot } from '../../api/maintenance/v1alpha1/serverboot.js';
import { METAL_GROUP } from '../../api/metal/v1alpha1/group.js';
import type { ServerClaim, Announcement, MaintenanceDeferral } from '../../api/metal/v1alpha1/serverclaim.js';
import type { KubeObject } from '../../api/schema/meta.js';
import { Codes } from '../../contract/codes.js';
import { allow, combine, deny, type Decision } from '../../contract/denial.js';
import { isOneOf, isResource, jsonEqual, objects, type RuleInput } from './common.js';
import { parseTime } from '../../contract/time.js';
import { approvalRequired } from '../../contract/approval.js';
import { requestVerdict } from '../../contract/requesters.js';
import { MaintenanceConditions, PIPELINE_RUN_LABEL, qualified } from '../../contract/names.js';
import { deletion } from './deletion.js';

export const SYSTEM_GROUP = 'system.metal.ironcore.dev';
export const BASEBOARD_GROUP = 'baseboard.metal.ironcore.dev';
/** Upstream metal-maintenance-operator's escape hatch, kept for compatibility (answered with a warning). */
export const OPERATION_ANNOTATION = 'metal.ironcore.dev/operation';

const STAMP_FIELDS = new Set(['approvedBy', 'approvedAt', 'requestedBy', 'requestedAt']);

/** An entry without the fields the webhook stamps, for "did the owner change it" comparisons. */
export function withoutStamps<T extends object>(entry: T): Partial<T> {
  return Object.fromEntries(Object.entries(entry).filter(([k]) => !STAMP_FIELDS.has(k))) as Partial<T>;
}

/** Entries (keyed by maintenanceUID) that are new in `next` or differ from `previous` beyond the stamps. */
export function newOrChanged<T extends { maintenanceUID: string }>(
  next: readonly T[] | undefined,
  previous: readonly T[] | undefined,
): T[] {
  const before = new Map((previous ?? []).map((e) => [e.maintenanceUID, e]));
  return (next ?? []).filter((e) => {
    const old = before.get(e.maintenanceUID);
    return !old || !jsonEqual(withoutStamps(old), withoutStamps(e));
  });
}

function approvalDenials(
  claim: ServerClaim,
  old: ServerClaim | undefined,
  announced: Map<string, Announcement>,
  name: string,
): Decision[] {
  return newOrChanged(claim.spec.maintenance?.approvals, old?.spec?.maintenance?.approvals)
    .filter((a) => !announced.has(a.maintenanceUID))
    .map((a) =>
      deny(
        Codes.APPROVAL_NOT_ANNOUNCED,
        `approval names maintenance uid ${a.maintenanceUID}, which is not announced to claim ${name}`,
        {
          causes: [
            {
              field: 'spec.maintenance.approvals',
              message: `maintenanceUID ${a.maintenanceUID} is not announced`,
            },
          ],
        },
      ),
    );
}

function deferralDenial(
  d: MaintenanceDeferral,
  announced: Map<string, Announcement>,
  name: string,
): Decision | undefined {
  const a = announced.get(d.maintenanceUID);
  if (!a) {
    return deny(
      Codes.DEFER_NOT_ANNOUNCED,
      `deferral names maintenance uid ${d.maintenanceUID}, which is not announced to claim ${name}`,
      {
        causes: [
          {
            field: 'spec.maintenance.deferrals',
            message: `maintenanceUID ${d.maintenanceUID} is not announced`,
          },
        ],
      },
    );
  }
  const until = parseTime(d.until);
  const deadline = parseTime(a.deadline);
  if (until === undefined || deadline === undefined || until <= deadline) return undefined;
  return deny(
    Codes.DEFER_PAST_DEADLINE,
    `deferral of ${a.maintenanceName} until ${d.until} is past its deadline ${a.deadline}`,
    {
      causes: [{ field: 'spec.maintenance.deferrals', message: `until must not be after ${a.deadline}` }],
    },
  );
}

function claimSpecRules({ request }: RuleInput): Decision {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow();
  const { object: claim, oldObject: old } = objects<ServerClaim>(request);
  if (!claim) return allow();
  // Announcements come from the stored object: status cannot change in a spec write.
  const announced = new Map<string, Announcement>(
    (old?.status?.maintenance?.announcements ?? []).map((a) => [a.maintenanceUID, a]),
  );
  const name = qualified(claim.metadata.namespace ?? request.namespace, claim.metadata.name ?? request.name);
  const deferrals = newOrChanged(claim.spec.maintenance?.deferrals, old?.spec?.maintenance?.deferrals);
  return combine([
    ...approvalDenials(claim, old, announced, name),
    ...deferrals.flatMap((d) => deferralDenial(d, announced, name) ?? []),
  ]);
}

function announcementWriters({ request, policy }: RuleInput): Decision {
  if (request.operation !== 'UPDATE' && request.operation !== 'CREATE') return allow();
  const { object, oldObject } = objects<ServerClaim>(request);
  if (jsonEqual(object?.status?.maintenance, oldObject?.status?.maintenance)) return allow();
  if (isOneOf(request.userInfo, policy.writers.announcements)) return allow();
  return deny(
    Codes.FORBIDDEN_WRITER,
    `only the approval controller may write ServerClaim status.maintenance (announcements); ${JSON.stringify(request.userInfo.username ?? '')} may not`,
  );
}

/** status without what the drain controller owns (status.drain and the condition Drained). */
function withoutDrain(status: ServerMaintenance['status']): unknown {
  const { drain: _drain, conditions, ...rest } = status ?? {};
  const others = (conditions ?? []).filter((c) => c.type !== MaintenanceConditions.Drained);
  return { ...rest, conditions: others };
}

function maintenanceStatusWriters({ request, policy }: RuleInput): Decision {
  if (request.operation !== 'UPDATE') return allow();
  const { object, oldObject } = objects<ServerMaintenance>(request);
  if (jsonEqual(object?.status, oldObject?.status)) return allow();
  if (isOneOf(request.userInfo, policy.writers.maintenanceStatus)) return allow();
  if (isOneOf(request.userInfo, policy.writers.drainStatus)) {
    if (jsonEqual(withoutDrain(object?.status), withoutDrain(oldObject?.status))) return allow();
    return deny(
      Codes.FORBIDDEN_WRITER,
      `${JSON.stringify(request.userInfo.username ?? '')} may write only status.drain and the condition Drained of a ServerMaintenance`,
    );
  }
  return deny(
    Codes.FORBIDDEN_WRITER,
    `only the maintenance controllers may write ServerMaintenance status; ${JSON.stringify(request.userInfo.username ?? '')} may not`,
  );
}

/**
 * Who may request maintenance of which server (contract/requesters.ts): judged on create, and on an
 * update that changes whether the owner's approval is required (serverRef is immutable).
 */
function maintenanceRequestRule({ request, world, policy }: RuleInput): Decision {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow();
  const { object: m, oldObject: old } = objects<ServerMaintenance>(request);
  if (!m) return allow();
  // oldObject is what the API server stored; a malformed one is judged like a create, never a throw.
  if (old?.spec && approvalRequired(old, policy) === approvalRequired(m, policy)) return allow();
  const namespace = m.metadata.namespace ?? request.namespace ?? '';
  const subject = { ...m, metadata: { ...m.metadata, namespace } };
  const verdict = requestVerdict(request.userInfo, subject, world.getServer(m.spec.serverRef.name), policy);
  if (verdict.ok) return allow();
  return deny(Codes.REQUESTER_FORBIDDEN, verdict.message, {
    causes: [{ field: verdict.field, message: verdict.message }],
  });
}

/** Why the referenced maintenance does not cover booting this server now, if it does not. */
function bootMaintenanceProblem(
  m: ServerMaintenance | undefined,
  serverName: string,
  where: string,
): { why: string; retry?: number } | undefined {
  if (!m) return { why: `${where} does not exist` };
  if (m.spec.serverRef.name !== serverName) return { why: `${where} is for server ${m.spec.serverRef.name}` };
  if (m.status?.state !== 'InMaintenance')
    return { why: `${where} is ${m.status?.state ?? 'Pending'}`, retry: 30 };
  return undefined;
}

function serverBootRule({ request, world }: RuleInput): Decision {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow();
  const { object: boot, oldObject: old } = objects<ServerBoot>(request);
  if (!boot || (old && jsonEqual(old.spec, boot.spec))) return allow();
  const serverName = boot.spec.serverRef.name;
  const server = world.getServer(serverName);
  if (!server)
    return deny(Codes.SERVER_NOT_FOUND, `server ${serverName} is not known (yet)`, { retryAfterSeconds: 10 });
  const claimRef = server.spec.serverClaimRef;
  if (!claimRef) return allow();
  const why = `server ${serverName} is claimed by ${qualified(claimRef.namespace, claimRef.name)}, so a ServerBoot must reference that server's InMaintenance ServerMaintenance (spec.maintenanceRef)`;
  const ref = boot.spec.maintenanceRef;
  if (!ref)
    return deny(Codes.BOOT_NEEDS_MAINTENANCE, why, {
      causes: [{ field: 'spec.maintenanceRef', message: 'is required for a claimed server' }],
    });
  const namespace = boot.metadata.namespace ?? request.namespace ?? '';
  const problem = bootMaintenanceProblem(
    world.getMaintenance(namespace, ref.name),
    serverName,
    qualified(namespace, ref.name),
  );
  if (!problem) return allow();
  return deny(
    Codes.BOOT_NEEDS_MAINTENANCE,
    `${why}; ${problem.why}`,
    problem.retry ? { retryAfterSeconds: problem.retry } : {},
  );
}

type RefLike = { name?: string; namespace?: string };

/** ServerMaintenance references of a firmware object (BIOS or BMC kinds), in any of the upstream shapes. */
export function firmwareMaintenanceRefs(obj: unknown): RefLike[] {
  const spec = (obj as { spec?: Record<string, unknown> } | undefined)?.spec;
  if (!spec) return [];
  const refs: RefLike[] = [];
  const single = spec.serverMaintenanceRef as RefLike | undefined;
  if (single?.name) refs.push(single);
  const list = Array.isArray(spec.serverMaintenanceRefs) ? (spec.serverMaintenanceRefs as unknown[]) : [];
  for (const item of list) {
    const x = item as RefLike & { serverMaintenanceRef?: RefLike };
    const ref = x?.serverMaintenanceRef ?? x;
    if (ref?.name) refs.push(ref);
  }
  return refs;
}

const FIRMWARE_RESOURCES: Record<string, readonly string[]> = {
  [SYSTEM_GROUP]: ['biossettings', 'biosversions'],
  [BASEBOARD_GROUP]: ['bmcsettings', 'bmcversions'],
};

function firmwareRule({ request, world }: RuleInput): Decision {
  if (request.operation !== 'UPDATE' && request.operation !== 'DELETE') return allow();
  const { object, oldObject } = objects<KubeObject & { spec?: unknown }>(request);
  if (request.operation === 'UPDATE' && jsonEqual(object?.spec, oldObject?.spec)) return allow();
  const running = firmwareMaintenanceRefs(oldObject)
    .map((ref) => world.getMaintenance(ref.namespace ?? oldObject?.metadata.namespace ?? '', ref.name ?? ''))
    .find((m) => m?.status?.state === 'InMaintenance');
  if (!running) return allow();
  // A pipeline run's child: the run holds one maintenance per server across all its stages, and
  // settles, re-activates or removes a child only between attempts (docs/pipeline.md). A child in
  // flight stays frozen like any other.
  const oldState = (oldObject as { status?: { state?: string } } | undefined)?.status?.state;
  if (oldObject?.metadata.labels?.[PIPELINE_RUN_LABEL] && oldState !== 'InProgress') return allow();
  const verb = request.operation === 'DELETE' ? 'deleted' : 'changed';
  const hatch = request.operation === 'DELETE' ? 'allow-in-progress-delete' : 'allow-in-progress-update';
  const what = `${request.kind.kind} ${qualified(request.namespace, request.name ?? oldObject?.metadata.name)}`;
  const mName = qualified(running.metadata.namespace, running.metadata.name);
  const annotations = { ...oldObject?.metadata.annotations, ...object?.metadata.annotations };
  if (annotations[OPERATION_ANNOTATION] === hatch) {
    return allow([
      `${what} ${verb} while maintenance ${mName} is InMaintenance (${OPERATION_ANNOTATION}: ${hatch})`,
    ]);
  }
  return deny(
    Codes.FIRMWARE_LOCKED,
    `${what} can't be ${verb} while its maintenance ${mName} is InMaintenance`,
  );
}

export function contract(input: RuleInput): Decision {
  const { request } = input;
  if (request.operation === 'DELETE' && !FIRMWARE_RESOURCES[request.resource.group]) return deletion(input);
  if (isResource(request, METAL_GROUP, 'serverclaims')) return claimSpecRules(input);
  if (isResource(request, METAL_GROUP, 'serverclaims', 'status')) return announcementWriters(input);
  if (isResource(request, MAINTENANCE_GROUP, 'servermaintenances')) return maintenanceRequestRule(input);
  if (isResource(request, MAINTENANCE_GROUP, 'servermaintenances', 'status'))
    return maintenanceStatusWriters(input);
  if (isResource(request, MAINTENANCE_GROUP, 'serverboots')) return serverBootRule(input);
  if (FIRMWARE_RESOURCES[request.resource.group]?.includes(request.resource.resource) && !request.subResource)
    return firmwareRule(input);
  return allow();
}
