// What a claim owner says about maintenance, through `kubectl metal approve|defer`: pure edits of
// ServerClaim.spec.maintenance. The admission webhook checks the same rules (an approval names an
// announced uid; a deferral stays within the deadline) and stamps who and when; checking here too
// gives the user a precise message before any request.
import type { Announcement, ServerClaim } from '../api/metal/v1alpha1/serverclaim.js';
import { MetalError } from '../lib/errors.js';
import { parseDuration } from '../policies/validate.js';

export const CliErrors = {
  NOT_ANNOUNCED: 'METAL_ERR_CLI_NOT_ANNOUNCED',
  NOTHING_TO_APPROVE: 'METAL_ERR_CLI_NOTHING_TO_APPROVE',
  BAD_TIME: 'METAL_ERR_CLI_BAD_TIME',
  DEFER_PAST_DEADLINE: 'METAL_ERR_CLI_DEFER_PAST_DEADLINE',
  USAGE: 'METAL_ERR_CLI_USAGE',
} as const;

function announcements(claim: ServerClaim): Announcement[] {
  return claim.status?.maintenance?.announcements ?? [];
}

function approvedUIDs(claim: ServerClaim): Set<string> {
  return new Set((claim.spec.maintenance?.approvals ?? []).map((a) => a.maintenanceUID));
}

const claimId = (c: ServerClaim) => `${c.metadata.namespace}/${c.metadata.name}`;

/** An announcement by maintenance name, namespace/name or uid. */
export function findAnnouncement(claim: ServerClaim, ref: string): Announcement {
  const hit = announcements(claim).find(
    (a) =>
      a.maintenanceUID === ref ||
      a.maintenanceName === ref ||
      `${a.maintenanceNamespace}/${a.maintenanceName}` === ref,
  );
  if (hit) return hit;
  const known = announcements(claim).map((a) => `${a.maintenanceNamespace}/${a.maintenanceName}`);
  throw new MetalError(
    CliErrors.NOT_ANNOUNCED,
    `maintenance ${ref} is not announced to claim ${claimId(claim)}` +
      (known.length ? ` (announced: ${known.join(', ')})` : ' (nothing is announced to it)'),
  );
}

/** What `approve` approves: the named announcements, or with `all` every one not yet approved. */
export function selectToApprove(claim: ServerClaim, refs: readonly string[], all: boolean): Announcement[] {
  if (refs.length > 0 && all)
    throw new MetalError(CliErrors.USAGE, 'name maintenances or give --all, not both');
  if (refs.length === 0 && !all)
    throw new MetalError(CliErrors.USAGE, 'name at least one maintenance, or give --all');
  const approved = approvedUIDs(claim);
  const picked = all
    ? announcements(claim).filter((a) => !approved.has(a.maintenanceUID))
    : refs.map((r) => findAnnouncement(claim, r));
  if (all && picked.length === 0)
    throw new MetalError(
      CliErrors.NOTHING_TO_APPROVE,
      `claim ${claimId(claim)} has no announced maintenance awaiting approval`,
    );
  return picked;
}

/**
 * The claim with approvals of these announcements (scoped to their uids). An approval lifts the
 * owner's own deferral of the same maintenance, since a deferral would otherwise win. Undefined
 * when nothing changes.
 */
export function withApprovals(claim: ServerClaim, picked: readonly Announcement[]): ServerClaim | undefined {
  const next = structuredClone(claim);
  const m = (next.spec.maintenance ??= {});
  const approvals = (m.approvals ??= []);
  const uids = new Set(picked.map((a) => a.maintenanceUID));
  let changed = false;
  for (const a of picked) {
    if (approvals.some((x) => x.maintenanceUID === a.maintenanceUID)) continue;
    approvals.push({ maintenanceUID: a.maintenanceUID, maintenanceName: a.maintenanceName });
    changed = true;
  }
  const before = m.deferrals?.length ?? 0;
  if (m.deferrals) m.deferrals = m.deferrals.filter((d) => !uids.has(d.maintenanceUID));
  if ((m.deferrals?.length ?? 0) !== before) changed = true;
  if (m.deferrals?.length === 0) delete m.deferrals;
  return changed ? next : undefined;
}

/** `--until`: an RFC 3339 time, or a duration from now ("90m", "2h"). */
export function parseUntil(text: string, now: Date): Date {
  const ms = parseDuration(text);
  if (ms !== undefined) return new Date(now.getTime() + ms);
  const t = Date.parse(text);
  if (Number.isNaN(t) || !/^\d{4}-\d{2}-\d{2}T/.test(text))
    throw new MetalError(
      CliErrors.BAD_TIME,
      `--until ${text}: give an RFC 3339 time (2026-09-01T22:00:00Z) or a duration (90m, 2h)`,
    );
  return new Date(t);
}

/** RFC 3339 in whole seconds, as Kubernetes writes metav1.Time. */
export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The claim with a deferral of one announced maintenance until `until` (replacing an earlier one). */
export function withDeferral(
  claim: ServerClaim,
  a: Announcement,
  until: Date,
  now: Date,
  reason?: string,
): ServerClaim {
  if (until.getTime() <= now.getTime())
    throw new MetalError(CliErrors.BAD_TIME, `--until ${rfc3339(until)} is not in the future`);
  if (a.deadline && until.getTime() > Date.parse(a.deadline))
    throw new MetalError(
      CliErrors.DEFER_PAST_DEADLINE,
      `cannot defer ${a.maintenanceName} until ${rfc3339(until)}: its deadline is ${a.deadline}, after which it proceeds without approval`,
    );
  const next = structuredClone(claim);
  const m = (next.spec.maintenance ??= {});
  const rest = (m.deferrals ?? []).filter((d) => d.maintenanceUID !== a.maintenanceUID);
  m.deferrals = [
    ...rest,
    { maintenanceUID: a.maintenanceUID, until: rfc3339(until), ...(reason ? { reason } : {}) },
  ];
  return next;
}

/** Server cordon (IEP-22): the server with spec.unclaimable set as asked; undefined when already so. */
export function withUnclaimable<S extends { spec: { unclaimable?: boolean } }>(
  server: S,
  unclaimable: boolean,
): S | undefined {
  if ((server.spec.unclaimable ?? false) === unclaimable) return undefined;
  const next = structuredClone(server);
  next.spec.unclaimable = unclaimable;
  return next;
}
