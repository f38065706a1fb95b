// Power: `ComputerSystem.Reset` checked against the values the BMC allows, and polling of
// `PowerState` against a deadline. Every wait is bounded.
import type { Bmc } from './bmc.js';
import { sleep } from './client.js';
import { RedfishErrorCode, RedfishError, timeout, unsupported } from './errors.js';
import { checkAllowed, findAction, type ActionRef } from './navigation.js';
import type { ComputerSystem, PowerState, ResetType } from './types.js';

export interface PowerWaitOptions {
  /** Deadline for the state to be reached, in ms. */
  timeoutMs: number;
  /** Poll interval. Default 1 s. */
  pollMs?: number;
  signal?: AbortSignal;
}

export interface SetPowerOptions extends PowerWaitOptions {
  /** For Off: try GracefulShutdown first, ForceOff after `graceMs`. Default true. */
  graceful?: boolean;
  /** How long a graceful shutdown may take before ForceOff. Default half of timeoutMs. */
  graceMs?: number;
}

export async function powerState(bmc: Bmc, signal?: AbortSignal): Promise<PowerState | undefined> {
  const system = await bmc.client.get<ComputerSystem>(bmc.systemPath, { signal });
  return system.PowerState;
}

async function resetAction(bmc: Bmc, system?: ComputerSystem): Promise<ActionRef> {
  return findAction(bmc.client, system ?? (await bmc.system()), 'ComputerSystem.Reset', 'ResetType');
}

/** POSTs one reset after checking the BMC allows `type`. Accepts 200, 202 and 204. */
export async function reset(bmc: Bmc, type: ResetType, signal?: AbortSignal): Promise<void> {
  const action = await resetAction(bmc);
  checkAllowed(action, type, 'ResetType');
  await bmc.client.post(action.target, { ResetType: type }, { signal });
  bmc.client.log.info({ event: 'redfish.reset', resetType: type }, 'system reset requested');
}

/** Polls PowerState until it equals `want`; METAL_ERR_REDFISH_TIMEOUT at the deadline. */
/**
 * Polls PowerState until `want`. `reportedMs` is the timeout the error names: a caller that spent
 * part of its budget already (setPower after a graceful attempt) still reports its whole timeout.
 */
export async function waitForPowerState(
  bmc: Bmc,
  want: 'On' | 'Off',
  opts: PowerWaitOptions,
  reportedMs = opts.timeoutMs,
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let last: PowerState | undefined;
  for (;;) {
    try {
      last = await powerState(bmc, opts.signal);
      if (last === want) return;
    } catch (e) {
      // The BMC may be briefly unreachable while the host cycles; the deadline bounds this.
      if (!(e instanceof RedfishError) || e.code !== RedfishErrorCode.Connection) throw e;
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      throw timeout(`PowerState did not become ${want} within ${reportedMs} ms (last ${last ?? 'unknown'})`, {
        path: bmc.systemPath,
        powerState: last,
        timeoutMs: reportedMs,
      });
    }
    await sleep(Math.min(opts.pollMs ?? 1_000, left), opts.signal);
  }
}

function firstAllowed(action: ActionRef, preferred: ResetType[]): ResetType | undefined {
  return action.allowable ? preferred.find((t) => action.allowable!.includes(t)) : preferred[0];
}

/**
 * Brings the system to `want` and waits for it. Returns `changed: false` when it already was
 * there, so a retried reconcile does not reset twice.
 */
export async function setPower(
  bmc: Bmc,
  want: 'On' | 'Off',
  opts: SetPowerOptions,
): Promise<{ changed: boolean }> {
  const system = await bmc.system();
  if (system.PowerState === want) return { changed: false };
  const action = await resetAction(bmc, system);
  if (want === 'On') {
    const type = firstAllowed(action, ['On', 'ForceOn', 'PushPowerButton']);
    if (!type) throw unsupported('the BMC allows no reset type that powers on');
    await bmc.client.post(action.target, { ResetType: type }, { signal: opts.signal });
    await waitForPowerState(bmc, 'On', opts);
    return { changed: true };
  }
  const started = Date.now();
  const graceful = opts.graceful !== false && firstAllowed(action, ['GracefulShutdown']);
  if (graceful) {
    await bmc.client.post(action.target, { ResetType: 'GracefulShutdown' }, { signal: opts.signal });
    try {
      await waitForPowerState(bmc, 'Off', { ...opts, timeoutMs: opts.graceMs ?? opts.timeoutMs / 2 });
      return { changed: true };
    } catch (e) {
      if (!(e instanceof RedfishError) || e.code !== RedfishErrorCode.Timeout) throw e;
      bmc.client.log.warn({ event: 'redfish.power.force' }, 'graceful shutdown timed out; forcing off');
    }
  }
  const force = firstAllowed(action, ['ForceOff']);
  if (!force) throw unsupported('the BMC allows no ForceOff');
  await bmc.client.post(action.target, { ResetType: force }, { signal: opts.signal });
  await waitForPowerState(
    bmc,
    'Off',
    { ...opts, timeoutMs: Math.max(1, opts.timeoutMs - (Date.now() - started)) },
    opts.timeoutMs,
  );
  return { changed: true };
}

/**
 * Reboots: powers on a system that is off, otherwise the first allowed of GracefulRestart,
 * ForceRestart, PowerCycle (`force` skips the graceful one). Waits until it reports On.
 */
export async function restart(bmc: Bmc, opts: PowerWaitOptions & { force?: boolean }): Promise<ResetType> {
  const system = await bmc.system();
  const action = await resetAction(bmc, system);
  const order: ResetType[] = system.PowerState === 'Off' ? ['On', 'ForceOn'] : ['ForceRestart', 'PowerCycle'];
  if (system.PowerState !== 'Off' && !opts.force) order.unshift('GracefulRestart');
  const type = firstAllowed(action, order);
  if (!type) throw unsupported(`the BMC allows none of ${order.join(', ')}`);
  await bmc.client.post(action.target, { ResetType: type }, { signal: opts.signal });
  await waitForPowerState(bmc, 'On', opts);
  return type;
}
