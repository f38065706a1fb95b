// An in-memory cluster for the decision tests: one firmware object, its servers, the
// maintenances the controller requests (the test plays the maintenance controller by admitting
// them), and a reconcile that runs step() and writes the status, or "crashes" before it does.
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import type { Server } from '../../../api/metal/v1alpha1/server.js';
import { serverBehindBmc } from '../../shared/testing/servers.js';
import { ATTEMPT_ANNOTATION, ATTEMPT_LABEL, OPERATION_ANNOTATION, OWNER_LABEL, TARGET } from '../model.js';
import type {
  FirmwareContext,
  FirmwareKindName,
  FirmwareObject,
  FirmwarePolicy,
  FirmwareWorld,
} from '../model.js';
import type { FirmwarePort } from '../port.js';
import { step, type ActDecision, type KubeOps } from '../step.js';

export const TEST_POLICY: FirmwarePolicy = {
  class: 'Planned',
  defaultMaxAttempts: 1,
  retryBackoffMs: 60_000,
  retryBackoffMaxMs: 600_000,
  timeouts: { admission: 300_000, issue: 60_000, task: 600_000, reboot: 300_000, verify: 60_000 },
};

/** A Server behind a BMC (shared with the other controllers' fakes). */
export const server = serverBehindBmc;

export class FakeCluster implements KubeOps {
  obj: FirmwareObject;
  readonly kind: FirmwareKindName;
  servers: Server[];
  readonly maintenances = new Map<string, ServerMaintenance>();
  readonly log: string[] = [];
  readonly events: string[] = [];
  now = new Date('2026-12-01T10:00:00Z');
  policy: FirmwarePolicy = TEST_POLICY;
  /** Plays a MaintenancePipelineRun's child: these maintenances are the run's (holdForRun). */
  runRefs?: { namespace: string; name: string }[];
  #uid = 0;

  constructor(kind: FirmwareKindName, obj: FirmwareObject, servers: Server[]) {
    this.kind = kind;
    this.obj = structuredClone(obj);
    this.obj.metadata.uid ??= 'uid-obj';
    this.obj.metadata.generation ??= 1;
    this.servers = servers;
  }

  ctx(): FirmwareContext {
    return { now: this.now, namespace: 'metal-maintenance-system', policy: this.policy, pollMs: 2_000 };
  }

  advance(ms: number): void {
    this.now = new Date(this.now.getTime() + ms);
  }

  world(): FirmwareWorld {
    const uid = this.obj.metadata.uid;
    const attempt = this.obj.metadata.annotations?.[ATTEMPT_ANNOTATION];
    const mine = new Map<string, ServerMaintenance>();
    for (const m of this.maintenances.values()) {
      if (m.metadata.labels?.[OWNER_LABEL] === uid && m.metadata.labels?.[ATTEMPT_LABEL] === attempt)
        mine.set(m.spec.serverRef.name, m);
    }
    const servers = TARGET[this.kind] === 'BIOS' ? this.servers.slice(0, 1) : this.servers;
    if (this.runRefs) {
      const held = new Map<string, ServerMaintenance>();
      for (const r of this.runRefs) {
        const m = this.maintenances.get(r.name);
        if (m) held.set(m.spec.serverRef.name, m);
      }
      return { ...this.world0(servers), maintenances: held, runHeld: { refs: this.runRefs } };
    }
    return { ...this.world0(servers), maintenances: mine };
  }

  /** Plays the pipeline controller: one maintenance per server, taken by the run, in `state`. */
  holdForRun(state = 'Pending'): void {
    const servers = TARGET[this.kind] === 'BIOS' ? this.servers.slice(0, 1) : this.servers;
    this.runRefs = servers.map((s) => ({
      namespace: 'metal-maintenance-system',
      name: `run-${s.metadata.name}`,
    }));
    for (const [i, s] of servers.entries()) {
      const name = `run-${s.metadata.name}`;
      this.maintenances.set(name, {
        apiVersion: 'maintenance.metal.ironcore.dev/v1alpha1',
        kind: 'ServerMaintenance',
        metadata: { name, namespace: 'metal-maintenance-system', uid: `run-m-${i}` },
        spec: { serverRef: { name: s.metadata.name ?? '' } },
        status: { state },
      });
    }
  }

