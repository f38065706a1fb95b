// What override a boot wants, and whether what the BMC reports is it. Targets are compared in the
// BMC's own spelling through the vendor aliases (Supermicro reports virtual media as UsbCd).
import type { BmcObservation, OverrideRequest, OverrideView, ServerBoot, ServerBootStatus } from './model.js';

const TARGET_OF_METHOD = { VirtualMedia: 'Cd', UefiHttp: 'UefiHttp', Pxe: 'Pxe' } as const;

/** The override this boot arms: Continuous while pinned where the vendor allows it, else Once. */
export function desiredOverride(boot: ServerBoot, obs: Pick<BmcObservation, 'continuous'>): OverrideRequest {
  const target = TARGET_OF_METHOD[boot.spec.method];
  const pin = boot.spec.pin !== false;
  return {
    target,
    enabled: pin && obs.continuous ? 'Continuous' : 'Once',
    mode: boot.spec.bootMode ?? 'UEFI',
    ...(target === 'UefiHttp' ? { httpBootUri: boot.spec.image } : {}),
  };
}

function targetMatches(reported: string, generic: string, aliases: BmcObservation['targetAliases']): boolean {
  return (aliases[generic] ?? [generic]).includes(reported) || reported === generic;
}

/** BMCs that cannot show HttpBootUri report null or the string "None" (sushy-tools). */
function uriMatches(reported: string | null | undefined, want: string | undefined): boolean {
  if (typeof reported !== 'string' || reported === '' || reported === 'None') return true;
  return reported === want;
}

/** True when the override will take the next boot into the image. */
export function isArmed(
  current: OverrideView,
  want: OverrideRequest,
  aliases: BmcObservation['targetAliases'],
): boolean {
  if (current.enabled !== 'Once' && current.enabled !== 'Continuous') return false;
  if (!targetMatches(current.target, want.target, aliases)) return false;
  return want.target !== 'UefiHttp' || uriMatches(current.httpBootUri, want.httpBootUri);
}

/** The override saved in status.previousBoot (absent fields read as "no override"). */
export function previousOverride(status: ServerBootStatus | undefined): OverrideView | undefined {
  const prev = status?.previousBoot;
  if (!prev) return undefined;
  return {
    enabled: prev.overrideEnabled ?? 'Disabled',
    target: prev.overrideTarget ?? 'None',
    ...(prev.overrideMode ? { mode: prev.overrideMode } : {}),
    ...(prev.httpBootUri ? { httpBootUri: prev.httpBootUri } : {}),
  };
}

/** Equal for restore purposes: a disabled override is disabled whatever target it names. */
export function sameOverride(a: OverrideView, b: OverrideView): boolean {
  if (a.enabled !== b.enabled) return false;
  if (a.enabled === 'Disabled') return true;
  if (a.target !== b.target) return false;
  return a.target !== 'UefiHttp' || uriMatches(a.httpBootUri, b.httpBootUri ?? undefined);
}

export function describeOverride(o: OverrideView): string {
  if (o.enabled === 'Disabled') return 'no override';
  return `${o.enabled} ${o.target}${o.target === 'UefiHttp' && o.httpBootUri ? ` (${o.httpBootUri})` : ''}`;
}

/** Status form of an override (undefined fields left out, so SSA does not see spurious nulls). */
export function overrideStatus(
  o: OverrideView,
  mediaImage?: string | null,
): ServerBootStatus['previousBoot'] {
  return {
    overrideEnabled: o.enabled,
    overrideTarget: o.target,
    ...(o.mode ? { overrideMode: o.mode } : {}),
    ...(typeof o.httpBootUri === 'string' && o.httpBootUri !== '' ? { httpBootUri: o.httpBootUri } : {}),
    ...(mediaImage ? { mediaImage } : {}),
  };
}
