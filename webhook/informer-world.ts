// The WorldView the webhook runs on: informer caches plus indexes kept up to date by their change
// handlers, so every question a rule asks is a map lookup, never a list per request.
//
//   claims by server, maintenances by server     informer indexes (`server`)
//   fleet budgets selecting a server             per-server membership list, recomputed when that
//                                                server (labels, state, BMC) or a budget's spec changes
//   census of a fleet budget per domain          member and unavailable sets, adjusted with membership
//   tenant budgets selecting a claim, census     the same per claim and tenant budget
//
// A budget's status changes on every grant; that does not touch the indexes (only selector and
// topologyKey do), so a burst of grants costs nothing here. Answers must equal MemoryWorld's for the
// same objects (informer-world.test.ts checks that over random worlds and change sequences).
import type { BMC } from '../api/metal/v1alpha1/bmc.js';
import type { Server } from '../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import type { KubeObject } from '../api/schema/meta.js';
import type { IndexFunc } from '../lib/kube/informer.js';
import { objectKey, splitKey } from '../lib/kube/resources.js';
import type { CacheSource } from './cache-source.js';
import { matchesSelector } from '../contract/selectors.js';
import { byName, gangKey, type BudgetCensus, type WorldView } from './world.js';
import { domainOf, serverUnavailableReason } from '../contract/availability.js';

export interface WorldSources {
  servers: CacheSource<Server>;
  claims: CacheSource<ServerClaim>;
  maintenances: CacheSource<ServerMaintenance>;
  serverBudgets: CacheSource<ServerDisruptionBudget>;
  claimBudgets: CacheSource<ServerClaimDisruptionBudget>;
  bmcs: CacheSource<BMC>;
}

/** The indexes each source must be created with (pass them as the informers' `indexers`). */
export const WORLD_INDEXERS = {
  servers: { bmc: (s: Server) => (s.spec?.bmcRef?.name ? [s.spec.bmcRef.name] : []) },
  claims: {
    server: (c: ServerClaim) => (c.spec?.serverRef?.name ? [c.spec.serverRef.name] : []),
    namespace: (c: ServerClaim) => [c.metadata.namespace ?? ''],
  },
  maintenances: {
    server: (m: ServerMaintenance) =>
      typeof m.spec?.serverRef?.name === 'string' ? [m.spec.serverRef.name] : [],
    gang: (m: ServerMaintenance) =>
      m.spec?.gang?.name ? [gangKey(m.metadata.namespace, m.spec.gang.name)] : [],
  },
  claimBudgets: { namespace: (b: ServerClaimDisruptionBudget) => [b.metadata.namespace ?? ''] },
  serverBudgets: {},
  bmcs: {},
} satisfies { [K in keyof WorldSources]: Record<string, IndexFunc<never>> };

const EMPTY_CENSUS: BudgetCensus = Object.freeze({ expected: 0, unavailable: Object.freeze([]) });

interface ServerMembership {
  budget: string;
  domain: string;
  unavailable: boolean;
}

interface DomainState {
  members: Set<string>;
  unavailable: Set<string>;
  census: BudgetCensus | undefined;
}

interface ClaimContribution {
  /** Keys (namespace/name) of the tenant budgets selecting the claim. */
  budgets: string[];
  /** The claim's server, when it exists (a claim counts only through an existing server). */
  server: string | undefined;
  unavailable: boolean;
}

interface ClaimBudgetState {
  withServer: Set<string>;
  /** claim key → its (unavailable) server; a Map because two claims may name one server. */
  unavailable: Map<string, string>;
  census: BudgetCensus | undefined;
}

const sameServerMemberships = (a: readonly ServerMembership[], b: readonly ServerMembership[]) =>
  a.length === b.length &&
  a.every(
    (m, i) => m.budget === b[i]!.budget && m.domain === b[i]!.domain && m.unavailable === b[i]!.unavailable,
  );

const sameContribution = (a: ClaimContribution | undefined, b: ClaimContribution) =>
  a !== undefined &&
  a.server === b.server &&
  a.unavailable === b.unavailable &&
  a.budgets.length === b.budgets.length &&
  a.budgets.every((x, i) => x === b.budgets[i]);