  private world0(servers: Server[]): Omit<FirmwareWorld, 'maintenances'> {
    return {
      servers,
      access: {
        ok: true,
        access: {
          endpoint: 'https://bmc.test',
          credentials: { username: 'admin', password: 's3cret-pw' },
          key: 'k',
        },
      },
    };
  }

  /** Plays the maintenance controller: every maintenance of the object goes to `state`. */
  admitAll(state = 'InMaintenance'): void {
    for (const m of this.maintenances.values()) m.status = { ...m.status, state };
  }

  admit(serverName: string, state = 'InMaintenance'): void {
    for (const m of this.maintenances.values())
      if (m.spec.serverRef.name === serverName) m.status = { state };
  }

  async createMaintenance(m: ServerMaintenance): Promise<void> {
    await Promise.resolve();
    this.log.push(`create ${m.metadata.name}`);
    if (this.maintenances.has(m.metadata.name ?? '')) return;
    this.maintenances.set(m.metadata.name ?? '', {
      ...structuredClone(m),
      metadata: { ...m.metadata, uid: `m-${++this.#uid}` },
    });
  }

  async deleteMaintenance(_ns: string, name: string): Promise<void> {
    await Promise.resolve();
    this.log.push(`delete ${name}`);
    this.maintenances.delete(name);
  }

  async setRefs(
    _k: FirmwareKindName,
    _o: FirmwareObject,
    attempt: number,
    refs: { namespace: string; name: string }[],
  ) {
    await Promise.resolve();
    this.log.push(`refs ${attempt}`);
    const o = this.obj as { metadata: FirmwareObject['metadata']; spec: Record<string, unknown> };
    o.metadata.annotations = { ...o.metadata.annotations, [ATTEMPT_ANNOTATION]: String(attempt) };
    if (this.kind.startsWith('BIOS')) o.spec.serverMaintenanceRef = refs[0];
    else if (this.kind === 'BMCVersion') o.spec.serverMaintenanceRefs = refs;
    else o.spec.serverMaintenanceRefs = refs.map((r) => ({ serverMaintenanceRef: r }));
    o.metadata.generation = (o.metadata.generation ?? 0) + 1;
  }

  async clearOperation(): Promise<void> {
    await Promise.resolve();
    const a = { ...this.obj.metadata.annotations };
    delete a[OPERATION_ANNOTATION];
    this.obj.metadata.annotations = a;
  }

  async imageCredentials() {
    await Promise.resolve();
    return undefined;
  }

  /** One reconcile; `crash` drops the status write (the process died after the actions). */
  async reconcile(port: FirmwarePort, opts: { crash?: boolean } = {}): Promise<ActDecision> {
    const decision = await step(this.kind, this.obj, this.world(), this.ctx(), port, this);
    if (!opts.crash && decision.status) this.obj = { ...this.obj, status: structuredClone(decision.status) };
    if (!opts.crash) for (const e of decision.events) this.events.push(`${e.type} ${e.reason}: ${e.note}`);
    return decision;
  }

  /** Reconciles until the decision asks for no immediate requeue (at most `max` times). */
  async settle(port: FirmwarePort, max = 30): Promise<ActDecision> {
    for (let i = 0; ; i++) {
      const d = await this.reconcile(port);
      if (d.requeueAfterMs !== 0 || i >= max) return d;
    }
  }

  get state(): string | undefined {
    return this.obj.status?.state;
  }

  condition(type: string) {
    return this.obj.status?.conditions?.find((c) => c.type === type);
  }
}
