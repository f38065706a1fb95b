// A fake world for the run planner: children as the firmware controller would move them, versions
// as the hardware reports them, the run's holds. Deterministic: the test says which server fails,
// and `tick` advances every child one step. It applies a plan's actions the way the pipeline
// controller's reconciler would (stamp, re-activate, settle) and counts how often each cell ran.
import type { PipelineStage } from '../../../api/maintenance/v1alpha1/maintenancepipeline.js';
import type { StagePhase } from '../../../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import { applyDrift } from '../drift.js';
import {
  planRun,
  type CellRecord,
  type ChildView,
  type PlanOptions,
  type RunPlan,
  type RunWorld,
} from '../plan.js';
import { cellKey, isVersionStage, scopeOf } from '../stages.js';
import { compareVersions } from '../versions.js';

interface SimChild extends ChildView {
  stage: PipelineStage;
  server?: string;
  /** Steps until it finishes once active and seen. */
  remaining: number;
}

export class RunSim {
  readonly children = new Map<string, SimChild>();
  readonly stamps = new Map<string, number>();
  readonly activations = new Map<string, number>();
  /** Cell keys whose next execution fails. */
  readonly failNext = new Set<string>();
  recorded = new Map<string, CellRecord>();
  bmcVersion: string;
  serverVersions: Record<string, string | undefined>;
  held: Set<string>;
  /** Every plan made, for invariants over the whole history. */
  readonly history: RunPlan[] = [];

  constructor(
    readonly stages: PipelineStage[],
    readonly servers: string[],
    versions: { bmc: string; bios: string },
  ) {
    this.bmcVersion = versions.bmc;
    this.serverVersions = Object.fromEntries(servers.map((s) => [s, versions.bios]));
    this.held = new Set(servers);
  }

  world(): RunWorld {
    return {
      servers: this.servers,
      children: new Map([...this.children].map(([k, c]) => [k, { ...c }])),
      bmcVersion: this.bmcVersion,
      serverVersions: { ...this.serverVersions },
      held: new Set(this.held),
    };
  }

  /** One reconcile: drift, plan, apply the actions, record. */
  reconcile(options: PlanOptions = {}, driftPolicy: 'Reconcile' | 'Observe' = 'Reconcile'): RunPlan {
    const drift = applyDrift(this.stages, this.recorded, this.world(), driftPolicy);
    for (const a of drift.actions) this.apply(a);
    const plan = planRun(this.stages, drift.recorded, this.world(), options);
    for (const a of plan.actions) this.apply(a);
    this.recorded = plan.cells;
    this.history.push(plan);
    return plan;
  }

  private apply(a: RunPlan['actions'][number]) {
    const key = cellKey(a.stage, a.server);
    const stage = this.stages.find((s) => s.name === a.stage)!;
    if (a.type === 'stamp') {
      if (this.children.has(key)) throw new Error(`stamped ${key} twice`);
      this.stamps.set(key, (this.stamps.get(key) ?? 0) + 1);
      this.children.set(key, {
        stage,
        server: a.server,
        phase: 'Pending',
        current: false,
        remaining: 2,
        version: a.version,
      });
    } else if (a.type === 'activate') {
      const c = this.children.get(key)!;
      this.activations.set(key, (this.activations.get(key) ?? 0) + 1);
      Object.assign(c, {
        driftPolicy: undefined,
        current: false,
        remaining: 2,
        version: a.version ?? c.version,
      });
    } else {
      Object.assign(this.children.get(key)!, { driftPolicy: a.driftPolicy });
    }
  }

  /** The firmware controller's step: active children advance; a finished hop sets the version. */
  tick() {
    for (const [key, c] of this.children) {
      if (c.driftPolicy !== undefined) continue;
      c.current = true;
      if (c.phase === 'Completed' || c.phase === 'Failed') continue;
      if (this.failNext.delete(key)) {
        c.phase = 'Failed';
        continue;
      }
      c.remaining -= 1;
      c.phase = c.remaining <= 0 ? 'Completed' : 'InProgress';
      if (c.phase === 'Completed' && isVersionStage(c.stage.kind))
        this.setVersion(c.server, c.stage.template.version!);
    }
  }

  private setVersion(server: string | undefined, version: string) {
    if (server === undefined) {
      if ((compareVersions(this.bmcVersion, version) ?? -1) < 0) this.bmcVersion = version;
    } else if ((compareVersions(this.serverVersions[server] ?? '', version) ?? -1) < 0) {
      this.serverVersions[server] = version;
    }
  }

  /** A factory reset: versions back, and every watching child of the target reports drift. */
  factoryReset(target: { server?: string; bmc?: boolean }, versions: { bmc: string; bios: string }) {
    if (target.bmc) this.bmcVersion = versions.bmc;
    if (target.server) this.serverVersions[target.server] = versions.bios;
    for (const c of this.children.values()) {
      const hit = target.bmc ? c.server === undefined : c.server === target.server;
      if (hit && c.driftPolicy === 'Observe') c.phase = 'Pending';
    }
  }

  /** Reconcile and tick until the run stops progressing; the step bound makes a livelock fail. */
  runToEnd(options: PlanOptions = {}, maxSteps = 200): RunPlan {
    for (let i = 0; i < maxSteps; i++) {
      const plan = this.reconcile(options);
      if (!plan.progressing && plan.actions.length === 0) return plan;
      this.tick();
    }
    throw new Error(`run still progressing after ${maxSteps} steps`);
  }

  phaseOf(stage: string, server?: string): StagePhase | undefined {
    return this.recorded.get(cellKey(stage, server))?.phase;
  }

  scopeOf(stage: string) {
    return scopeOf(this.stages.find((s) => s.name === stage)!.kind);
  }
}
