// Announcements: what a claim's status tells its tenant about the maintenances of its server (written
// by the approval controller, read by the webhook's approval and timing checks).
import type { Announcement, ServerClaim } from '../api/metal/v1alpha1/serverclaim.js';

/** The announcement of a maintenance on a claim, by maintenance uid. */
export function announcementOf(
  claim: ServerClaim | undefined,
  maintenanceUID: string,
): Announcement | undefined {
  return claim?.status?.maintenance?.announcements?.find((a) => a.maintenanceUID === maintenanceUID);
}
