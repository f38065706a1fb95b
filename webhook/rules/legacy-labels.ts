// The legacy approval label metal.ironcore.dev/maintenance-approved on a ServerClaim, per policy:
// translate (the mutating path turns it into typed approvals of what is announced), warn, or deny.
// Only a write that sets the label counts; a label that merely stays on the claim is left alone.
import { METAL_GROUP } from '../../api/metal/v1alpha1/group.js';
import type { MaintenanceApproval, ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import { Codes } from '../../contract/codes.js';
import { allow, deny, type Decision } from '../../contract/denial.js';
import { isResource, objects, type RuleInput } from './common.js';

export const LEGACY_APPROVED_LABEL = 'metal.ironcore.dev/maintenance-approved';

/** Whether this write sets the legacy approval label to "true". */
export function setsLegacyApproval(claim: ServerClaim | undefined, old: ServerClaim | undefined): boolean {
  return (
    claim?.metadata.labels?.[LEGACY_APPROVED_LABEL] === 'true' &&
    old?.metadata.labels?.[LEGACY_APPROVED_LABEL] !== 'true'
  );
}

/** Approvals the label stands for: every maintenance announced to the claim and not yet approved. */
export function translatedApprovals(claim: ServerClaim, old: ServerClaim | undefined): MaintenanceApproval[] {
  const approved = new Set((claim.spec.maintenance?.approvals ?? []).map((a) => a.maintenanceUID));
  return (old?.status?.maintenance?.announcements ?? [])
    .filter((a) => !approved.has(a.maintenanceUID))
    .map((a) => ({ maintenanceUID: a.maintenanceUID, maintenanceName: a.maintenanceName }));
}

export function legacyLabels({ request, policy }: RuleInput): Decision {
  if (!isResource(request, METAL_GROUP, 'serverclaims')) return allow();
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow();
  const { object, oldObject } = objects<ServerClaim>(request);
  if (!setsLegacyApproval(object, oldObject)) return allow();
  const use = 'use spec.maintenance.approvals (scoped to a maintenance uid) instead';
  switch (policy.legacyLabels.mode) {
    case 'deny':
      return deny(Codes.LEGACY_LABEL_DENIED, `label ${LEGACY_APPROVED_LABEL} is no longer accepted; ${use}`);
    case 'warn':
      return allow([`label ${LEGACY_APPROVED_LABEL} is deprecated and has no effect; ${use}`]);
    default:
      return allow([
        `label ${LEGACY_APPROVED_LABEL} is deprecated; it was translated into typed approvals of the announced maintenances; ${use}`,
      ]);
  }
}
