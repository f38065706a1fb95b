// Attribute resources with a pending-settings object (`@Redfish.Settings`): BIOS, BMC (Manager)
// attributes, Dell's DellAttributes. Reads current and pending values; writes only what differs
// from both, to the settings object, with the apply time and an ETag.
import { isDeepStrictEqual } from 'node:util';
import type { RedfishClient } from './client.js';
import { isHttpStatus, unsupported } from './errors.js';
import { taskFromResponse, type TaskHandle } from './tasks.js';
import type { Resource, SettingsAnnotation } from './types.js';
import { confirmWrite, patchResource, type ConfirmOptions } from './writes.js';

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
  /** The attribute registry the resource names (`AttributeRegistry`), when it names one. */
  attributeRegistry?: string;
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
  /** How long the read-back after the PATCH may take to show the values (default 10 s). */
  confirm?: ConfirmOptions;
}

export interface ApplyResult {
  /** What was sent; empty when every value was already current or pending. */
  changed: Record<string, unknown>;
  /** Names already pending with the requested value (not sent again). */
  alreadyPending: string[];
  applyTime?: string;
  /** Set when the BMC answered 202 (a Dell configuration job, for instance). */
  task?: TaskHandle;
  /** Set when the requested apply time was not offered: what happened instead, and why. */
  applyTimeFallback?: ApplyTimeFallback;
  /**
   * True when reading back showed every value current or pending; false when the BMC cannot be
   * read back (a write-only settings object) and the caller must verify after the reset.
   */
  confirmed: boolean;
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
    ...(typeof resource.AttributeRegistry === 'string'
      ? { attributeRegistry: resource.AttributeRegistry }
      : {}),
  };
}

/** A requested apply time the BMC does not offer, and what was done instead. */
export interface ApplyTimeFallback {
  requested: string;
  /** Sent instead; undefined when nothing was sent and the BMC's default (OnReset) applies. */
  used?: string;
  supported?: string[];
  reason: string;
}

/** Fallback order when the requested apply time is not offered (docs/redfish.md). */
const FALLBACK_ORDER = ['OnReset', 'Immediate'] as const;

/**
 * The apply time to send. Requested and offered (or the vendor always takes one): sent as is.
 * Requested but not offered: OnReset if offered (a reset inside the maintenance applies it), else
 * Immediate, else refused. The BMC lists none: nothing is sent, so the schema's default, the
 * next reset, applies. Every case other than the first is reported in `fallback`.
 */
export function chooseApplyTime(
  state: Pick<SettingsState, 'applyTimes' | 'writePath'>,
  opts: Pick<ApplyOptions, 'applyTime' | 'alwaysSendApplyTime'>,
): { applyTime?: string; fallback?: ApplyTimeFallback } {
  const requested = opts.applyTime;
  const offered = state.applyTimes;
  if (!requested) return { applyTime: opts.alwaysSendApplyTime ? 'OnReset' : undefined };
  if (offered?.includes(requested) || (!offered && opts.alwaysSendApplyTime)) return { applyTime: requested };
  if (!offered) {
    if (requested === 'OnReset') return {};
    const reason = `${state.writePath} lists no SupportedApplyTimes: sent none, so the values apply at the next reset`;
    return { fallback: { requested, reason } };
  }
  const used = FALLBACK_ORDER.find((t) => offered.includes(t));
  if (!used) {
    throw unsupported(
      `apply time ${requested} not supported by ${state.writePath}, nor a fallback (${FALLBACK_ORDER.join(', ')}); it offers ${offered.join(', ')}`,
      { allowable: offered },
    );
  }
  const reason = `${state.writePath} does not offer ${requested} (offers ${offered.join(', ')}): used ${used}`;
  return { applyTime: used, fallback: { requested, used, supported: offered, reason } };
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
  if (Object.keys(changed).length === 0) return { changed, alreadyPending, confirmed: true };
  const { applyTime, fallback } = chooseApplyTime(state, opts);
  if (fallback) {
    client.log.info({ event: 'redfish.settings.apply_time_fallback', ...fallback }, 'apply time fallback');
  }
  const body: Record<string, unknown> = { Attributes: changed };
  if (applyTime) body['@Redfish.SettingsApplyTime'] = { ApplyTime: applyTime };
  const onResource = state.writePath === state.path;
  const res = await patchResource(client, state.writePath, body, {
    etag: onResource ? state.etag : writeEtag(state),
    readEtag: onResource ? undefined : () => settingsObjectEtag(client, state),
    signal: opts.signal,
  });
  const task = res.status === 202 ? taskFromResponse(res) : undefined;
  const confirmed = await confirmStaged(client, state, changed, opts);
  client.log.info(
    { event: 'redfish.settings.patched', path: state.writePath, attributes: Object.keys(changed), applyTime },
    'settings staged',
  );
  return {
    changed,
    alreadyPending,
    applyTime,
    task,
    confirmed,
    ...(fallback ? { applyTimeFallback: fallback } : {}),
  };
}

/** Every value of `changed` is now current or pending (what a read-back must show after a 2xx). */
function shows(state: SettingsState, changed: Record<string, unknown>): boolean {
  return Object.entries(changed).every(
    ([k, v]) => isDeepStrictEqual(state.current[k], v) || isDeepStrictEqual(state.pending[k], v),
  );
}

async function confirmStaged(
  client: RedfishClient,
  state: SettingsState,
  changed: Record<string, unknown>,
  opts: ApplyOptions,
): Promise<boolean> {
  // A write-only settings object cannot show pending values; the caller verifies after the reset.
  if (!state.settingsReadable) return false;
  await confirmWrite(
    client,
    `PATCH ${state.writePath} (${Object.keys(changed).join(', ')})`,
    () => readSettings(client, state.path),
    (now) => shows(now, changed),
    (now) =>
      `current ${JSON.stringify(pick(now.current, changed))}, pending ${JSON.stringify(pick(now.pending, changed))}`,
    { signal: opts.signal, ...opts.confirm },
  );
  return true;
}

function pick(values: Record<string, unknown>, like: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.keys(like)
      .filter((k) => k in values)
      .map((k) => [k, values[k]]),
  );
}

/**
 * If-Match of a PATCH of the settings object: its own ETag as received (quotes and all). A
 * settings object that cannot be read (AMI `SD`) is guarded by the resource it applies to, so
 * that resource's ETag goes instead; the annotation's `ETag` is only a stand-in for it.
 */
export function writeEtag(state: SettingsState): string | undefined {
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
