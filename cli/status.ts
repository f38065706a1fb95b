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

/**
 * Condition types by how well they say why a maintenance waits. Admitted is the maintenance
 * controller's answer to "why not now" (NotBefore, BudgetExhausted, OutsideWindow, ...); Approved and
 * Announced are the owner's side. An unclaimed server's Announced=False Unclaimed is no wait at all:
 * nobody has to be told, so it never hides the real reason.
 */
const WAIT_CONDITIONS = ['Admitted', 'Approved', 'Announced'];
const NOT_A_WAIT = new Set(['Announced/Unclaimed']);

/** Why a maintenance is not moving, from its conditions (e.g. Admitted=False NotBefore). */
export function waitingReason(m: ServerMaintenance): string {
  const conditions = m.status?.conditions ?? [];
  if (m.status?.state === 'Failed') return conditions.find((c) => c.type === 'Failed')?.reason ?? 'Failed';
  const waits = conditions.filter(
    (c) => c.status === 'False' && c.type !== 'Ready' && !NOT_A_WAIT.has(`${c.type}/${c.reason}`),
  );
  const rank = (type: string) => {
    const i = WAIT_CONDITIONS.indexOf(type);
    return i < 0 ? WAIT_CONDITIONS.length : i;
  };
  return [...waits].sort((a, b) => rank(a.type) - rank(b.type))[0]?.reason ?? '';
}

/** The claim holding a server: the server's claimRef, else a listed claim whose serverRef names it. */
function claimOf(o: FleetObjects, server: string, servers: Map<string | undefined, Server>): string {
  const ref = servers.get(server)?.spec.serverClaimRef;
  if (ref) return `${ref.namespace}/${ref.name}`;
  const c = o.claims.find((x) => x.spec.serverRef?.name === server);
  return c ? `${c.metadata.namespace}/${c.metadata.name}` : '-';
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
      return [
        m.metadata.namespace ?? '',
        m.metadata.name ?? '',
        m.spec.serverRef.name,
        m.metadata.deletionTimestamp ? 'Completing' : (m.status?.state ?? 'Pending'),
        m.spec.reason ?? 'Other',
        m.spec.class ?? 'Planned',
        claimOf(o, m.spec.serverRef.name, servers),
        m.status?.approval?.source ?? '-',
        waitingReason(m) || '-',
        age(m.metadata.creationTimestamp, now),
      ];
    });
}

type Budget = (ServerDisruptionBudget | ServerClaimDisruptionBudget) & { kind?: string };

/**
 * One row per budget and topology domain: a budget with a topologyKey limits each domain on its own,
 * so its counters are shown per domain (TOPOLOGY `rack=r1`), never summed over domains. A budget
 * whose status has no domains yet shows its totals.
 */
export function budgetRows(o: FleetObjects): string[][] {
  const row = (
    kind: string,
    b: Budget,
    topology: string,
    n: { e?: number; u?: number; a?: number; g?: number },
  ) => [
    kind,
    b.metadata.namespace ? `${b.metadata.namespace}/${b.metadata.name}` : (b.metadata.name ?? ''),
    String(b.spec.maxUnavailable),
    topology,
    String(n.e ?? '-'),
    String(n.u ?? '-'),
    String(n.a ?? '-'),
    String(n.g ?? 0),
    b.spec.paused ? 'yes' : 'no',
  ];
  const rows = (kind: string, b: Budget, key: string | undefined) => {
    const totals = {
      e: b.status?.expected,
      u: b.status?.unavailable,
      a: b.status?.disruptionsAllowed,
      g: b.status?.grants?.length ?? 0,
    };
    const domains = key ? (b.status?.domains ?? []) : [];
    if (domains.length === 0) return [row(kind, b, key ?? '-', totals)];
    const granted = (d: string) => (b.status?.grants ?? []).filter((g) => (g.domain ?? '') === d).length;
    return [...domains]
      .sort((x, y) => x.name.localeCompare(y.name))
      .map((d) =>
        row(kind, b, `${key}=${d.name || '(none)'}`, {
          e: d.expected,
          u: d.unavailable,
          a: d.allowed,
          g: granted(d.name),
        }),
      );
  };
  return [
    ...o.serverBudgets.flatMap((b) => rows('ServerDisruptionBudget', b, b.spec.topologyKey)),
    ...o.claimBudgets.flatMap((b) => rows('ServerClaimDisruptionBudget', b, undefined)),
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

export function summaryLine(s: FleetSummary, o: { serversHidden?: boolean } = {}): string {
  const states = Object.entries(s.maintenancesByState)
    .sort(([a], [b]) => STATE_ORDER.indexOf(a) - STATE_ORDER.indexOf(b))
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');
  const total = Object.values(s.maintenancesByState).reduce((a, b) => a + b, 0);
  const fleet = o.serversHidden
    ? 'Servers hidden (not allowed to list them). '
    : `${s.servers} servers: ${s.claimed} claimed, ${s.cordoned} cordoned, ${s.parked} parked, ${s.inMaintenance} in maintenance. `;
  return (
    fleet +
    `${total} maintenance(s)${states ? `: ${states}` : ''}. ${s.claimsAwaitingApproval} claim(s) awaiting approval.`
  );
}
