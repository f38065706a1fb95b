// Act 3's cast, chosen from the seeded fleet: which claim's server gets which maintenance, and how each
// is expected to be approved. Pure, so the choice is tested for every tenant count the demo accepts.
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { FleetPlan } from '../sim/fleet/fleet.js';
import type { ScenarioRow } from './report.js';

/** The tenant whose claims approve standing (Automatic); every other tenant approves by hand. */
export const STANDING_TENANT = 1;

/** Act 3 needs a hand-approving tenant, the standing one, and a third claim of a hand-approving one. */
export const ANNOUNCE_MIN_TENANTS = 2;
export const ANNOUNCE_MIN_CLAIMS = 3;

export interface AnnouncedMaintenance {
  row: ScenarioRow;
  server: string;
  spec: Partial<ServerMaintenance['spec']>;
}

const FIRMWARE = {
  reason: 'FirmwareUpdate' as const,
  class: 'Urgent' as const,
  description: 'BMC firmware 7.10 (CVE fixes)',
};

/**
 * Seeded claims go round-robin over the tenants (fleet.ts), so claim i belongs to tenant i mod n:
 * claims 0 and 1 are the first of tenants 0 (by hand) and 1 (standing); claim 2 is tenant 2's first,
 * or with two tenants tenant 0's second. Never the same claim twice, so never one server twice.
 */
export function announcePlan(
  plan: Pick<FleetPlan, 'claims'>,
  orphan: ServerClaim,
  cordoned: string,
): AnnouncedMaintenance[] {
  const seeded = (i: number): string => {
    const claim = plan.claims[i];
    if (!claim?.spec.serverRef)
      throw new Error(`act 3 needs ${ANNOUNCE_MIN_CLAIMS} seeded claims with a server; claim ${i} has none`);
    return claim.spec.serverRef.name;
  };
  const [owner, standing, silent] = [seeded(0), seeded(1), seeded(2)];
  const orphaned = orphan.spec.serverRef!.name;
  const row = (label: string, expect: ScenarioRow['expect'], says: string): ScenarioRow => ({
    key: '',
    label,
    expect,
    says,
  });
  return [
    { row: row(`fw-${owner}`, 'Owner', 'approves by hand'), server: owner, spec: FIRMWARE },
    { row: row(`fw-${standing}`, 'Standing', 'Automatic (standing)'), server: standing, spec: FIRMWARE },
    { row: row(`fw-${orphaned}`, 'Policy', 'nobody (no consumer)'), server: orphaned, spec: FIRMWARE },
    { row: row(`fw-${silent}`, 'Deadline', 'never answers'), server: silent, spec: FIRMWARE },
    {
      row: row(`diag-${cordoned}`, 'NotRequired', 'unclaimed, cordoned'),
      server: cordoned,
      spec: { reason: 'Diagnostics', class: 'Urgent' },
    },
  ];
}
