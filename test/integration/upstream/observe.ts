// What the upstream suite watches while metal-operator works: every binding a Server ever showed
// (from the watch, so a bind that was undone again still counts), every phase a claim went through,
// and every Server version whose projection refuses placement for maintenance without our taint on it
// (the signal upstream's binder honours; the maintenance controller writes it before the projection).
import type { Server } from '../../../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../../../api/metal/v1alpha1/serverclaim.js';
import type { ResourceClient } from '../../../lib/kube/client.js';
import { Informer } from '../../../lib/kube/informer.js';
import { MAINTENANCE_TAINT_KEY } from '../../../contract/names.js';

/** The projected states the placement rule refuses a server for (webhook/rules/placement.ts). */
const REFUSING = new Set(['Approved', 'InMaintenance']);

export interface Binding {
  at: number;
  server: string;
  claim: string;
}

export class Observer {
  readonly bindings: Binding[] = [];
  /** claim (namespace/name) -> phases in the order the watch showed them (repeats collapsed). */
  readonly phases = new Map<string, string[]>();
  /** Server versions (name@resourceVersion: state) projected Approved/InMaintenance without our NoBind taint. */
  readonly untaintedRefusals: string[] = [];
  readonly servers: Informer<Server>;
  readonly claims: Informer<ServerClaim>;

  constructor(servers: ResourceClient<Server>, claims: ResourceClient<ServerClaim>) {
    this.servers = new Informer<Server>(servers);
    this.claims = new Informer<ServerClaim>(claims);
    const onServer = (s: Server) => {
      const projected = s.status?.maintenance?.state;
      const tainted = (s.spec.taints ?? []).some(
        (t) => t.key === MAINTENANCE_TAINT_KEY && (t.effect ?? 'NoBind') === 'NoBind',
      );
      if (projected && REFUSING.has(projected) && !tainted)
        this.untaintedRefusals.push(`${s.metadata.name}@${s.metadata.resourceVersion}: ${projected}`);
      const ref = s.spec.serverClaimRef;
      if (!ref) return;
      const claim = `${ref.namespace}/${ref.name}`;
      const last = this.bindings.findLast((b) => b.server === s.metadata.name);
      if (last?.claim !== claim) this.bindings.push({ at: Date.now(), server: s.metadata.name!, claim });
    };
    this.servers.on({ add: onServer, update: (_o, s) => onServer(s) });
    const onClaim = (c: ServerClaim) => {
      const key = `${c.metadata.namespace}/${c.metadata.name}`;
      const seen = this.phases.get(key) ?? [];
      const phase = c.status?.phase ?? '';
      if (seen.at(-1) !== phase) seen.push(phase);
      this.phases.set(key, seen);
    };
    this.claims.on({ add: onClaim, update: (_o, c) => onClaim(c) });
  }

  async start(): Promise<void> {
    this.servers.start();
    this.claims.start();
    await Promise.all([this.servers.waitForSync(), this.claims.waitForSync()]);
  }

  async stop(): Promise<void> {
    await Promise.all([this.servers.stop(), this.claims.stop()]);
  }

  /** Servers that were ever bound, with every claim each was bound to. */
  boundServers(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const b of this.bindings) out.set(b.server, [...(out.get(b.server) ?? []), b.claim]);
    return out;
  }
}
