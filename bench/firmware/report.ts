// The benchmark's policy and the figures it derives from what the watch recorded.
import type { MaintenanceRecord } from '../../e2e/demo/watch.js';
import { formatPolicyErrors, mergeOntoDefaults, validatePolicy } from '../../policies/validate.js';

/** The Sets' counters the benchmark reads (both kinds' names). */
export interface SetStatus {
  completedBIOSVersion?: number;
  failedBIOSVersion?: number;
  availableBIOSVersion?: number;
  completedBMCVersion?: number;
  failedBMCVersion?: number;
  availableBMCVersion?: number;
}

/**
 * No approval, windows or notice in the way (the budgets alone pace the rollout), firmware phase
 * timeouts far above a flash of `flashMs`. `admission` is how long a BMC's gang admitted in part may
 * wait for the rest before it releases all and tries again (`attempts` times): the only way out of
 * every slot held by waiting gangs, since each server is admitted on its own.
 */
export function benchPolicy(
  flashMs: number,
  gang: { admission: string; attempts: number },
): Record<string, unknown> {
  const doc = mergeOntoDefaults({
    apiVersion: 'policy.maintenance.metal.ironcore.dev/v1alpha1',
    kind: 'MaintenancePolicy',
    classes: {
      Planned: { approvalRequired: false, deadline: '24h', minNotice: '0s', requireWindow: false },
      Urgent: { approvalRequired: false, deadline: '24h', minNotice: '0s', requireWindow: false },
      Emergency: { approvalRequired: false, deadline: '24h', minNotice: '0s', requireWindow: false },
    },
    windows: [],
    grants: { ttl: '60s', ledgerCap: 2000 },
    timeouts: { approval: '1h', park: '60s', inMaintenance: '2h', bootPhase: '60s' },
    firmware: {
      class: 'Planned',
      defaultMaxAttempts: gang.attempts,
      retryBackoff: '2s',
      retryBackoffMax: '10s',
      timeouts: {
        admission: gang.admission,
        issue: '2m',
        task: `${Math.ceil((flashMs * 5) / 1000) + 60}s`,
        reboot: '2m',
        verify: '2m',
      },
    },
  }) as Record<string, unknown>;
  const v = validatePolicy(doc);
  if (!v.ok) throw new Error(`bench policy: ${formatPolicyErrors(v.errors)}`);
  return doc;
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))] ?? NaN;
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/**
 * Where a slot's time goes: how long each maintenance held its server beyond the flash T (admission
 * to the BMC, issue, reset, verify, release), how long a BMC gang's first servers held while its
 * last were still waiting, and the share of K·makespan no server held. Pure.
 */
export function holdSummary(
  records: readonly MaintenanceRecord[],
  flashMs: number,
  budget: number,
  makespanMs: number,
): { lines: string[]; json: Record<string, number> } {
  const held = records.filter((r) => r.inMaintenanceAt !== undefined && r.deletedAt !== undefined);
  const hold = held.map((r) => r.deletedAt! - r.inMaintenanceAt!);
  const beyond = hold.map((h) => h - flashMs);
  const waitToAdmit = held.map((r) => r.inMaintenanceAt! - r.createdAt);
  const occupied = hold.reduce((a, b) => a + b, 0);
  const idleShare = 1 - occupied / (budget * makespanMs);
  const json = {
    maintenances: held.length,
    hold_mean_s: Math.round(mean(hold) / 10) / 100,
    beyond_flash_p50_s: Math.round(quantile(beyond, 0.5) / 10) / 100,
    beyond_flash_p90_s: Math.round(quantile(beyond, 0.9) / 10) / 100,
    beyond_flash_max_s: Math.round(quantile(beyond, 1) / 10) / 100,
    idle_slot_share: Math.round(idleShare * 1000) / 1000,
  };
  return {
    json,
    lines: [
      `${held.length} maintenances held their server ${s(mean(hold))} mean for a ${s(flashMs)} flash`,
      `beyond the flash: ${s(quantile(beyond, 0.5))} p50, ${s(quantile(beyond, 0.9))} p90, ${s(quantile(beyond, 1))} max (spread over the rollout)`,
      `created -> InMaintenance: ${s(quantile(waitToAdmit, 0.5))} p50, ${s(quantile(waitToAdmit, 1))} max`,
      `slot time no maintenance held: ${(idleShare * 100).toFixed(1)} % of K x makespan`,
    ],
  };
}

