// The BMC itself (Manager): its attributes (on the Manager, or Dell's DellAttributes resources),
// `Manager.Reset`, and waiting for the BMC to come back after one.
import type { Bmc } from './bmc.js';
import { sleep } from './client.js';
import { invalid, isRedfishError, RedfishErrorCode, timeout, unsupported } from './errors.js';
import { checkAllowed, findAction } from './navigation.js';
import {
  applySettings,
  readSettings,
  type ApplyOptions,
  type ApplyResult,
  type SettingsState,
} from './settings.js';
import type { Manager } from './types.js';

/**
 * The resources that hold BMC attributes: the vendor's (Dell `DellAttributes`), else the Manager
 * itself when it carries `Attributes` (metal-operator's mock, some newer firmware). A Manager with
 * neither is refused with a coded error that says where that family keeps its settings instead.
 */
async function attributePaths(bmc: Bmc): Promise<string[]> {
  const path = bmc.requireManager();
  const manager = await bmc.manager();
  const fromVendor = bmc.vendor.hooks.managerAttributePaths?.(manager) ?? [];
  if (fromVendor.length > 0) return fromVendor;
  const own = manager.Attributes;
  if (own && typeof own === 'object') return [path];
  const elsewhere = bmc.vendor.managerSettingsElsewhere;
  throw unsupported(
    `this BMC (${bmc.vendor.name}) exposes no Manager attributes at ${path}${elsewhere ? `: ${elsewhere}` : ''}`,
    { path, reason: 'no-manager-attributes', vendor: bmc.vendor.name },
  );
}

/** Current and pending attributes of every attribute resource of the BMC. */
export async function readManagerAttributes(bmc: Bmc): Promise<SettingsState[]> {
  const out: SettingsState[] = [];
  for (const path of await attributePaths(bmc)) out.push(await readSettings(bmc.client, path));
  return out;
}

/** Stages BMC attributes, each on the resource that holds it. Default apply time: the BMC's. */
export async function setManagerAttributes(
  bmc: Bmc,
  attrs: Record<string, unknown>,
  opts: Omit<ApplyOptions, 'alwaysSendApplyTime'> = {},
): Promise<ApplyResult[]> {
  const states = await readManagerAttributes(bmc);
  const routed = new Map<SettingsState, Record<string, unknown>>();
  for (const [name, value] of Object.entries(attrs)) {
    const state = states.find((s) => name in s.current);
    if (!state) throw invalid(`BMC attribute ${name} is not exposed by this BMC`);
    routed.set(state, { ...routed.get(state), [name]: value });
  }
  const results: ApplyResult[] = [];
  for (const [state, part] of routed) results.push(await applySettings(bmc.client, state, part, opts));
  return results;
}

/** `Manager.Reset`, checked against the allowable values. The BMC drops off afterwards. */
export async function resetManager(
  bmc: Bmc,
  type: 'GracefulRestart' | 'ForceRestart' = 'GracefulRestart',
): Promise<void> {
  const manager = await bmc.manager();
  const action = await findAction(bmc.client, manager, 'Manager.Reset', 'ResetType');
  checkAllowed(action, type, 'Manager ResetType');
  await bmc.client.post(action.target, { ResetType: type });
  bmc.client.log.info({ event: 'redfish.manager.reset', resetType: type }, 'BMC reset requested');
}

/**
 * Waits until the Manager answers again after a reset: connection errors and 5xx count as
 * "still down". The session is re-established by the client on the first 401.
 */
export async function waitForManager(
  bmc: Bmc,
  opts: { timeoutMs: number; pollMs?: number; signal?: AbortSignal },
): Promise<Manager> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    try {
      return await bmc.client.get<Manager>(bmc.requireManager(), { signal: opts.signal, timeoutMs: 5_000 });
    } catch (e) {
      const down =
        isRedfishError(e, RedfishErrorCode.Connection) ||
        isRedfishError(e, RedfishErrorCode.Timeout) ||
        (isRedfishError(e, RedfishErrorCode.Http) && (e.status ?? 0) >= 500);
      if (!down) throw e;
    }
    const left = deadline - Date.now();
    if (left <= 0)
      throw timeout(`BMC did not come back within ${opts.timeoutMs} ms`, { path: bmc.managerPath });
    await sleep(Math.min(opts.pollMs ?? 2_000, left), opts.signal);
  }
}
