// WorldView: the read-only port through which rules see the cluster. The wiring step implements it over
// informer caches with secondary indexes (memory-world.ts is the reference implementation over plain
// arrays). Every method is synchronous and answers from an index: no method lists a whole kind.
import type { Server } from '../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import type { KubeObject } from '../api/schema/meta.js';

/**
 * What a budget covers in one domain, from the caches: how many servers (or claimed servers, for a claim
 * budget) it selects, and which of them are unavailable for a reason other than a budget grant.
 */
export interface BudgetCensus {
  expected: number;
  /** Names of selected servers that are unavailable already (see contract/availability.ts). */
  unavailable: readonly string[];
  /**
   * The same names as a set, when the WorldView keeps one: checkRoom then needs no per-request set of
   * a census that, for a fleet-wide budget, can list hundreds of servers.
   */
  unavailableSet?: ReadonlySet<string>;
}

export interface WorldView {
  getServer(name: string): Server | undefined;
  getClaim(namespace: string, name: string): ServerClaim | undefined;
  getMaintenance(namespace: string, name: string): ServerMaintenance | undefined;
  /** Index: claims whose spec.serverRef names the server. */
  claimsByServer(server: string): readonly ServerClaim[];
  /** Index: ServerMaintenances (any namespace) whose spec.serverRef names the server. */
  maintenancesByServer(server: string): readonly ServerMaintenance[];
  /** Index: ServerMaintenances of the namespace whose spec.gang names the gang. */
  maintenancesByGang(namespace: string, gang: string): readonly ServerMaintenance[];
  /** Index: ServerDisruptionBudgets whose serverSelector selects the server. */
  serverBudgetsFor(server: string): readonly ServerDisruptionBudget[];
  /** Index: ServerClaimDisruptionBudgets in the claim's namespace whose claimSelector selects the claim. */
  claimBudgetsFor(namespace: string, claim: string): readonly ServerClaimDisruptionBudget[];
  /** Census of a ServerDisruptionBudget in one topology domain ("" when it has no topologyKey). */
  serverBudgetCensus(budget: string, domain: string): BudgetCensus;
  /** Census of a ServerClaimDisruptionBudget: the bound claims it selects, counted by their servers. */
  claimBudgetCensus(namespace: string, budget: string): BudgetCensus;
}

/** Objects by name: the fixed order budgets are listed and reserved in. */
export function byName(a: KubeObject, b: KubeObject): number {
  return (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
}

/** The key a gang is indexed by: gangs are per namespace. */
export const gangKey = (namespace: string | undefined, gang: string) => `${namespace ?? ''}/${gang}`;
