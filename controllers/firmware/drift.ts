// A child a MaintenancePipelineRun settled (spec.driftPolicy, docs/pipeline.md): Suspend is not
// reconciled at all; Observe only reads the hardware and says whether it still matches: a match is
// Completed (Applied), a difference is Pending with Progressing=False/DriftDetected. Observe never
// requests a maintenance and never writes to the BMC; the run decides what a drift means.
import { compareVersions } from '../../contract/pipeline/versions.js';
import type { Draft } from './draft.js';
import {
  ConditionTypes as C,
  TARGET,
  type Decision,
  type FirmwareWorld,
  type SettingsObject,
  type VersionObject,
} from './model.js';
import type { FirmwareObservation } from './port.js';
import { attributeNames, differing, orderedFlow } from './settings.js';

/** How often an observing child looks at its hardware: drift is slow, the BMC's time is not free. */
export const observeIntervalMs = (pollMs: number) => Math.max(2_000, pollMs * 10);

const isVersion = (d: Draft) => d.kind.endsWith('Version');

/** What differs from the spec, or undefined when the hardware still matches. */
function driftOf(d: Draft, obs: FirmwareObservation): string | undefined {
  if (isVersion(d)) {
    const target = (d.obj as VersionObject).spec.version;
    const running = obs.version;
    if (running === undefined || running === target) return undefined;
    // Past the hop (a later hop, or someone upgraded further) is not drift for this child.
    if (compareVersions(target, running) === -1) return undefined;
    return `running ${running}, the stage left ${target}`;
  }
  const attrs = obs.attributes;
  if (!attrs) return undefined;
  const changed = orderedFlow(d.obj as SettingsObject).flatMap((i) => Object.keys(differing(i, attrs)));
  return changed.length > 0 ? `changed since applied: ${changed.slice(0, 10).join(', ')}` : undefined;
}

export function decideObserve(d: Draft, world: FirmwareWorld): Decision {
  const again = observeIntervalMs(d.ctx.pollMs);
  d.status.observedGeneration = d.obj.metadata.generation;
  if (!world.access.ok) return d.act([], again);
  if (!world.bmc) {
    const target = TARGET[d.kind];
    const request = isVersion(d)
      ? { target, version: true }
      : { target, attributes: attributeNames(d.obj as SettingsObject) };
    return { kind: 'observe', request };
  }
  if (!world.bmc.ok) return d.act([], again);
  const drift = driftOf(d, world.bmc.observation);
  const done = isVersion(d) ? 'Completed' : 'Applied';
  if (drift) {
    if (d.status.state !== 'Pending') d.event('Warning', 'DriftDetected', drift);
    d.status.state = 'Pending';
    d.cond(C.Progressing, 'False', 'DriftDetected', drift);
  } else if (d.status.state !== done) {
    d.settle(done, 'observed: the hardware matches the spec');
  }
  return d.act([], again);
}
