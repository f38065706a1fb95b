// The boot decision at its start, while it holds, and at its end.
import { findCondition } from '../../contract/conditions.js';
import type { Draft } from './draft.js';
import { hasStarted } from './gate.js';
import { ConditionTypes as C, type BootWorld, type Decision, type ServerBoot } from './model.js';
import { fail } from './fail.js';

const HOLD_RECHECK_MS = 5 * 60_000;

export function specProblem(boot: ServerBoot): string | undefined {
  if (boot.spec.method === 'Pxe') return undefined;
  let url: URL;
  try {
    url = new URL(boot.spec.image);
  } catch {
    return `image ${JSON.stringify(boot.spec.image)} is not a URL; ${boot.spec.method} needs an http(s) URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `image URL scheme ${url.protocol} is not http or https`;
  }
  return undefined;
}

export function hold(d: Draft, reason: string, message: string): Decision {
  d.cond(C.Admitted, 'False', reason, message).message(`held: ${message}`);
  if (findCondition(d.boot.status?.conditions, C.Admitted)?.reason !== reason)
    d.event('Normal', 'Held', message);
  return d.act([], HOLD_RECHECK_MS);
}

export function start(d: Draft, world: BootWorld): Decision {
  const problem = specProblem(d.boot);
  if (problem) return fail(d, world, 'Pending', 'InvalidSpec', problem);
  d.cond(C.Admitted, 'True', 'Admitted', admittedMessage(d.boot));
  if (!world.access.ok) {
    d.cond(C.BMCReady, 'False', world.access.reason, world.access.message);
    return d.message(`waiting for BMC access: ${world.access.message}`).act([], d.ctx.retryMs);
  }
  d.to(
    'PreparingMedia',
    `booting ${d.boot.spec.serverRef.name} into ${d.boot.spec.image} by ${d.boot.spec.method}`,
  );
  return d.act([], 0);
}

export function admittedMessage(boot: ServerBoot): string {
  const m = boot.spec.maintenanceRef?.name;
  return m
    ? `maintenance ${boot.metadata.namespace ?? ''}/${m} is InMaintenance`
    : 'the server is not claimed';
}

/** The maintenance ended (or the server was claimed): restore, then Completed. */
export function endBoot(d: Draft, reason: string, message: string): Decision {
  d.cond(C.Admitted, 'False', reason, message);
  if (!hasStarted(d.boot)) {
    d.cond(C.Restored, 'True', 'NothingChanged', 'the boot ended before it changed anything');
    return d.to('Completed', `ended before it started: ${message}`).act([]);
  }
  return d.to('Restoring', `ending: ${message}; restoring the previous boot settings`).act([], 0);
}