const nameOf = (o: KubeObject) => o.metadata.name ?? '';
const keyOf = (o: KubeObject) => objectKey(o.metadata);

export class InformerWorld implements WorldView {
  readonly #s: WorldSources;
  /** budget name → signature of the spec fields that decide membership. */
  readonly #budgetSpecs = new Map<string, string>();
  readonly #budgetDomains = new Map<string, Map<string, DomainState>>();
  readonly #serverMemberships = new Map<string, ServerMembership[]>();
  readonly #claimBudgetSpecs = new Map<string, string>();
  readonly #claimBudgetStates = new Map<string, ClaimBudgetState>();
  readonly #claimContributions = new Map<string, ClaimContribution>();

  constructor(sources: WorldSources) {
    this.#s = sources;
    // Budgets first, so the servers and claims replayed next join them directly.
    sources.serverBudgets.on({
      add: (b) => this.#refreshServerBudget(nameOf(b)),
      update: (_o, b) => this.#refreshServerBudget(nameOf(b)),
      delete: (b) => this.#refreshServerBudget(nameOf(b)),
    });
    sources.claimBudgets.on({
      add: (b) => this.#refreshClaimBudget(keyOf(b)),
      update: (_o, b) => this.#refreshClaimBudget(keyOf(b)),
      delete: (b) => this.#refreshClaimBudget(keyOf(b)),
    });
    sources.servers.on({
      add: (s) => this.#serverChanged(nameOf(s)),
      update: (_o, s) => this.#serverChanged(nameOf(s)),
      delete: (s) => this.#serverChanged(nameOf(s)),
    });
    sources.claims.on({
      add: (c) => this.#refreshClaim(keyOf(c)),
      update: (o, c) => {
        // A claim that moved to another namespace/name is two objects; a key is stable for one.
        if (keyOf(o) !== keyOf(c)) this.#refreshClaim(keyOf(o));
        this.#refreshClaim(keyOf(c));
      },
      delete: (c) => this.#refreshClaim(keyOf(c)),
    });
    sources.bmcs.on({
      add: (b) => this.#bmcChanged(nameOf(b)),
      update: (_o, b) => this.#bmcChanged(nameOf(b)),
      delete: (b) => this.#bmcChanged(nameOf(b)),
    });
  }

  /** Whether every source has listed once (readiness). */
  hasSynced(): boolean {
    return Object.values(this.#s).every((s: CacheSource<KubeObject>) => s.hasSynced());
  }

  // ------------------------------------------------------------------ WorldView

  getServer(name: string) {
    return this.#s.servers.getByName(name);
  }
  getClaim(namespace: string, name: string) {
    return this.#s.claims.getByName(name, namespace);
  }
  getMaintenance(namespace: string, name: string) {
    return this.#s.maintenances.getByName(name, namespace);
  }
  claimsByServer(server: string) {
    return this.#s.claims.byIndex('server', server);
  }
  maintenancesByServer(server: string) {
    return this.#s.maintenances.byIndex('server', server);
  }
  maintenancesByGang(namespace: string, gang: string) {
    return this.#s.maintenances.byIndex('gang', gangKey(namespace, gang));
  }

  serverBudgetsFor(server: string): readonly ServerDisruptionBudget[] {
    const memberships = this.#serverMemberships.get(server);
    if (!memberships) return [];
    // A loop: this runs on every eviction review. No sort: the eviction rule orders its reservations.
    const out: ServerDisruptionBudget[] = [];
    for (const m of memberships) {
      const b = this.#s.serverBudgets.getByName(m.budget);
      if (b) out.push(b);
    }
    return out;
  }

  claimBudgetsFor(namespace: string, claim: string): readonly ServerClaimDisruptionBudget[] {
    const c = this.#claimContributions.get(objectKey({ namespace, name: claim }));
    if (!c) return [];
    const out: ServerClaimDisruptionBudget[] = [];
    for (const key of c.budgets) {
      const { namespace: ns, name } = splitKey(key);
      const b = this.#s.claimBudgets.getByName(name, ns);
      if (b) out.push(b);
    }
    return out;
  }

  serverBudgetCensus(budget: string, domain: string): BudgetCensus {
    const d = this.#budgetDomains.get(budget)?.get(domain);
    if (!d) return EMPTY_CENSUS;
    // A snapshot (grants run across awaits; the live set may change meanwhile), rebuilt after a change.
    d.census ??= {
      expected: d.members.size,
      unavailable: [...d.unavailable],
      unavailableSet: new Set(d.unavailable),
    };
    return d.census;
  }

  claimBudgetCensus(namespace: string, budget: string): BudgetCensus {
    const st = this.#claimBudgetStates.get(objectKey({ namespace, name: budget }));
    if (!st) return EMPTY_CENSUS;
    st.census ??= {
      expected: st.withServer.size,
      unavailable: [...st.unavailable.values()],
      unavailableSet: new Set(st.unavailable.values()),
    };
    return st.census;
  }

  // ------------------------------------------------------------------ fleet budgets

  #isUnavailable(server: Server): boolean {
    const bmcName = server.spec?.bmcRef?.name;
    const bmc = bmcName ? this.#s.bmcs.getByName(bmcName) : undefined;
    return serverUnavailableReason(server, bmc) !== undefined;
  }

