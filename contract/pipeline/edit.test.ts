// Editing stages while a run progresses: frozen until nothing is in flight, then re-planned from the
// first changed stage; unchanged later stages keep their children, changed and removed ones lose them.
import type { PipelineStage } from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import { planEdit } from './edit.js';
import { cellKey, stageHash } from './stages.js';
import { RunSim } from './testing/run-sim.js';
import { IEP_STAGES, OLD_VERSIONS, SERVERS } from './testing/fixtures.js';

const executed = IEP_STAGES.map((s) => ({ name: s.name, hash: stageHash(s) }));

function edited(): PipelineStage[] {
  const next = structuredClone(IEP_STAGES);
  next[5]!.template.image = { URI: 'http://firmware-repo.internal/bios_v250_fixed.bin' };
  return next.filter((s) => s.name !== 'bmc-post-upgrade');
}

/** A run of the IEP stages to its end, and the edit of it to `next` once nothing is in flight. */
function editAfterCompletion(next: PipelineStage[]) {
  const sim = new RunSim(IEP_STAGES, SERVERS, OLD_VERSIONS);
  sim.runToEnd();
  return { sim, plan: planEdit(executed, next, sim.recorded, SERVERS, false) };
}

describe('planEdit', () => {
  it('waits while a cell is in flight (the run runs frozen: nothing new starts)', () => {
    const sim = new RunSim(IEP_STAGES, SERVERS, OLD_VERSIONS);
    sim.reconcile();
    expect(planEdit(executed, edited(), sim.recorded, SERVERS, true)).toEqual({ adopt: false });
    sim.tick();
    const plan = sim.reconcile({ frozen: true });
    expect(plan.actions).toEqual([]);
  });

  it('keeps the prefix before the first change and re-runs the rest in order', () => {
    const { plan } = editAfterCompletion(edited());
    if (!plan.adopt) throw new Error('expected adoption');
    // bmc-post-upgrade (index 3) was removed: stages from index 3 on run again.
    expect(plan.firstChanged).toBe(3);
    expect(plan.recorded.get(cellKey('bmc-fw-v180'))?.phase).toBe('Completed');
    expect(plan.recorded.get(cellKey('bios-pre-upgrade', 'server-a'))).toEqual({
      phase: 'Pending',
      child: true,
    });
    expect(plan.recorded.get(cellKey('bios-fw-v250', 'server-a'))).toEqual({
      phase: 'Pending',
      child: false,
    });
    expect(plan.deleteChildren).toEqual(
      [cellKey('bmc-post-upgrade'), ...SERVERS.map((s) => cellKey('bios-fw-v250', s))].sort(),
    );
  });

  it('adopts an unchanged list as is', () => {
    const { plan } = editAfterCompletion(IEP_STAGES);
    expect(plan).toMatchObject({ adopt: true, firstChanged: IEP_STAGES.length, deleteChildren: [] });
  });

  it('a re-planned run finishes with the new template, stamping only the changed stage', () => {
    const next = edited();
    const { sim, plan } = editAfterCompletion(next);
    if (!plan.adopt) throw new Error('expected adoption');
    const after = new RunSim(next, SERVERS, OLD_VERSIONS);
    after.bmcVersion = sim.bmcVersion;
    after.serverVersions = { ...sim.serverVersions, 'server-a': 'U54 v2.40' };
    for (const [key, child] of sim.children)
      if (!plan.deleteChildren.includes(key)) after.children.set(key, child);
    after.recorded = plan.recorded;
    const end = after.runToEnd();
    expect(end.stagePhases.every((p) => p === 'Completed')).toBe(true);
    expect([...after.stamps.keys()]).toEqual([cellKey('bios-fw-v250', 'server-a')]);
  });
});
