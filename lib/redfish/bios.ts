// BIOS attributes: read current and pending values, validate against the attribute registry,
// stage changes through `@Redfish.Settings` with an apply time.
import type { Bmc } from './bmc.js';
import { invalid } from './errors.js';
import { requireLink } from './navigation.js';
import { registryOf, validateAttributes } from './registry.js';
import {
  applySettings,
  readSettings,
  type ApplyOptions,
  type ApplyResult,
  type SettingsState,
} from './settings.js';
import type { AttributeRegistry } from './types.js';

export async function biosPath(bmc: Bmc): Promise<string> {
  return requireLink(await bmc.system(), 'Bios');
}

export async function readBios(bmc: Bmc): Promise<SettingsState> {
  return readSettings(bmc.client, await biosPath(bmc));
}

export interface BiosOptions extends Omit<ApplyOptions, 'alwaysSendApplyTime'> {
  /**
   * Validate names, types, bounds and read-only flags first: against this registry, or `fetch`
   * the one the Bios names (when the BMC publishes none, names not in `Attributes` are unknown).
   */
  registry?: AttributeRegistry | 'fetch';
}

/** A problem of one attribute, found before anything is written. */
export interface AttributeProblem {
  attribute: string;
  problem: string;
}

/** Stages BIOS attributes; by default they apply at the next reset. */
export async function setBiosAttributes(
  bmc: Bmc,
  attrs: Record<string, unknown>,
  opts: BiosOptions = {},
): Promise<ApplyResult> {
  const state = await readBios(bmc);
  if (opts.registry) {
    const registry = opts.registry === 'fetch' ? await registryOf(bmc, state) : opts.registry;
    const problems = registry
      ? validateAttributes(registry, attrs)
      : Object.keys(attrs)
          .filter((name) => !(name in state.current))
          .map((name) => `${name} is not an attribute of this BIOS`);
    if (problems.length > 0) {
      throw invalid(`BIOS attributes rejected: ${problems.join('; ')}`, {
        attributes: problems.map((p) => p.split(/[ :]/, 1)[0]!),
        problems,
      });
    }
  }
  return applySettings(bmc.client, state, attrs, {
    ...opts,
    alwaysSendApplyTime: bmc.vendor.settings.alwaysSendApplyTime,
  });
}
