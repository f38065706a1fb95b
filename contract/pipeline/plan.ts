// Run planning: which firmware child a MaintenancePipelineRun stamps, re-activates or settles next,
// as a pure function of (stages, what the run recorded, what it sees). The run is a grid of cells: a
// BMC-scoped stage is one cell for the whole run, a server-scoped stage one cell per server.
//
// - Strict order: a cell starts only when every cell of every earlier stage it depends on completed.
//   A server cell depends on the earlier BMC cells and its own server's earlier cells, so servers
//   advance on their own, gated on the BMC stages; a BMC cell depends on everything before it.
// - A cell starts only while its servers are held (the run's one maintenance per server is
//   InMaintenance): a server cell needs its server, a BMC cell every server of the run.
// - A version hop the hardware already reached or passed completes at once, without a child.
// - A settings stage without template.version is hydrated with the target's current version.
// - A failed cell stops its lane; the rest of the run goes on as far as it can.
// - A completed child settles (Observe, or Suspend for a superseded hop); settled children are
//   re-activated in place (driftPolicy unset) when a reset (drift, edit) makes their cell run again.
import type { PipelineStage } from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import type { StagePhase } from '../../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import { aggregatePhase } from './phase.js';
import { cellKey, isVersionStage, scopeOf, settledPolicy, type ChildDriftPolicy } from './stages.js';
import { hopReached } from './versions.js';

/** What the run recorded about one cell (its status). */
export interface CellRecord {
  phase: StagePhase;
  /** The child exists (its name is the run's to derive: childName). */
  child: boolean;
  /** Completed without a child: the hop was already reached. */
  reached?: boolean;
  /** The version hydrated into a settings child. */
  version?: string;
}

/** What the run sees of one child. */
export interface ChildView {
  phase: StagePhase;
  /** status.observedGeneration has caught up with metadata.generation: the phase is about this spec. */
  current: boolean;
  driftPolicy?: ChildDriftPolicy;
  version?: string;
}

export interface RunWorld {
  servers: readonly string[];
  /** Children by cellKey. */
  children: ReadonlyMap<string, ChildView>;
  bmcVersion?: string;
  serverVersions: Readonly<Record<string, string | undefined>>;
  /** Servers whose run maintenance is InMaintenance (taint on). */
  held: ReadonlySet<string>;
}

export type PlanAction =
  | { type: 'stamp'; stage: string; server?: string; version?: string }
  | { type: 'activate'; stage: string; server?: string; version?: string }
  | { type: 'settle'; stage: string; server?: string; driftPolicy: ChildDriftPolicy };

export interface Waiting {
  stage: string;
  server?: string;
  why: 'hold' | 'version-unknown' | 'stopping' | 'frozen';
}

export interface RunPlan {
  cells: Map<string, CellRecord>;
  actions: PlanAction[];
  waiting: Waiting[];
  /** Aggregate phase per stage, in stage order. */
  stagePhases: StagePhase[];
  /** Something is in flight or could still start: the run keeps its servers. */
  progressing: boolean;
  /** Servers a startable cell waits to hold. */
  wantsHold: string[];
}

export interface PlanOptions {
  /** The pipeline is being deleted: start nothing, let what runs finish (a safe point). */
  stopping?: boolean;
  /** A pipeline edit waits for a safe point: start nothing new (edit.ts). */
  frozen?: boolean;
}

/**
 * The phase of a cell: the child's own once it speaks about the current spec, else the record's. A
 * cell recorded in progress whose child is gone (an adopted edit deleted it, someone else did, or the
 * cache has not seen a fresh stamp yet) is Pending again: it is stamped again under the same
 * name, which the API refuses while a child of that name still exists, so nothing runs twice.
 */
export function cellPhase(record: CellRecord | undefined, child: ChildView | undefined): StagePhase {
  if (!child)
    return record?.phase === 'InProgress' && record.child ? 'Pending' : (record?.phase ?? 'Pending');
  if (child.driftPolicy !== undefined) return record?.phase ?? 'Completed';
  if (!child.current) return 'InProgress';
  return child.phase;
}

function targetVersion(world: RunWorld, server: string | undefined): string | undefined {
  return server === undefined ? world.bmcVersion : world.serverVersions[server];
}

interface Cell {
  index: number;
  stage: PipelineStage;
  server?: string;
  key: string;
}

function cellsOf(stages: readonly PipelineStage[], servers: readonly string[]): Cell[] {
  return stages.flatMap((stage, index) =>
    scopeOf(stage.kind) === 'BMC'
      ? [{ index, stage, key: cellKey(stage.name) }]
      : servers.map((server) => ({ index, stage, server, key: cellKey(stage.name, server) })),
  );
}

