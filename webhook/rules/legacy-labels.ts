// The webhook's rule for the legacy approval label on a ServerClaim, per policy: translate (the mutating
// path turns it into typed approvals of what is announced), warn, or deny. The label and what it
// stands for are the contract's (contract/legacy-labels.ts).
import { METAL_GROUP } from '../../api/metal/v1alpha1/group.js';
import type { ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import { LEGACY_APPROVED_LABEL, setsLegacyApproval } from '../../contract/legacy-labels.js';
import { Codes } from '../../contract/codes.js';
import { allow, deny, type Decision } from '../../contract/denial.js';
import { isResource, objects, type RuleInput } from './common.js';

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
