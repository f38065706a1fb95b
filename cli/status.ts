// `kubectl metal status`: the fleet's maintenance at a glance. Pure: objects in, rows out.
import type { Server } from '../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import { age } from './output.js';

export interface FleetObjects {
  servers: readonly Server[];
  claims: readonly ServerClaim[];
  maintenances: readonly ServerMaintenance[];
  serverBudgets: readonly ServerDisruptionBudget[];
  claimBudgets: readonly ServerClaimDisruptionBudget[];
}

export const MAINTENANCE_HEAD = [
  'NAMESPACE',
  'NAME',
  'SERVER',
  'STATE',
  'REASON',
  'CLASS',
  'CLAIM',
  'APPROVAL',
  'WAITING',
  'AGE',
];
export const BUDGET_HEAD = [
  'KIND',
  'NAME',
  'MAX',
  'TOPOLOGY',
  'EXPECTED',
  'UNAVAILABLE',
  'ALLOWED',
  'GRANTS',
  'PAUSED',
];

/** Order of states in the table: what needs attention first. */
const STATE_ORDER = ['Failed', 'InMaintenance', 'Approved', 'Announced', 'Pending', 'Completed'];

/** Why a maintenance is not moving, from the first False condition (e.g. Admitted=False BudgetExhausted). */
export function waitingReason(m: ServerMaintenance): string {
  const blocked = (m.status?.conditions ?? []).find((c) => c.status === 'False' && c.type !== 'Ready');
  if (m.status?.state === 'Failed')
    return (m.status.conditions ?? []).find((c) => c.type === 'Failed')?.reason ?? 'Failed';
  return blocked?.reason ?? '';
}

export function maintenanceRows(o: FleetObjects, now = Date.now()): string[][] {
  const servers = new Map(o.servers.map((s) => [s.metadata.name, s]));
  const rank = (m: ServerMaintenance) => {
    const i = STATE_ORDER.indexOf(m.status?.state ?? 'Pending');
    return i < 0 ? STATE_ORDER.length : i;
  };
  return [...o.maintenances]
    .sort((a, b) => rank(a) - rank(b) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))
    .map((m) => {
      const ref = servers.get(m.spec.serverRef.name)?.spec.serverClaimRef;
      return [
        m.metadata.namespace ?? '',
        m.metadata.name ?? '',
        m.spec.serverRef.name,
        m.metadata.deletionTimestamp ? 'Completing' : (m.status?.state ?? 'Pending'),
        m.spec.reason ?? 'Other',
        m.spec.class ?? 'Planned',
        ref ? `${ref.namespace}/${ref.name}` : '-',
        m.status?.approval?.source ?? '-',
        waitingReason(m) || '-',
        age(m.metadata.creationTimestamp, now),
      ];
    });
}

type Budget = (ServerDisruptionBudget | ServerClaimDisruptionBudget) & { kind?: string };

export function budgetRows(o: FleetObjects): string[][] {
  const row = (kind: string, b: Budget, topology: string) => [
    kind,
    b.metadata.namespace ? `${b.metadata.namespace}/${b.metadata.name}` : (b.metadata.name ?? ''),
    String(b.spec.maxUnavailable),
    topology,
    String(b.status?.expected ?? '-'),
    String(b.status?.unavailable ?? '-'),
    String(b.status?.disruptionsAllowed ?? '-'),
    String(b.status?.grants?.length ?? 0),
    b.spec.paused ? 'yes' : 'no',
  ];
  return [
    ...o.serverBudgets.map((b) => row('ServerDisruptionBudget', b, b.spec.topologyKey ?? '-')),
    ...o.claimBudgets.map((b) => row('ServerClaimDisruptionBudget', b, '-')),
  ];
}

export interface FleetSummary {
  servers: number;
  claimed: number;
  cordoned: number;
  parked: number;
  inMaintenance: number;
  maintenancesByState: Record<string, number>;
  claimsAwaitingApproval: number;
}

export function fleetSummary(o: FleetObjects): FleetSummary {
  const byState: Record<string, number> = {};
  for (const m of o.maintenances) {
    const s = m.status?.state ?? 'Pending';
    byState[s] = (byState[s] ?? 0) + 1;
  }
  const awaiting = o.claims.filter((c) => {
    const approved = new Set((c.spec.maintenance?.approvals ?? []).map((a) => a.maintenanceUID));
    return (c.status?.maintenance?.announcements ?? []).some(
      (a) => a.state === 'Announced' && !approved.has(a.maintenanceUID),
    );
  }).length;
  return {
    servers: o.servers.length,
    claimed: o.servers.filter((s) => s.spec.serverClaimRef).length,
    cordoned: o.servers.filter((s) => s.spec.unclaimable === true).length,
    parked: o.servers.filter((s) => s.status?.state === 'Parked').length,
    inMaintenance: o.servers.filter((s) => s.status?.maintenance?.state === 'InMaintenance').length,
    maintenancesByState: byState,
    claimsAwaitingApproval: awaiting,
  };
}

export function summaryLine(s: FleetSummary): string {
  const states = Object.entries(s.maintenancesByState)
    .sort(([a], [b]) => STATE_ORDER.indexOf(a) - STATE_ORDER.indexOf(b))
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');
  const total = Object.values(s.maintenancesByState).reduce((a, b) => a + b, 0);
  return (
    `${s.servers} servers: ${s.claimed} claimed, ${s.cordoned} cordoned, ${s.parked} parked, ${s.inMaintenance} in maintenance. ` +
    `${total} maintenance(s)${states ? `: ${states}` : ''}. ${s.claimsAwaitingApproval} claim(s) awaiting approval.`
  );
}
