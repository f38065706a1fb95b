// Boot source override: read the current one (so a caller can restore it), set Once/Continuous
// with target, mode and `HttpBootUri`, PATCHing the System's own `@Redfish.Settings` object where
// it has one (Lenovo `Pending`, AMI `SD`).
import type { Bmc } from './bmc.js';
import { RedfishError, invalid, isHttpStatus, unsupported } from './errors.js';
import type { Boot, BootSourceOverrideEnabled, BootSourceOverrideMode, ComputerSystem } from './types.js';
import { patchResource } from './writes.js';

export interface BootOverride {
  enabled: BootSourceOverrideEnabled;
  target: string;
  mode?: BootSourceOverrideMode;
  httpBootUri?: string | null;
}

export interface BootOverrideRequest {
  /** Generic target: Pxe, Cd, Hdd, UefiHttp, … (vendor aliases such as UsbCd are applied). */
  target: string;
  /** Default Once. */
  enabled?: 'Once' | 'Continuous';
  mode?: BootSourceOverrideMode;
  /** Required for, and only allowed with, UefiHttp. */
  httpBootUri?: string;
}

export interface BootOverrideResult {
  /** The override as requested of the BMC (after aliasing and fallbacks). */
  applied: BootOverride;
  /** What was there before: pass it to `restoreBootOverride`. */
  previous: BootOverride;
  /** False when the BMC already had exactly this override. */
  changed: boolean;
}

function overrideOf(boot: Boot | undefined): BootOverride {
  return {
    enabled: boot?.BootSourceOverrideEnabled ?? 'Disabled',
    target: boot?.BootSourceOverrideTarget ?? 'None',
    mode: boot?.BootSourceOverrideMode,
    httpBootUri: boot?.HttpBootUri,
  };
}

export async function getBootOverride(bmc: Bmc): Promise<BootOverride & { allowedTargets?: string[] }> {
  const system = await bmc.system();
  return {
    ...overrideOf(system.Boot),
    allowedTargets: system.Boot?.['BootSourceOverrideTarget@Redfish.AllowableValues'],
  };
}

function resolveTarget(bmc: Bmc, boot: Boot, target: string): string {
  const candidates = bmc.vendor.boot.targetAliases[target] ?? [target];
  const allowed = boot['BootSourceOverrideTarget@Redfish.AllowableValues'];
  if (!allowed) return candidates[0] ?? target;
  const found = candidates.find((c) => allowed.includes(c));
  if (!found) {
    throw unsupported(`boot target ${target} is not offered (allowed: ${allowed.join(', ')})`, {
      allowable: allowed,
    });
  }
  return found;
}

function bootBody(bmc: Bmc, current: Boot, want: BootOverride): Boot {
  const body: Boot = { BootSourceOverrideTarget: want.target };
  if (bmc.vendor.boot.alwaysSendEnabled || current.BootSourceOverrideEnabled !== want.enabled) {
    body.BootSourceOverrideEnabled = want.enabled;
  }
  // Only send a mode the BMC exposes: older Supermicro X10 and HPE Gen9 reject the property.
  const exposesMode = 'BootSourceOverrideMode' in current;
  if (
    exposesMode &&
    (want.mode ?? (bmc.vendor.boot.alwaysSendMode ? current.BootSourceOverrideMode : undefined))
  ) {
    body.BootSourceOverrideMode = want.mode ?? current.BootSourceOverrideMode;
  }
  if (want.target === 'UefiHttp') body.HttpBootUri = want.httpBootUri ?? null;
  else if (typeof current.HttpBootUri === 'string' && current.HttpBootUri !== '') body.HttpBootUri = null;
  return body;
}

function sameOverride(current: BootOverride, want: BootOverride): boolean {
  return (
    current.enabled === want.enabled &&
    current.target === want.target &&
    (want.mode === undefined || current.mode === want.mode) &&
    (want.target !== 'UefiHttp' || current.httpBootUri === want.httpBootUri)
  );
}