/** A maintenance as the gang diagnosis reads it. */
export interface GangMember {
  /** The requesting object (a BMCVersion's maintenances share it). */
  owner: string | undefined;
  /** Its request is for BMC-scoped work (every server behind one BMC). */
  bmcScoped: boolean;
  inMaintenance: boolean;
}

/**
 * BMC gangs admitted in part: their admitted members hold budget slots while they wait for the rest,
 * which is how a rollout of BMC updates under a budget can stop for good (every slot held by a
 * waiting gang). Pure.
 */
export function partialGangs(ms: readonly GangMember[]): { gangs: number; slotsHeld: number } {
  const by = new Map<string, { n: number; admitted: number }>();
  for (const m of ms) {
    if (!m.bmcScoped || m.owner === undefined) continue;
    const g = by.get(m.owner) ?? { n: 0, admitted: 0 };
    g.n++;
    if (m.inMaintenance) g.admitted++;
    by.set(m.owner, g);
  }
  let gangs = 0;
  let slotsHeld = 0;
  for (const g of by.values())
    if (g.admitted > 0 && g.admitted < g.n) {
      gangs++;
      slotsHeld += g.admitted;
    }
  return { gangs, slotsHeld };
}

export interface SlotAccount {
  /** Server-seconds held by BIOS maintenances and by BMC gangs once all their servers were in. */
  working_s: number;
  /** Of those, beyond the flash itself (admission to issue, reset, verify, release). */
  beyond_flash_s: number;
  /** Held by a gang's first servers while its last were not yet in (and it then flashed). */
  gang_wait_s: number;
  /** Held by gangs that never got all their servers and released them (the admission timeout). */
  gang_released_s: number;
  /** Slot time no maintenance held: K x makespan minus all of the above. */
  idle_s: number;
}

/**
 * Every slot-second of the rollout, accounted to the work or the wait that held it. A BMC gang is
 * the maintenances of one BMCVersion attempt: names `bmcv-<object>-<server>-<uid>-<attempt>`, so
 * the name without its server names the gang (a name hashed past 63 characters is a gang of one).
 * Pure.
 */
export function slotAccount(
  records: readonly MaintenanceRecord[],
  flashMs: number,
  budget: number,
  makespanMs: number,
): SlotAccount {
  const gangs = new Map<string, MaintenanceRecord[]>();
  let working = 0;
  let beyond = 0;
  const work = (fromMs: number, toMs: number) => {
    working += toMs - fromMs;
    beyond += toMs - fromMs - flashMs;
  };
  for (const r of records) {
    const name = r.key.slice(r.key.indexOf('/') + 1);
    if (!name.startsWith('bmcv-')) {
      if (r.inMaintenanceAt !== undefined && r.deletedAt !== undefined) work(r.inMaintenanceAt, r.deletedAt);
      continue;
    }
    const gang = name.replace(`-${r.server}-`, '-');
    gangs.set(gang, [...(gangs.get(gang) ?? []), r]);
  }
  let wait = 0;
  let released = 0;
  for (const members of gangs.values()) {
    const held = members.filter((r) => r.inMaintenanceAt !== undefined && r.deletedAt !== undefined);
    if (held.length < members.length) {
      released += held.reduce((a, r) => a + r.deletedAt! - r.inMaintenanceAt!, 0);
      continue;
    }
    const allIn = Math.max(...held.map((r) => r.inMaintenanceAt!));
    for (const r of held) {
      wait += allIn - r.inMaintenanceAt!;
      work(allIn, r.deletedAt!);
    }
  }
  const total = budget * makespanMs;
  const s = (ms: number) => Math.round(ms / 100) / 10;
  return {
    working_s: s(working),
    beyond_flash_s: s(beyond),
    gang_wait_s: s(wait),
    gang_released_s: s(released),
    idle_s: s(total - working - wait - released),
  };
}
