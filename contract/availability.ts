// Server availability and topology domains: which servers already count as unavailable to every
// budget, and which domain of a budget a server falls in. The webhook's census, the budget
// controller's status and the maintenance controller's hold-back all count with these.
import type { Server } from '../api/metal/v1alpha1/server.js';
import type { BMC } from '../api/metal/v1alpha1/bmc.js';

export type UnavailableReason = 'Error' | 'Parked' | 'Cordoned' | 'BMCUnreachable' | 'InMaintenance';

/** Why a server already counts as unavailable to every budget, or undefined when it is available. */
export function serverUnavailableReason(server: Server, bmc?: BMC): UnavailableReason | undefined {
  const state = server.status?.state;
  if (state === 'Error') return 'Error';
  if (state === 'Parked') return 'Parked';
  if (state === 'Maintenance' || server.status?.maintenance?.state === 'InMaintenance')
    return 'InMaintenance';
  if (server.spec.unclaimable === true) return 'Cordoned';
  if (bmc && isBMCUnreachable(bmc)) return 'BMCUnreachable';
  return undefined;
}

export function isBMCUnreachable(bmc: BMC): boolean {
  if (bmc.status?.state === 'Error') return true;
  return (bmc.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'False');
}

/** The topology domain of a server for a budget: its topologyKey label value ("" when none). */
export function domainOf(server: Pick<Server, 'metadata'>, topologyKey: string | undefined): string {
  return topologyKey ? (server.metadata.labels?.[topologyKey] ?? '') : '';
}
