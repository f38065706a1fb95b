// The labels metal-maintenance-operator used, kept for the migration window: the approval label a
// tenant sets on a ServerClaim (translated, warned about or denied, per policy legacyLabels.mode) and
// the maintenance-needed label the approval controller mirrors onto claims. Only a write that sets the
// approval label counts; a label that merely stays on the claim is left alone.
import type { MaintenanceApproval, ServerClaim } from '../api/metal/v1alpha1/serverclaim.js';

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

/** Legacy label mirrored onto claims while the legacy window is open (cloud-controller-manager reads it). */
export const LEGACY_NEEDED_LABEL = 'metal.ironcore.dev/maintenance-needed';
