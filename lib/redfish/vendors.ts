// Vendor profiles: the documented differences between BMC families, as data plus a few small
// hooks, chosen by the System's (or Manager's) Manufacturer. Operation modules read the profile;
// none of them tests a vendor name.
import type { Manager } from './types.js';

export type VendorName = 'generic' | 'dell' | 'hpe' | 'lenovo' | 'supermicro';

export interface VendorProfile {
  name: VendorName;
  /** Matched against Manufacturer. */
  manufacturer: RegExp;
  boot: {
    /**
     * Send BootSourceOverrideEnabled even when it equals the current value. Supermicro needs it;
     * others reject a no-op change, so the default is to omit it then.
     */
    alwaysSendEnabled: boolean;
    /** Send BootSourceOverrideMode on every change (Supermicro resets it to Legacy otherwise). */
    alwaysSendMode: boolean;
    /** Names to try, in order, for a generic target (checked against AllowableValues). */
    targetAliases: Readonly<Record<string, readonly string[]>>;
    /** False where Continuous is rejected: Once is used and re-applied by the caller. */
    continuous: boolean;
  };
  virtualMedia: {
    /** Where to look first; the other place is the fallback. */
    prefer: 'system' | 'manager';
    /** First rung of the insert retry ladder (0: bare, 1: +TransferProtocolType, …). */
    firstRung: number;
    /** Body of EjectMedia: HPE wants `{}`. */
    ejectWithEmptyObject: boolean;
  };
  settings: {
    /** Send `@Redfish.SettingsApplyTime` even if the BMC lists no SupportedApplyTimes (Dell jobs). */
    alwaysSendApplyTime: boolean;
  };
  hooks: {
    /** Paths of the BMC (Manager) attribute resources; default: the Manager itself. */
    managerAttributePaths?: (manager: Manager) => string[];
  };
  /**
   * Where this family keeps BMC settings when its Manager has no `Attributes` (the standard
   * Manager schema has none): said in the error, since there is no attribute resource to write.
   */
  managerSettingsElsewhere?: string;
}

const base: Omit<VendorProfile, 'name' | 'manufacturer'> = {
  boot: { alwaysSendEnabled: false, alwaysSendMode: false, targetAliases: {}, continuous: true },
  virtualMedia: { prefer: 'system', firstRung: 0, ejectWithEmptyObject: false },
  settings: { alwaysSendApplyTime: false },
  hooks: {},
};

export const GENERIC: VendorProfile = { ...base, name: 'generic', manufacturer: /^$/ };

export const DELL: VendorProfile = {
  ...base,
  name: 'dell',
  manufacturer: /dell/i,
  virtualMedia: { ...base.virtualMedia, prefer: 'manager', firstRung: 1 },
  // Without an apply time the PATCH only stages values; no job is created and nothing applies.
  settings: { alwaysSendApplyTime: true },
  hooks: {
    managerAttributePaths: (manager) =>
      (manager.Links?.Oem?.Dell?.DellAttributes ?? []).map((ref) => ref['@odata.id']),
  },
};

export const HPE: VendorProfile = {
  ...base,
  name: 'hpe',
  manufacturer: /^(hpe|hp|hewlett)/i,
  managerSettingsElsewhere:
    'iLO keeps its settings in standard Manager sub-resources (NetworkProtocol, EthernetInterfaces, DateTime) and Oem.Hpe',
  virtualMedia: { ...base.virtualMedia, prefer: 'manager', ejectWithEmptyObject: true },
};

export const LENOVO: VendorProfile = {
  ...base,
  name: 'lenovo',
  manufacturer: /lenovo/i,
  managerSettingsElsewhere:
    'XCC keeps its settings in standard Manager sub-resources (NetworkProtocol, EthernetInterfaces) and Oem.Lenovo',
  boot: { ...base.boot, continuous: false },
};

export const SUPERMICRO: VendorProfile = {
  ...base,
  name: 'supermicro',
  manufacturer: /supermicro|super micro/i,
  managerSettingsElsewhere:
    'Supermicro BMCs keep their settings in standard Manager sub-resources (NetworkProtocol) and Oem.Supermicro',
  boot: {
    alwaysSendEnabled: true,
    alwaysSendMode: true,
    targetAliases: { Cd: ['UsbCd', 'Cd'] },
    continuous: true,
  },
  virtualMedia: { ...base.virtualMedia, prefer: 'manager', firstRung: 1 },
};

export const PROFILES: readonly VendorProfile[] = [DELL, HPE, LENOVO, SUPERMICRO];

export function profileFor(manufacturer: string | undefined): VendorProfile {
  if (!manufacturer) return GENERIC;
  return PROFILES.find((p) => p.manufacturer.test(manufacturer.trim())) ?? GENERIC;
}

export function profileByName(name: VendorName): VendorProfile {
  return PROFILES.find((p) => p.name === name) ?? GENERIC;
}
