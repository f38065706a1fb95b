// SIMULATOR vendor profiles: resource ids, where things live and which documented quirks a
// simulated BMC of that family shows. Data only; the behaviour reads these flags.

export type SimProfileName = 'generic' | 'dell' | 'hpe' | 'lenovo' | 'supermicro' | 'ami';
export type EtagMode = 'none' | 'optional' | 'required';

export interface SimProfile {
  name: SimProfileName;
  manufacturer: string;
  systemId: string;
  managerId: string;
  /** Path segment of the BIOS settings object under `Bios/`. */
  biosSettings: 'Settings' | 'Pending' | 'SD';
  /** The System carries its own `@Redfish.Settings` at this sub-path (boot changes go there). */
  systemSettings?: 'Pending' | 'SD';
  /** Settings objects that answer 404 to GET (AMI `SD`). */
  settingsWriteOnly: boolean;
  mediaUnder: 'system' | 'manager';
  etag: EtagMode;
  quirks: {
    /** Action POSTs carrying If-Match are refused with 412 (iDRAC). */
    rejectIfMatchOnActions: boolean;
    /** BIOS PATCH without `@Redfish.SettingsApplyTime` stays pending forever; with it, a job. */
    dellJobs: boolean;
    /** PATCH of `Bios` itself answers 405 (HPE). */
    biosPatchOnResource405: boolean;
    /** Manager attributes live in DellAttributes resources instead of on the Manager. */
    dellAttributes: boolean;
    /** The Manager has no `Attributes` at all (the standard schema; HPE, Lenovo, Supermicro). */
    noManagerAttributes: boolean;
    /** InsertMedia declares an `@Redfish.ActionInfo` whose required parameters must be sent. */
    insertActionInfo: boolean;
    /** SimpleUpdate answers with the monitor in the body (`TaskMonitor`) and no Location. */
    taskMonitorInBody: boolean;
    /** SimpleUpdate answers with the Task itself in the body and no Location. */
    taskInBody: boolean;
    /** A finished monitor answers with an error envelope whose MessageId says Success (HPE). */
    successEnvelope: boolean;
    /** EjectMedia without a JSON body is refused with 415 (HPE). */
    ejectNeedsBody: boolean;
    /** Continuous boot override is refused (deprecated). */
    rejectContinuous: boolean;
    /** Boot PATCH must carry BootSourceOverrideEnabled; the mode falls back to Legacy unless sent. */
    supermicroBoot: boolean;
    /** InsertMedia refuses Inserted/WriteProtected and needs TransferProtocolType. */
    supermicroMedia: boolean;
    /** PATCH of Boot directly on the System is refused: it must go to the settings object. */
    bootOnlyViaSettings: boolean;
  };
}

const none: SimProfile['quirks'] = {
  rejectIfMatchOnActions: false,
  dellJobs: false,
  biosPatchOnResource405: false,
  dellAttributes: false,
  noManagerAttributes: false,
  insertActionInfo: false,
  taskMonitorInBody: false,
  taskInBody: false,
  successEnvelope: false,
  ejectNeedsBody: false,
  rejectContinuous: false,
  supermicroBoot: false,
  supermicroMedia: false,
  bootOnlyViaSettings: false,
};

const generic: SimProfile = {
  name: 'generic',
  manufacturer: 'Contoso',
  systemId: '1',
  managerId: 'BMC',
  biosSettings: 'Settings',
  settingsWriteOnly: false,
  mediaUnder: 'system',
  etag: 'optional',
  quirks: none,
};

export const SIM_PROFILES: Record<SimProfileName, SimProfile> = {
  generic,
  dell: {
    ...generic,
    name: 'dell',
    manufacturer: 'Dell Inc.',
    systemId: 'System.Embedded.1',
    managerId: 'iDRAC.Embedded.1',
    mediaUnder: 'manager',
    quirks: { ...none, rejectIfMatchOnActions: true, dellJobs: true, dellAttributes: true },
  },
  hpe: {
    ...generic,
    name: 'hpe',
    manufacturer: 'HPE',
    managerId: '1',
    mediaUnder: 'manager',
    quirks: {
      ...none,
      biosPatchOnResource405: true,
      noManagerAttributes: true,
      taskMonitorInBody: true,
      successEnvelope: true,
      ejectNeedsBody: true,
    },
  },
  lenovo: {
    ...generic,
    name: 'lenovo',
    manufacturer: 'Lenovo',
    managerId: '1',
    biosSettings: 'Pending',
    systemSettings: 'Pending',
    etag: 'required',
    quirks: {
      ...none,
      taskInBody: true,
      rejectContinuous: true,
      bootOnlyViaSettings: true,
      noManagerAttributes: true,
    },
  },
  supermicro: {
    ...generic,
    name: 'supermicro',
    manufacturer: 'Supermicro',
    managerId: '1',
    mediaUnder: 'manager',
    quirks: { ...none, supermicroBoot: true, supermicroMedia: true, noManagerAttributes: true },
  },
  ami: {
    ...generic,
    name: 'ami',
    manufacturer: 'AMI',
    systemId: 'Self',
    managerId: 'Self',
    biosSettings: 'SD',
    systemSettings: 'SD',
    settingsWriteOnly: true,
    etag: 'required',
    quirks: { ...none, insertActionInfo: true },
  },
};
