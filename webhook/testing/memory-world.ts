// A WorldView over plain arrays: the reference implementation the informer-backed one must agree with,
// and the world the rule tests run against. Indexes are built once in the constructor.
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { BMC } from '../../api/metal/v1alpha1/bmc.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import { matchesSelector } from '../../contract/selectors.js';
import { gangKey, type BudgetCensus, type WorldView } from '../world.js';
import { domainOf, serverUnavailableReason } from '../../contract/availability.js';

export interface WorldContents {
  servers?: Server[];
  claims?: ServerClaim[];
  maintenances?: ServerMaintenance[];
  serverBudgets?: ServerDisruptionBudget[];
  claimBudgets?: ServerClaimDisruptionBudget[];
  bmcs?: BMC[];
}

const nsKey = (namespace: string | undefined, name: string | undefined) => `${namespace ?? ''}/${name ?? ''}`;

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

export class MemoryWorld implements WorldView {
  readonly #servers = new Map<string, Server>();
  readonly #claims = new Map<string, ServerClaim>();
  readonly #maintenances = new Map<string, ServerMaintenance>();
  readonly #bmcs = new Map<string, BMC>();
  readonly #claimsByServer = new Map<string, ServerClaim[]>();
  readonly #maintenancesByServer = new Map<string, ServerMaintenance[]>();
  readonly #maintenancesByGang = new Map<string, ServerMaintenance[]>();
  readonly #serverBudgets: ServerDisruptionBudget[];
  readonly #claimBudgets: ServerClaimDisruptionBudget[];

  constructor(contents: WorldContents = {}) {
    for (const s of contents.servers ?? []) this.#servers.set(s.metadata.name ?? '', s);
    for (const b of contents.bmcs ?? []) this.#bmcs.set(b.metadata.name ?? '', b);
    for (const c of contents.claims ?? []) this.#addClaim(c);
    for (const m of contents.maintenances ?? []) this.#addMaintenance(m);
    this.#serverBudgets = contents.serverBudgets ?? [];
    this.#claimBudgets = contents.claimBudgets ?? [];
  }

  #addClaim(c: ServerClaim): void {
    this.#claims.set(nsKey(c.metadata.namespace, c.metadata.name), c);
    if (c.spec.serverRef?.name) push(this.#claimsByServer, c.spec.serverRef.name, c);
  }

  #addMaintenance(m: ServerMaintenance): void {
    this.#maintenances.set(nsKey(m.metadata.namespace, m.metadata.name), m);
    push(this.#maintenancesByServer, m.spec.serverRef.name, m);
    if (m.spec.gang) push(this.#maintenancesByGang, gangKey(m.metadata.namespace, m.spec.gang.name), m);
  }

  getServer(name: string) {
    return this.#servers.get(name);
  }
  getClaim(namespace: string, name: string) {
    return this.#claims.get(nsKey(namespace, name));
  }
  getMaintenance(namespace: string, name: string) {
    return this.#maintenances.get(nsKey(namespace, name));
  }
  claimsByServer(server: string) {
    return this.#claimsByServer.get(server) ?? [];
  }
  maintenancesByServer(server: string) {
    return this.#maintenancesByServer.get(server) ?? [];
  }
  maintenancesByGang(namespace: string, gang: string) {
    return this.#maintenancesByGang.get(gangKey(namespace, gang)) ?? [];
  }
  serverBudgetsFor(server: string) {
    const s = this.#servers.get(server);
    if (!s) return [];
    return this.#serverBudgets.filter((b) => matchesSelector(b.spec.serverSelector, s.metadata.labels));
  }
  claimBudgetsFor(namespace: string, claim: string) {
    const c = this.getClaim(namespace, claim);
    if (!c) return [];
    return this.#claimBudgets.filter(
      (b) => b.metadata.namespace === namespace && matchesSelector(b.spec.claimSelector, c.metadata.labels),
    );
  }

  serverBudgetCensus(budget: string, domain: string): BudgetCensus {
    const b = this.#serverBudgets.find((x) => x.metadata.name === budget);
    if (!b) return { expected: 0, unavailable: [] };
    const selected = [...this.#servers.values()].filter(
      (s) =>
        matchesSelector(b.spec.serverSelector, s.metadata.labels) &&
        domainOf(s, b.spec.topologyKey) === domain,
    );
    return this.#census(selected);
  }

  claimBudgetCensus(namespace: string, budget: string): BudgetCensus {
    const b = this.#claimBudgets.find(
      (x) => x.metadata.namespace === namespace && x.metadata.name === budget,
    );
    if (!b) return { expected: 0, unavailable: [] };
    const servers = [...this.#claims.values()]
      .filter(
        (c) => c.metadata.namespace === namespace && matchesSelector(b.spec.claimSelector, c.metadata.labels),
      )
      .map((c) => (c.spec.serverRef ? this.#servers.get(c.spec.serverRef.name) : undefined))
      .filter((s): s is Server => s !== undefined);
    return this.#census(servers);
  }

  #census(servers: Server[]): BudgetCensus {
    const unavailable = servers
      .filter((s) =>
        serverUnavailableReason(s, s.spec.bmcRef ? this.#bmcs.get(s.spec.bmcRef.name) : undefined),
      )
      .map((s) => s.metadata.name ?? '');
    return { expected: servers.length, unavailable };
  }
}