/** Where boot changes go: the System's own settings object if it has one, else the System. */
function bootWritePath(bmc: Bmc, system: ComputerSystem): string {
  return system['@Redfish.Settings']?.SettingsObject?.['@odata.id'] ?? bmc.systemPath;
}

async function writeBoot(
  bmc: Bmc,
  system: ComputerSystem,
  etag: string | undefined,
  boot: Boot,
): Promise<void> {
  const path = bootWritePath(bmc, system);
  const onSystem = path === bmc.systemPath;
  await patchResource(
    bmc.client,
    path,
    { Boot: boot },
    {
      // The annotation's ETag is the System's after the last apply, not the settings object's:
      // the settings object's own tag is read first (one GET), as BMCs that demand it expect.
      etag: onSystem ? etag : await settingsEtag(bmc, path, etag),
      readEtag: onSystem ? undefined : () => settingsEtag(bmc, path, etag),
    },
  );
}

/** The settings object's own ETag; the System's when the object cannot be read (AMI `SD`). */
async function settingsEtag(
  bmc: Bmc,
  path: string,
  systemEtag: string | undefined,
): Promise<string | undefined> {
  try {
    return (await bmc.client.getWithEtag(path)).etag ?? systemEtag;
  } catch (e) {
    if (isHttpStatus(e, 404, 405)) return systemEtag;
    throw e;
  }
}

/** Sets a boot override. Continuous falls back to Once where the vendor or the BMC rejects it. */
export async function setBootOverride(bmc: Bmc, req: BootOverrideRequest): Promise<BootOverrideResult> {
  if (req.target === 'UefiHttp' && !req.httpBootUri) throw invalid('UefiHttp needs httpBootUri');
  if (req.target !== 'UefiHttp' && req.httpBootUri) throw invalid('httpBootUri is only valid with UefiHttp');
  const read = await bmc.client.getWithEtag<ComputerSystem>(bmc.systemPath);
  const system = read.body ?? {};
  const current = system.Boot ?? {};
  const previous = overrideOf(current);
  let enabled: 'Once' | 'Continuous' = req.enabled ?? 'Once';
  if (enabled === 'Continuous' && !bmc.vendor.boot.continuous) enabled = 'Once';
  const target = resolveTarget(bmc, current, req.target);
  const want: BootOverride = { enabled, target, mode: req.mode, httpBootUri: req.httpBootUri };
  if (sameOverride(previous, want)) return { applied: want, previous, changed: false };
  try {
    await writeBoot(bmc, system, read.etag, bootBody(bmc, current, want));
  } catch (e) {
    if (enabled !== 'Continuous' || !isHttpStatus(e, 400)) throw e;
    bmc.client.log.info({ event: 'redfish.boot.continuous_rejected' }, 'Continuous rejected; using Once');
    want.enabled = 'Once';
    await writeBoot(bmc, system, undefined, bootBody(bmc, current, want));
  }
  bmc.client.log.info({ event: 'redfish.boot.override', target, enabled: want.enabled }, 'boot override set');
  return { applied: want, previous, changed: true };
}

/** Puts back an override read earlier (Disabled clears the override). */
export async function restoreBootOverride(bmc: Bmc, previous: BootOverride): Promise<void> {
  const read = await bmc.client.getWithEtag<ComputerSystem>(bmc.systemPath);
  const system = read.body ?? {};
  const current = system.Boot ?? {};
  if (sameOverride(overrideOf(current), previous) && current.BootSourceOverrideEnabled === previous.enabled)
    return;
  const boot: Boot = { BootSourceOverrideEnabled: previous.enabled };
  if (previous.target !== 'None' || previous.enabled === 'Disabled')
    boot.BootSourceOverrideTarget = previous.target;
  if (previous.mode && 'BootSourceOverrideMode' in current) boot.BootSourceOverrideMode = previous.mode;
  if ('HttpBootUri' in current) boot.HttpBootUri = previous.httpBootUri ?? null;
  try {
    await writeBoot(bmc, system, read.etag, boot);
  } catch (e) {
    if (e instanceof RedfishError) e.details.restoring = true;
    throw e;
  }
}
