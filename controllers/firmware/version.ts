// BIOSVersion / BMCVersion: read the running version; at target, Completed without a maintenance.
// Otherwise, inside the admitted maintenance(s): SimpleUpdate (once: a task found on the BMC after
// a crash is adopted, never started again), follow the task, reset if the new version is not
// running yet, wait for the BMC or host to come back, verify, release.
//
//   Pending -> RequestingMaintenance -> WaitingForMaintenance -> Issuing -> Flashing
//           -> [Rebooting] -> Verifying -> Completed          (any timed phase -> Failed)
import type { Draft } from './draft.js';
import { fail, poll } from './flow.js';
import {
  ConditionTypes as C,
  TARGET,
  type Decision,
  type FirmwareWorld,
  type VersionObject,
} from './model.js';
import type { FirmwareObservation, TaskView } from './port.js';

const FAILED_TASK_STATES = new Set(['Exception', 'Killed', 'Cancelled', 'Interrupted', 'Suspended']);

/** Numeric-aware comparison of versions ("1.10.0" > "1.9.2"); negative when a < b. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.\-_]/);
  const pb = b.split(/[.\-_]/);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? '';
    const y = pb[i] ?? '';
    const nx = /^\d+$/.test(x) ? Number(x) : NaN;
    const ny = /^\d+$/.test(y) ? Number(y) : NaN;
    const c = !Number.isNaN(nx) && !Number.isNaN(ny) ? nx - ny : x.localeCompare(y);
    if (c !== 0) return c;
  }
  return 0;
}

const spec = (d: Draft) => (d.obj as VersionObject).spec;

function taskStatus(t: TaskView) {
  return { URI: t.uri, state: t.state, status: t.status, percentageComplete: t.percent };
}

function describeTask(t: TaskView): string {
  return `task ${t.uri} ${t.state}${t.percent !== undefined ? ` ${t.percent}%` : ''}${t.message ? `: ${t.message}` : ''}`;
}

/** Pending: already there, a refused downgrade, or the start of an attempt (returned as undefined). */
export function versionPending(d: Draft, obs: FirmwareObservation): Decision | 'start' {
  const target = spec(d).version;
  const running = obs.version;
  if (running === target) {
    d.settle('Completed', `${TARGET[d.kind]} already runs ${target}`);
    d.cond(
      C.VersionUpgradeCompleted,
      'True',
      'AlreadyAtTarget',
      `running version ${running} equals the target`,
    );
    return d.act([]);
  }
  if (running !== undefined && compareVersions(target, running) < 0 && spec(d).updatePolicy !== 'Force') {
    const text = `Pending: ${target} is older than the running ${running}; set spec.updatePolicy: Force to downgrade`;
    d.settle('Failed', text).cond(C.Failed, 'True', 'DowngradeRefused', text);
    d.event('Warning', 'DowngradeRefused', text);
    return d.act([]);
  }
  return 'start';
}

function verifying(d: Draft, why: string): Decision {
  d.enter('Verifying', why);
  return d.act([], 0);
}

export function versionPhase(d: Draft, world: FirmwareWorld, obs: FirmwareObservation): Decision {
  const target = spec(d).version;
  const image = spec(d).image;
  switch (d.phase) {
    case 'Issuing': {
      if (obs.version === target) return verifying(d, `the BMC reports ${target} already`);
      const adopt = obs.tasks?.find((t) => t.image === image.URI && !FAILED_TASK_STATES.has(t.state));
      if (adopt) {
        d.status.upgradeTask = taskStatus(adopt);
        d.cond(C.VersionUpgradeIssued, 'True', 'UpgradeIssued', `adopted ${describeTask(adopt)}`);
        d.enter('Flashing', describeTask(adopt));
        return d.act([], 0);
      }
      d.status.upgradeTask = { state: 'New' };
      d.cond(C.VersionUpgradeIssued, 'True', 'UpgradeIssued', `SimpleUpdate ${image.URI}`);
      d.enter('Flashing', `SimpleUpdate of ${image.URI} accepted`);
      d.event('Normal', 'UpgradeIssued', `SimpleUpdate ${TARGET[d.kind]} to ${target} from ${image.URI}`);
      const action = {
        kind: 'simpleUpdate' as const,
        target: TARGET[d.kind],
        image: {
          uri: image.URI,
          transferProtocol: image.transferProtocol,
          secretRef: image.secretRef,
          force: spec(d).updatePolicy === 'Force',
        },
      };
      return d.act([action], 0);
    }
    case 'Flashing': {
      const task = obs.task;
      if (!task) {
        if (obs.version === target) return verifying(d, `the BMC reports ${target}`);
        return d.act([], poll(d, 'Flashing'));
      }
      d.status.upgradeTask = taskStatus(task);
      if (FAILED_TASK_STATES.has(task.state)) return fail(d, world, 'UpgradeTaskFailed', describeTask(task));
      if (task.state !== 'Completed') {
        d.enter('Flashing', describeTask(task));
        return d.act([], poll(d, 'Flashing'));
      }
      if (obs.version === target) return verifying(d, `${describeTask(task)}; running ${target}`);
      d.enter(
        'Rebooting',
        `${describeTask(task)}; running ${obs.version ?? 'unknown'}, resetting to activate`,
      );
      d.event(
        'Normal',
        'ResetIssued',
        `resetting the ${TARGET[d.kind] === 'BMC' ? 'BMC' : 'server'} to activate ${target}`,
      );
      return d.act([{ kind: 'reset', target: TARGET[d.kind] }], poll(d, 'Rebooting'));
    }
    case 'Rebooting':
      if (obs.version === target) return verifying(d, `back after the reset, running ${target}`);
      d.enter('Rebooting', `back, running ${obs.version ?? 'unknown'}; waiting for ${target}`);
      return d.act([], poll(d, 'Rebooting'));
    case 'Verifying': {
      if (obs.version !== target)
        return fail(d, world, 'VersionMismatch', `read back ${obs.version ?? 'nothing'}, expected ${target}`);
      d.settle('Completed', `running ${target}, verified by read-back`);
      d.cond(
        C.VersionUpgradeCompleted,
        'True',
        'UpgradeTaskCompleted',
        `running version ${target} read back`,
      );
      d.event('Normal', 'UpgradeCompleted', `${TARGET[d.kind]} runs ${target}; releasing the maintenance`);
      // Settled first, released next (decide: settled objects release what is left).
      return d.act([], 0);
    }
    default:
      return d.act([]);
  }
}
