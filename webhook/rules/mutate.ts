// The mutating path. ServerClaim: translate the legacy approval label (policy mode translate), then
// stamp approvedBy/approvedAt and requestedBy/requestedAt from the request's userInfo on entries that are
// new or changed in this write, overwriting whatever the client sent; unchanged entries keep their stored
// stamps (a client cannot rewrite them). ServerMaintenance: translate deprecated spec.policy into
// spec.approval.required and warn. The patch is RFC 6902, computed by fast-json-patch `compare`, which
// escapes "/" and "~" in keys.
import jsonpatch from 'fast-json-patch';
import { MAINTENANCE_GROUP } from '../../api/maintenance/v1alpha1/group.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { METAL_GROUP } from '../../api/metal/v1alpha1/group.js';
import type { ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import { allow, type Decision } from '../../contract/denial.js';
import { isResource, jsonEqual, objects, type RuleInput } from './common.js';
import { withoutStamps } from './contract.js';
import {
  LEGACY_APPROVED_LABEL,
  setsLegacyApproval,
  translatedApprovals,
} from '../../contract/legacy-labels.js';

type Stamped = { maintenanceUID: string } & Record<string, unknown>;

function stampEntries<T extends Stamped>(
  entries: T[] | undefined,
  previous: T[] | undefined,
  byField: string,
  atField: string,
  user: string,
  at: string,
): T[] | undefined {
  if (!entries) return entries;
  const before = new Map((previous ?? []).map((e) => [e.maintenanceUID, e]));
  return entries.map((e) => {
    const old = before.get(e.maintenanceUID);
    const { [byField]: _by, [atField]: _at, ...rest } = e;
    if (old && jsonEqual(withoutStamps(old), withoutStamps(e))) {
      // Unchanged by the owner: keep the stored stamps, whatever the client sent.
      return {
        ...rest,
        ...(old[byField] !== undefined ? { [byField]: old[byField] } : {}),
        ...(old[atField] !== undefined ? { [atField]: old[atField] } : {}),
      } as T;
    }
    return { ...rest, [byField]: user, [atField]: at } as T;
  });
}

/** Adds the approvals the legacy label stands for (translate mode); returns the warning, if any. */
function translateLegacyLabel(
  next: ServerClaim,
  claim: ServerClaim,
  old: ServerClaim | undefined,
  policy: RuleInput['policy'],
): string[] {
  if (policy.legacyLabels.mode !== 'translate' || !setsLegacyApproval(claim, old)) return [];
  const added = translatedApprovals(next, old);
  if (added.length === 0) return [];
  next.spec.maintenance = {
    ...next.spec.maintenance,
    approvals: [...(next.spec.maintenance?.approvals ?? []), ...added],
  };
  return [
    `label ${LEGACY_APPROVED_LABEL} translated into approvals of ${added.map((a) => a.maintenanceName ?? a.maintenanceUID).join(', ')}`,
  ];
}

function stampClaim(next: ServerClaim, old: ServerClaim | undefined, user: string, now: Date): void {
  const m = next.spec.maintenance;
  if (!m) return;
  const at = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const previous = old?.spec?.maintenance;
  const approvals = stampEntries(m.approvals, previous?.approvals, 'approvedBy', 'approvedAt', user, at);
  const deferrals = stampEntries(
    m.deferrals as Stamped[] | undefined,
    previous?.deferrals as Stamped[] | undefined,
    'requestedBy',
    'requestedAt',
    user,
    at,
  );
  if (approvals) m.approvals = approvals;
  if (deferrals) m.deferrals = deferrals as typeof m.deferrals;
}

function mutateClaim({ request, policy, now }: RuleInput): Decision {
  const { object: claim, oldObject: old } = objects<ServerClaim>(request);
  if (!claim) return allow();
  const next = structuredClone(claim);
  const warnings = translateLegacyLabel(next, claim, old, policy);
  stampClaim(next, old, request.userInfo.username ?? '', now);
  const patch = jsonpatch.compare(claim, next);
  return allow(warnings, patch.length > 0 ? patch : undefined);
}

function mutateMaintenance({ request }: RuleInput): Decision {
  const { object: m } = objects<ServerMaintenance>(request);
  const policy = m?.spec?.policy;
  if (!m || !policy) return allow();
  const required = policy === 'OwnerApproval';
  const warnings = [
    `spec.policy is deprecated; use spec.approval.required (${policy} means required: ${required})`,
  ];
  if (m.spec.approval?.required !== undefined) {
    if (m.spec.approval.required !== required)
      warnings.push(
        `spec.approval.required (${m.spec.approval.required}) is set and wins over spec.policy ${policy}`,
      );
    return allow(warnings);
  }
  const next = structuredClone(m);
  next.spec.approval = { ...next.spec.approval, required };
  return allow(warnings, jsonpatch.compare(m, next));
}

export function mutate(input: RuleInput): Decision {
  const { request } = input;
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow();
  if (isResource(request, METAL_GROUP, 'serverclaims')) return mutateClaim(input);
  if (isResource(request, MAINTENANCE_GROUP, 'servermaintenances')) return mutateMaintenance(input);
  return allow();
}
