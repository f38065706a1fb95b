// Attribute resources with a pending-settings object (`@Redfish.Settings`): BIOS, BMC (Manager)
// attributes, Dell's DellAttributes. Reads current and pending values; writes only what differs
// from both, to the settings object, with the apply time and an ETag.
import { isDeepStrictEqual } from 'node:util';
import type { RedfishClient } from './client.js';
import { isHttpStatus, unsupported } from './errors.js';
import { taskFromResponse, type TaskHandle } from './tasks.js';
import type { Resource, SettingsAnnotation } from './types.js';
import { patchResource } from './writes.js';

export type ApplyTime = 'Immediate' | 'OnReset' | 'AtMaintenanceWindowStart' | 'InMaintenanceWindowOnReset';

export interface SettingsState {
  path: string;
  current: Record<string, unknown>;
  /** Values waiting in the settings object that differ from the current ones. */
  pending: Record<string, unknown>;
  /** Where changes are PATCHed: the settings object, or the resource itself when it has none. */
  writePath: string;
  applyTimes?: string[];
  /** ETag of the resource read (header or `@odata.etag`), as received. */
  etag?: string;
  /** The settings object's own ETag, as received; undefined when it has none or cannot be read. */
  settingsEtag?: string;
  /** False when GET of the settings object is refused (AMI `SD`: PATCH-only). */
  settingsReadable: boolean;
  /**
   * `@Redfish.Settings.ETag`: the schema's "ETag of the resource to which the settings were
   * applied, after the application". Equal to `etag` once the BMC has applied the last write.
   */
  appliedEtag?: string;
}

export interface ApplyOptions {
  applyTime?: ApplyTime;
  /** Vendor flag: send an apply time even if none is advertised (Dell creates a job only then). */
  alwaysSendApplyTime?: boolean;
  signal?: AbortSignal;
}

export interface ApplyResult {
  /** What was sent; empty when every value was already current or pending. */
  changed: Record<string, unknown>;
  /** Names already pending with the requested value (not sent again). */
  alreadyPending: string[];
  applyTime?: string;
  /** Set when the BMC answered 202 (a Dell configuration job, for instance). */
  task?: TaskHandle;
}

interface SettingsResource extends Resource {
  Attributes?: Record<string, unknown>;
  '@Redfish.Settings'?: SettingsAnnotation;
}

async function readPending(
  client: RedfishClient,
  path: string,
): Promise<{ attributes: Record<string, unknown>; etag?: string; readable: boolean }> {
  try {
    const res = await client.getWithEtag<SettingsResource>(path);
    return { attributes: res.body?.Attributes ?? {}, etag: res.etag, readable: true };
  } catch (e) {
    // AMI `SD` objects cannot be read back; HPE may hide an empty one.
    if (isHttpStatus(e, 404, 405)) return { attributes: {}, readable: false };
    throw e;
  }
}

function differing(
  current: Record<string, unknown>,
  pending: Record<string, unknown>,
): Record<string, unknown> {
  // Some BMCs echo the whole attribute set as pending; only differences are really pending.
  return Object.fromEntries(Object.entries(pending).filter(([k, v]) => !isDeepStrictEqual(current[k], v)));
}

export async function readSettings(client: RedfishClient, path: string): Promise<SettingsState> {
  const res = await client.getWithEtag<SettingsResource>(path);
  const resource = res.body ?? {};
  const annotation = resource['@Redfish.Settings'];
  const settingsPath = annotation?.SettingsObject?.['@odata.id'];
  const current = resource.Attributes ?? {};
  const separate = settingsPath !== undefined && settingsPath !== path;
  const pending = separate ? await readPending(client, settingsPath) : { attributes: {}, readable: true };
  return {
    path,
    current,
    pending: differing(current, pending.attributes),
    writePath: settingsPath ?? path,
    applyTimes: annotation?.SupportedApplyTimes,
    etag: res.etag,
    settingsEtag: pending.etag,
    settingsReadable: pending.readable,
    appliedEtag: annotation?.ETag,
  };
}

function chooseApplyTime(state: SettingsState, opts: ApplyOptions): string | undefined {
  const requested = opts.applyTime;
  if (requested && state.applyTimes && !state.applyTimes.includes(requested)) {
    throw unsupported(
      `apply time ${requested} not supported by ${state.writePath} (${state.applyTimes.join(', ')})`,
      {
        allowable: state.applyTimes,
      },
    );
  }
  if (requested && (state.applyTimes || opts.alwaysSendApplyTime)) return requested;
  if (opts.alwaysSendApplyTime) return 'OnReset';
  return undefined;
}

/** Writes the attributes of `attrs` that are neither current nor already pending. */
export async function applySettings(
  client: RedfishClient,
  state: SettingsState,
  attrs: Record<string, unknown>,
  opts: ApplyOptions = {},
): Promise<ApplyResult> {
  const changed: Record<string, unknown> = {};
  const alreadyPending: string[] = [];
  for (const [name, value] of Object.entries(attrs)) {
    if (isDeepStrictEqual(state.current[name], value)) continue;
    if (name in state.pending && isDeepStrictEqual(state.pending[name], value)) alreadyPending.push(name);
    else changed[name] = value;
  }
  if (Object.keys(changed).length === 0) return { changed, alreadyPending };
  const applyTime = chooseApplyTime(state, opts);
  const body: Record<string, unknown> = { Attributes: changed };
  if (applyTime) body['@Redfish.SettingsApplyTime'] = { ApplyTime: applyTime };
  const onResource = state.writePath === state.path;
  const res = await patchResource(client, state.writePath, body, {
    etag: onResource ? state.etag : writeEtag(state),
    readEtag: onResource ? undefined : () => settingsObjectEtag(client, state),
    signal: opts.signal,
  });
  const task = res.status === 202 ? taskFromResponse(res) : undefined;
  client.log.info(
    { event: 'redfish.settings.patched', path: state.writePath, attributes: Object.keys(changed), applyTime },
    'settings staged',
  );
  return { changed, alreadyPending, applyTime, task };
}

/**
 * If-Match of a PATCH of the settings object: its own ETag as received (quotes and all). A
 * settings object that cannot be read (AMI `SD`) is guarded by the resource it applies to, so
 * that resource's ETag goes instead; the annotation's `ETag` is only a stand-in for it.
 */
function writeEtag(state: SettingsState): string | undefined {
  if (state.settingsReadable) return state.settingsEtag;
  return state.etag ?? state.appliedEtag;
}

/** Fresh If-Match for the settings object after a 412/428 (same rule as `writeEtag`). */
async function settingsObjectEtag(client: RedfishClient, state: SettingsState): Promise<string | undefined> {
  const fresh = await readPending(client, state.writePath);
  if (fresh.readable) return fresh.etag;
  const parent = await client.getWithEtag<SettingsResource>(state.path);
  return parent.etag ?? parent.body?.['@Redfish.Settings']?.ETag;
}
