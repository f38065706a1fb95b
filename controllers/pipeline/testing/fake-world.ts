// One run's world in memory, for the decision's tests: decideRun's actions are applied to these
// objects as the reconciler would apply them, and the other controllers are played by hand
// (admit: the maintenance controller; finish: the firmware controller).
import type {
  MaintenancePipeline,
  PipelineStage,
} from '../../../api/maintenance/v1alpha1/maintenancepipeline.js';
import type { MaintenancePipelineRun } from '../../../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import type { Server } from '../../../api/metal/v1alpha1/server.js';
import { serverBehindBmc } from '../../shared/testing/servers.js';
import { PIPELINE_RUN_FINALIZER, PIPELINE_TAINT_KEY } from '../../../contract/names.js';
import type { Child, RunAction, RunDecision } from '../model.js';
import { decideRun } from '../run.js';

export const NS = 'metal-maintenance-system';

export function pipelineOf(
  stages: PipelineStage[],
  spec: Partial<MaintenancePipeline['spec']> = {},
): MaintenancePipeline {
  return {
    apiVersion: 'maintenance.metal.ironcore.dev/v1alpha1',
    kind: 'MaintenancePipeline',
    metadata: { name: 'fleet', uid: 'uid-p', generation: 1 },
    spec: { serverSelector: {}, stages, ...spec },
  };
}

/** A Server behind a BMC (shared with the other controllers' fakes). */
export const serverOf = serverBehindBmc;

export class FakeRunWorld {
  run: MaintenancePipelineRun;
  pipeline: MaintenancePipeline | undefined;
  readonly children = new Map<string, Child>();
  readonly maintenances = new Map<string, ServerMaintenance>();
  readonly servers = new Map<string, Server>();
  /** Every maintenance ever created, by name (a second one for a server would show here). */
  readonly created: string[] = [];
  admitted = true;
  /** Deleted maintenances stay (terminating) until finalize(). */
  lingering = false;
  /** Deleted children stay (terminating, the firmware controller's finalizer) until finalizeChildren(). */
  childrenLinger = false;
  now = new Date('2026-12-03T10:00:00Z');
  last?: RunDecision;

  constructor(pipeline: MaintenancePipeline, servers: string[]) {
    this.pipeline = pipeline;
    for (const s of servers) this.servers.set(s, serverOf(s));
    this.run = {
      apiVersion: 'maintenance.metal.ironcore.dev/v1alpha1',
      kind: 'MaintenancePipelineRun',
      metadata: { name: 'fleet-bmc-1', uid: 'uid-r', generation: 1, finalizers: [PIPELINE_RUN_FINALIZER] },
      spec: {
        pipelineRef: { name: 'fleet' },
        bmcRef: { name: 'bmc-1' },
        serverRefs: servers.map((name) => ({ name })),
      },
    };
  }

  step(): RunDecision {
    const d = decideRun({
      run: this.run,
      ...(this.pipeline ? { pipeline: this.pipeline } : {}),
      admitted: this.admitted,
      children: this.children,
      maintenances: new Map([...this.maintenances.values()].map((m) => [m.spec.serverRef.name, m] as const)),
      servers: this.servers,
      now: this.now,
      namespace: NS,
    });
    for (const a of d.actions) this.#apply(a);
    if (this.run) this.run = { ...this.run, status: d.status };
    this.last = d;
    return d;
  }

  /** Steps until nothing changes any more (at most n). */
  settle(n = 20): RunDecision {
    let before = '';
    for (let i = 0; i < n; i++) {
      const d = this.step();
      const now = JSON.stringify([this.run, [...this.children], [...this.maintenances], [...this.servers]]);
      if (now === before && d.actions.length === 0) return d;
      before = now;
    }
    return this.last!;
  }

