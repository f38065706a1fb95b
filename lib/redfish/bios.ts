// BIOS attributes: read current and pending values, validate against the attribute registry,
// stage changes through `@Redfish.Settings` with an apply time.
import type { Bmc } from './bmc.js';
import { invalid } from './errors.js';
import { members, requireLink } from './navigation.js';
import {
  applySettings,
  readSettings,
  type ApplyOptions,
  type ApplyResult,
  type SettingsState,
} from './settings.js';
import type { AttributeRegistry, AttributeRegistryEntry, Resource } from './types.js';

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
    const registry = opts.registry === 'fetch' ? await registryOf(bmc, state.path) : opts.registry;
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

interface MessageRegistryFile extends Resource {
  Registry?: string;
  Location?: { Uri?: string; PublicationUri?: string }[];
}

/** The registry the Bios resource names in `AttributeRegistry`, when the BMC publishes it. */
async function registryOf(bmc: Bmc, biosPath: string): Promise<AttributeRegistry | undefined> {
  const bios = await bmc.client.get<Resource & { AttributeRegistry?: string }>(biosPath);
  return typeof bios.AttributeRegistry === 'string' ? fetchRegistry(bmc, bios.AttributeRegistry) : undefined;
}

/** Fetches the attribute registry named by a resource's `AttributeRegistry` from `Registries`. */
export async function fetchRegistry(bmc: Bmc, name: string): Promise<AttributeRegistry | undefined> {
  const registries = bmc.root.Registries as { '@odata.id'?: string } | undefined;
  if (!registries?.['@odata.id']) return undefined;
  const files = await members<MessageRegistryFile>(bmc.client, registries['@odata.id']);
  const file = files.find((f) => f.Id === name || f.Registry === name || (f.Registry ?? '').startsWith(name));
  const uri = file?.Location?.find((l) => l.Uri)?.Uri;
  return uri ? bmc.client.get<AttributeRegistry>(uri) : undefined;
}

type Check = (entry: AttributeRegistryEntry, value: unknown) => string | undefined;

const CHECKS: Record<string, Check> = {
  Enumeration: (e, v) => {
    const names = (e.Value ?? []).flatMap((x) => [x.ValueName, x.ValueDisplayName]);
    return names.includes(v as string)
      ? undefined
      : `${e.AttributeName}: ${JSON.stringify(v)} is not one of its values`;
  },
  Integer: (e, v) => {
    if (typeof v !== 'number' || !Number.isInteger(v)) return `${e.AttributeName} must be an integer`;
    if (e.LowerBound !== undefined && v < e.LowerBound) return `${e.AttributeName} is below ${e.LowerBound}`;
    if (e.UpperBound !== undefined && v > e.UpperBound) return `${e.AttributeName} is above ${e.UpperBound}`;
    return undefined;
  },
  Boolean: (e, v) => (typeof v === 'boolean' ? undefined : `${e.AttributeName} must be a boolean`),
  String: (e, v) => {
    if (typeof v !== 'string') return `${e.AttributeName} must be a string`;
    return e.MaxLength !== undefined && v.length > e.MaxLength ? `${e.AttributeName} is too long` : undefined;
  },
};
CHECKS.Password = CHECKS.String!;

function checkEntry(entry: AttributeRegistryEntry, value: unknown): string | undefined {
  // Dell spells the flag `Readonly`.
  if (entry.ReadOnly === true || entry.Readonly === true) return `${entry.AttributeName} is read-only`;
  return CHECKS[entry.Type ?? '']?.(entry, value);
}

/** Problems of `attrs` against the registry; empty when all are acceptable. */
export function validateAttributes(registry: AttributeRegistry, attrs: Record<string, unknown>): string[] {
  const entries = new Map((registry.RegistryEntries?.Attributes ?? []).map((e) => [e.AttributeName, e]));
  const problems: string[] = [];
  for (const [name, value] of Object.entries(attrs)) {
    const entry = entries.get(name);
    const problem = entry ? checkEntry(entry, value) : `${name} is not in the registry`;
    if (problem) problems.push(problem);
  }
  return problems;
}

/** Attribute names among `attrs` that the registry does not mark `ResetRequired: false`. */
export function needsReset(registry: AttributeRegistry, attrs: Record<string, unknown>): string[] {
  const entries = registry.RegistryEntries?.Attributes ?? [];
  return entries
    .filter((e) => e.AttributeName in attrs && e.ResetRequired !== false)
    .map((e) => e.AttributeName);
}
