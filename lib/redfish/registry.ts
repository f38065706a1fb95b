// Attribute registries (`Registries`): what a BMC publishes about the attributes of a BIOS or of
// its own (Manager, Dell's DellAttributes) resources: types, bounds, read-only flags, and whether a
// change needs a reset. Checked before anything is written, so a refusal names the attribute.
import type { Bmc } from './bmc.js';
import { members } from './navigation.js';
import type { SettingsState } from './settings.js';
import type { AttributeRegistry, AttributeRegistryEntry, Resource } from './types.js';

interface MessageRegistryFile extends Resource {
  Registry?: string;
  Location?: { Uri?: string; PublicationUri?: string }[];
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
  if (isReadOnly(entry)) return `${entry.AttributeName} is read-only`;
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

/** Whether the registry marks the entry read-only (Dell spells the flag `Readonly`). */
export function isReadOnly(entry: AttributeRegistryEntry): boolean {
  return entry.ReadOnly === true || entry.Readonly === true;
}

/** The registry an attribute resource names in `AttributeRegistry`, when the BMC publishes it. */
export async function registryOf(bmc: Bmc, state: SettingsState): Promise<AttributeRegistry | undefined> {
  return state.attributeRegistry ? fetchRegistry(bmc, state.attributeRegistry) : undefined;
}

/**
 * The names among `names` that the registries of these resources mark read-only. A resource that
 * names no registry, or one the BMC does not serve, marks nothing (the write itself is then the
 * last word, and its refusal is reported as the BMC's answer).
 */
export async function readOnlyAmong(
  bmc: Bmc,
  states: readonly SettingsState[],
  names: readonly string[],
): Promise<string[]> {
  const wanted = new Set(names);
  const out = new Set<string>();
  const seen = new Set<string>();
  for (const state of states) {
    const name = state.attributeRegistry;
    if (!name || seen.has(name)) continue;
    seen.add(name);
    const registry = await fetchRegistry(bmc, name).catch(() => undefined);
    for (const e of registry?.RegistryEntries?.Attributes ?? [])
      if (wanted.has(e.AttributeName) && isReadOnly(e)) out.add(e.AttributeName);
  }
  return [...out];
}