  #apply(a: RunAction): void {
    switch (a.kind) {
      case 'taint': {
        const s = this.servers.get(a.server)!;
        s.spec.taints = [...(s.spec.taints ?? []).filter((t) => t.key !== PIPELINE_TAINT_KEY), a.taint];
        return;
      }
      case 'untaint': {
        const s = this.servers.get(a.server)!;
        s.spec.taints = (s.spec.taints ?? []).filter((t) => t.key !== PIPELINE_TAINT_KEY);
        return;
      }
      case 'createMaintenance':
        if (this.maintenances.has(a.maintenance.metadata.name ?? '')) return;
        this.created.push(a.maintenance.metadata.name ?? '');
        this.maintenances.set(a.maintenance.metadata.name ?? '', structuredClone(a.maintenance));
        return;
      case 'deleteMaintenance': {
        // The maintenance controller's finalizer keeps it a while, Completed, when `lingering`.
        const m = this.maintenances.get(a.name);
        if (m && this.lingering) {
          m.metadata.deletionTimestamp = this.now.toISOString();
          m.status = { ...(m.status ?? {}), state: 'Completed' };
        } else this.maintenances.delete(a.name);
        return;
      }
      case 'createChild':
      case 'patchChild':
      case 'deleteChild':
        this.#applyChild(a);
        return;
      case 'removeFinalizer':
        this.run = { ...this.run, metadata: { ...this.run.metadata, finalizers: [] } };
        return;
    }
  }

  #applyChild(a: Extract<RunAction, { kind: 'createChild' | 'patchChild' | 'deleteChild' }>): void {
    switch (a.kind) {
      case 'createChild':
        // A name still taken (a terminating child) is refused, as the API refuses it with 409.
        if (!this.children.has(a.child.metadata.name ?? ''))
          this.children.set(a.child.metadata.name ?? '', {
            ...structuredClone(a.child),
            metadata: { ...a.child.metadata, generation: 1 },
          });
        return;
      case 'patchChild': {
        const c = this.children.get(a.name)!;
        const spec = { ...c.spec };
        for (const [k, v] of Object.entries(a.spec))
          if (v === null) delete spec[k];
          else spec[k] = v;
        c.spec = spec;
        c.metadata.generation = (c.metadata.generation ?? 1) + 1;
        return;
      }
      case 'deleteChild': {
        const c = this.children.get(a.name);
        if (c && this.childrenLinger) c.metadata.deletionTimestamp = this.now.toISOString();
        else this.children.delete(a.name);
        return;
      }
    }
  }

  /** The maintenance controller's finalizer lets go: terminating maintenances disappear. */
  finalize(): void {
    for (const [name, m] of this.maintenances)
      if (m.metadata.deletionTimestamp) this.maintenances.delete(name);
  }

  /** The firmware controller's finalizer lets go: terminating children disappear. */
  finalizeChildren(): void {
    for (const [name, c] of this.children) if (c.metadata.deletionTimestamp) this.children.delete(name);
  }

  /** The maintenance controller: every run maintenance to `state`. */
  admitAll(state = 'InMaintenance'): void {
    for (const m of this.maintenances.values())
      if (!m.metadata.deletionTimestamp) m.status = { ...(m.status ?? {}), state };
  }

  /** The firmware controller: every active, unfinished child to `state` (or those `only` picks). */
  finish(state = 'Completed', only?: (name: string) => boolean): void {
    for (const [name, c] of this.children) {
      if (c.spec.driftPolicy !== undefined || (only && !only(name))) continue;
      const done =
        c.status?.observedGeneration === c.metadata.generation &&
        ['Completed', 'Applied', 'Failed'].includes(c.status?.state ?? '');
      if (done) continue;
      c.status = { state, observedGeneration: c.metadata.generation };
    }
  }

  /** The firmware controller on a settled child: it observes (matching, or drifted: Pending). */
  observe(name: string, state: string): void {
    const c = this.children.get(name)!;
    c.status = { state, observedGeneration: c.metadata.generation };
  }

  taintsOn(server: string): string[] {
    return (this.servers.get(server)?.spec.taints ?? []).map((t) => `${t.key}=${t.value}:${t.effect}`);
  }
}