  #domain(budget: string, domain: string, create: boolean): DomainState | undefined {
    let domains = this.#budgetDomains.get(budget);
    if (!domains) {
      if (!create) return undefined;
      domains = new Map<string, DomainState>();
      this.#budgetDomains.set(budget, domains);
    }
    let d = domains.get(domain);
    if (!d && create) {
      d = { members: new Set(), unavailable: new Set(), census: undefined };
      domains.set(domain, d);
    }
    return d;
  }

  #join(server: string, m: ServerMembership): void {
    const d = this.#domain(m.budget, m.domain, true)!;
    d.members.add(server);
    if (m.unavailable) d.unavailable.add(server);
    d.census = undefined;
  }

  #leave(server: string, m: ServerMembership): void {
    const d = this.#domain(m.budget, m.domain, false);
    if (!d) return;
    d.members.delete(server);
    d.unavailable.delete(server);
    d.census = undefined;
    if (d.members.size === 0) this.#budgetDomains.get(m.budget)?.delete(m.domain);
  }

  #membershipsOf(server: Server): ServerMembership[] {
    const unavailable = this.#isUnavailable(server);
    const out: ServerMembership[] = [];
    for (const budget of this.#budgetSpecs.keys()) {
      const b = this.#s.serverBudgets.getByName(budget);
      if (!b || !matchesSelector(b.spec.serverSelector, server.metadata.labels)) continue;
      out.push({ budget, domain: domainOf(server, b.spec.topologyKey), unavailable });
    }
    return out;
  }

  /** Recomputes which fleet budgets (and domains) count the server, and whether it is unavailable. */
  #refreshServer(name: string): void {
    const server = this.#s.servers.getByName(name);
    const before = this.#serverMemberships.get(name) ?? [];
    const after = server ? this.#membershipsOf(server) : [];
    if (sameServerMemberships(before, after)) return;
    for (const m of before) this.#leave(name, m);
    for (const m of after) this.#join(name, m);
    if (after.length > 0) this.#serverMemberships.set(name, after);
    else this.#serverMemberships.delete(name);
  }

  #serverChanged(name: string): void {
    this.#refreshServer(name);
    // Tenant budgets count claims through their servers' existence and availability.
    for (const c of this.#s.claims.byIndex('server', name)) this.#refreshClaim(keyOf(c));
  }

  #bmcChanged(name: string): void {
    for (const s of this.#s.servers.byIndex('bmc', name)) this.#serverChanged(nameOf(s));
  }

  /** A fleet budget was added, changed or deleted: only selector and topologyKey matter here. */
  #refreshServerBudget(name: string): void {
    const b = this.#s.serverBudgets.getByName(name);
    const signature = b
      ? JSON.stringify([b.spec.serverSelector ?? null, b.spec.topologyKey ?? ''])
      : undefined;
    if (signature === this.#budgetSpecs.get(name)) return;
    this.#dropServerBudget(name);
    if (!b || signature === undefined) {
      this.#budgetSpecs.delete(name);
      return;
    }
    this.#budgetSpecs.set(name, signature);
    // Recount the budget over all servers: O(servers), but only on a spec change, which is rare.
    for (const server of this.#s.servers.list()) {
      if (!matchesSelector(b.spec.serverSelector, server.metadata.labels)) continue;
      const m = {
        budget: name,
        domain: domainOf(server, b.spec.topologyKey),
        unavailable: this.#isUnavailable(server),
      };
      this.#join(nameOf(server), m);
      // Keep each server's list in budget order, as a fresh #membershipsOf would build it.
      const list = [...(this.#serverMemberships.get(nameOf(server)) ?? []), m];
      this.#serverMemberships.set(nameOf(server), this.#inSpecOrder(list));
    }
  }

  /** Removes a fleet budget from every server that counted in it. */
  #dropServerBudget(name: string): void {
    for (const d of this.#budgetDomains.get(name)?.values() ?? []) {
      for (const server of d.members) {
        const rest = (this.#serverMemberships.get(server) ?? []).filter((m) => m.budget !== name);
        if (rest.length > 0) this.#serverMemberships.set(server, rest);
        else this.#serverMemberships.delete(server);
      }
    }
    this.#budgetDomains.delete(name);
  }

  #inSpecOrder(list: ServerMembership[]): ServerMembership[] {
    const order = [...this.#budgetSpecs.keys()];
    return list.sort((a, b) => order.indexOf(a.budget) - order.indexOf(b.budget));
  }

  // ------------------------------------------------------------------ tenant budgets

  #contributionOf(claim: ServerClaim): ClaimContribution {
    const ns = claim.metadata.namespace ?? '';
    const budgets = this.#s.claimBudgets
      .byIndex('namespace', ns)
      .filter((b) => matchesSelector(b.spec.claimSelector, claim.metadata.labels))
      .sort(byName)
      .map(keyOf);
    const serverName = claim.spec?.serverRef?.name;
    const server = serverName ? this.#s.servers.getByName(serverName) : undefined;
    return {
      budgets,
      server: server ? serverName : undefined,
      unavailable: server ? this.#isUnavailable(server) : false,
    };
  }

  /** Recomputes the tenant budgets a claim counts in; `force` rejoins even when nothing changed. */
  #refreshClaim(key: string, force = false): void {
    const { namespace, name } = splitKey(key);
    const claim = this.#s.claims.getByName(name, namespace);
    const before = this.#claimContributions.get(key);
    const after = claim ? this.#contributionOf(claim) : undefined;
    if (!force && after && sameContribution(before, after)) return;
    if (before) for (const b of before.budgets) this.#claimLeave(b, key);
    if (!after) {
      this.#claimContributions.delete(key);
      return;
    }
    for (const b of after.budgets) this.#claimJoin(b, key, after);
    this.#claimContributions.set(key, after);
  }

  #claimJoin(budget: string, claim: string, c: ClaimContribution): void {
    let st = this.#claimBudgetStates.get(budget);
    if (!st)
      this.#claimBudgetStates.set(
        budget,
        (st = { withServer: new Set(), unavailable: new Map(), census: undefined }),
      );
    if (c.server !== undefined) st.withServer.add(claim);
    if (c.server !== undefined && c.unavailable) st.unavailable.set(claim, c.server);
    st.census = undefined;
  }

  #claimLeave(budget: string, claim: string): void {
    const st = this.#claimBudgetStates.get(budget);
    if (!st) return;
    st.withServer.delete(claim);
    st.unavailable.delete(claim);
    st.census = undefined;
  }

  #refreshClaimBudget(key: string): void {
    const { namespace, name } = splitKey(key);
    const b = this.#s.claimBudgets.getByName(name, namespace);
    const signature = b ? JSON.stringify(b.spec.claimSelector ?? null) : undefined;
    if (signature === this.#claimBudgetSpecs.get(key)) return;
    if (signature === undefined) this.#claimBudgetSpecs.delete(key);
    else this.#claimBudgetSpecs.set(key, signature);
    this.#claimBudgetStates.delete(key);
    for (const c of this.#s.claims.byIndex('namespace', namespace ?? '')) this.#refreshClaim(keyOf(c), true);
  }
}