/** Whether every cell `cell` depends on (see the header) completed. */
function gateOpen(cell: Cell, all: readonly Cell[], phase: (c: Cell) => StagePhase): boolean {
  return all
    .filter(
      (c) =>
        c.index < cell.index &&
        (cell.server === undefined || c.server === undefined || c.server === cell.server),
    )
    .every((c) => phase(c) === 'Completed');
}

interface Context {
  stages: readonly PipelineStage[];
  all: readonly Cell[];
  world: RunWorld;
  options: PlanOptions;
  phase: (c: Cell) => StagePhase;
}

type Step =
  | { kind: 'none' }
  | { kind: 'act'; action: PlanAction; record?: CellRecord }
  | { kind: 'reached' }
  | { kind: 'wait'; why: Waiting['why']; hold?: string[] };

const NONE: Step = { kind: 'none' };

/** The versions a child gets: settings stages without one are hydrated from the hardware. */
function hydration(c: Cell, world: RunWorld): { version?: string } | 'unknown' {
  if (isVersionStage(c.stage.kind) || c.stage.template.version !== undefined) return {};
  const version = targetVersion(world, c.server);
  return version === undefined ? 'unknown' : { version };
}

const placeOf = (c: Cell) => ({
  stage: c.stage.name,
  ...(c.server !== undefined ? { server: c.server } : {}),
});

/** What one cell does next. */
function stepOf(c: Cell, rec: CellRecord, ctx: Context): Step {
  const child = ctx.world.children.get(c.key);
  const active = child !== undefined && child.driftPolicy === undefined;
  if (rec.phase === 'Completed' && active && child.current) {
    const driftPolicy = settledPolicy(ctx.stages, c.index);
    return { kind: 'act', action: { type: 'settle', ...placeOf(c), driftPolicy } };
  }
  if (rec.phase !== 'Pending' || active || !gateOpen(c, ctx.all, ctx.phase)) return NONE;
  if (ctx.options.stopping) return { kind: 'wait', why: 'stopping' };
  if (ctx.options.frozen) return { kind: 'wait', why: 'frozen' };
  return startStep(c, child, ctx);
}

/** A cell whose gate is open and that may start: skip a reached hop, else stamp or re-activate. */
function startStep(c: Cell, child: ChildView | undefined, ctx: Context): Step {
  const current = targetVersion(ctx.world, c.server);
  if (isVersionStage(c.stage.kind) && !child && hopReached(current, c.stage.template.version ?? '')) {
    return { kind: 'reached' };
  }
  const needs = c.server === undefined ? ctx.world.servers : [c.server];
  const unheld = needs.filter((s) => !ctx.world.held.has(s));
  if (unheld.length > 0) return { kind: 'wait', why: 'hold', hold: unheld };
  const hydrated = hydration(c, ctx.world);
  if (hydrated === 'unknown') return { kind: 'wait', why: 'version-unknown' };
  return {
    kind: 'act',
    action: { type: child ? 'activate' : 'stamp', ...placeOf(c), ...hydrated },
    record: { phase: 'InProgress', child: true, ...hydrated },
  };
}

export function planRun(
  stages: readonly PipelineStage[],
  recorded: ReadonlyMap<string, CellRecord>,
  world: RunWorld,
  options: PlanOptions = {},
): RunPlan {
  const all = cellsOf(stages, world.servers);
  const cells = new Map<string, CellRecord>();
  for (const c of all) {
    const rec = recorded.get(c.key);
    const child = world.children.get(c.key);
    cells.set(c.key, { ...(rec ?? {}), phase: cellPhase(rec, child), child: child !== undefined });
  }
  const phase = (c: Cell) => cells.get(c.key)?.phase ?? 'Pending';
  const ctx: Context = { stages, all, world, options, phase };
  const actions: PlanAction[] = [];
  const waiting: Waiting[] = [];
  const wantsHold = new Set<string>();
  // In stage order, so a hop found reached opens the gate of the cells after it in the same pass.
  for (const c of all) {
    const step = stepOf(c, cells.get(c.key)!, ctx);
    if (step.kind === 'act') {
      actions.push(step.action);
      if (step.record) cells.set(c.key, step.record);
    } else if (step.kind === 'reached') {
      cells.set(c.key, { phase: 'Completed', child: false, reached: true });
    } else if (step.kind === 'wait') {
      waiting.push({
        stage: c.stage.name,
        ...(c.server !== undefined ? { server: c.server } : {}),
        why: step.why,
      });
      step.hold?.forEach((s) => wantsHold.add(s));
    }
  }
  const stagePhases = stages.map((_, i) => aggregatePhase(all.filter((c) => c.index === i).map(phase)));
  const inFlight = all.some((c) => phase(c) === 'InProgress');
  const startable = waiting.some((w) => w.why !== 'stopping');
  return {
    cells,
    actions,
    waiting,
    stagePhases,
    progressing: inFlight || startable,
    wantsHold: [...wantsHold].sort(),
  };
}
