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
  /** ETag of the resource read, and of the settings object from the annotation. */
  etag?: string;
  settingsEtag?: string;
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
): Promise<{ attributes: Record<string, unknown>; etag?: string }> {
  try {
    const res = await client.getWithEtag<SettingsResource>(path);
    return { attributes: res.body?.Attributes ?? {}, etag: res.etag };
  } catch (e) {
    // AMI `SD` objects cannot be read back; HPE may hide an empty one.
    if (isHttpStatus(e, 404, 405)) return { attributes: {} };
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
  const pending = separate ? await readPending(client, settingsPath) : { attributes: {} };
  return {
    path,
    current,
    pending: differing(current, pending.attributes),
    writePath: settingsPath ?? path,
    applyTimes: annotation?.SupportedApplyTimes,
    etag: res.etag,
    settingsEtag: pending.etag ?? annotation?.ETag,
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
    etag: onResource ? state.etag : state.settingsEtag,
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

/** Fresh ETag of the settings object; the parent's annotation when the object cannot be read. */
async function settingsObjectEtag(client: RedfishClient, state: SettingsState): Promise<string | undefined> {
  const fresh = await readPending(client, state.writePath);
  if (fresh.etag) return fresh.etag;
  const parent = await client.get<SettingsResource>(state.path);
  return parent['@Redfish.Settings']?.ETag;
}
