// childWorld: what the planner sees of a run's children and holds.
import { describe, expect, it } from '@jest/globals';
import { PIPELINE_TAINT_KEY } from '../../contract/names.js';
import { childName } from '../../contract/pipeline/status.js';
import type { Child } from './model.js';
import { FakeRunWorld, NS, pipelineOf } from './testing/fake-world.js';
import { childWorld } from './world.js';

const STAGES = [{ name: 'tune', kind: 'BIOSSettings' as const, template: { version: '1' } }];
const RUN = 'fleet-bmc-1';

function tuneChild(extra: Partial<Child['metadata']> = {}, status?: Child['status']): Child {
  return {
    apiVersion: 'system.metal.ironcore.dev/v1alpha1',
    kind: 'BIOSSettings',
    metadata: { name: childName(RUN, 'tune', 's1'), generation: 2, ...extra },
    spec: { serverRef: { name: 's1' } },
    ...(status ? { status } : {}),
  };
}

function input(w: FakeRunWorld, child: Child) {
  return {
    run: w.run,
    admitted: true,
    children: new Map([[child.metadata.name ?? '', child]]),
    maintenances: new Map(),
    servers: w.servers,
    now: w.now,
    namespace: NS,
  };
}

describe('childWorld', () => {
  it("reads a child's phase only once it speaks about the current spec", () => {
    const w = new FakeRunWorld(pipelineOf(STAGES), ['s1']);
    const stale = childWorld(input(w, tuneChild({}, { state: 'Applied', observedGeneration: 1 })), STAGES, [
      's1',
    ]);
    expect(stale.children.get('tune/s1')).toMatchObject({ phase: 'Completed', current: false });
    const fresh = childWorld(input(w, tuneChild({}, { state: 'Applied', observedGeneration: 2 })), STAGES, [
      's1',
    ]);
    expect(fresh.children.get('tune/s1')).toMatchObject({ phase: 'Completed', current: true });
  });

  it('does not see a child being deleted (an adopted edit removed it; its state is about an old template)', () => {
    const w = new FakeRunWorld(pipelineOf(STAGES), ['s1']);
    const going = tuneChild(
      { deletionTimestamp: '2026-12-03T10:00:00Z' },
      { state: 'Applied', observedGeneration: 2 },
    );
    expect(childWorld(input(w, going), STAGES, ['s1']).children.size).toBe(0);
  });

  it('holds a server only when its maintenance is InMaintenance and the run taint is on', () => {
    const w = new FakeRunWorld(pipelineOf(STAGES), ['s1']);
    w.settle();
    w.admitAll();
    const m = new Map([...w.maintenances.values()].map((x) => [x.spec.serverRef.name, x] as const));
    const seen = (taints: boolean) => {
      w.servers.get('s1')!.spec.taints = taints
        ? [{ key: PIPELINE_TAINT_KEY, value: RUN, effect: 'NoBind' }]
        : [];
      return childWorld({ ...input(w, tuneChild()), maintenances: m }, STAGES, ['s1']).held;
    };
    expect(seen(true)).toEqual(new Set(['s1']));
    expect(seen(false)).toEqual(new Set());
  });
});
