// SIMULATOR resource paths and JSON views of a simulated BMC's state. Paths are relative to the
// BMC's `/redfish/v1`; `@odata.id`s carry the full prefix (`/bmc/<n>/redfish/v1/...`).
import type { SimHost } from './host.js';
import type { SimBmc, SimTask } from './model.js';
import type { SimProfile } from './profiles.js';

/** Paths of one System behind the BMC. */
export interface HostPaths {
  system: string;
  systemSettings?: string;
  bios: string;
  biosSettings: string;
  media: string;
  /** FirmwareInventory id of this System's BIOS. */
  biosInventory: string;
}

export interface SimPaths extends HostPaths {
  systems: string;
  managers: string;
  manager: string;
  managerSettings: string;
  dellAttributes: string;
  dellAttributesSettings: string;
  jobs: string;
  /** One entry per System; `hosts[0]` is also spread at the top level. */
  hosts: HostPaths[];
}

function hostPaths(p: SimProfile, manager: string, systemId: string, slot: number): HostPaths {
  const system = `/Systems/${systemId}`;
  // Media under the Manager belongs to the first System; the others keep theirs under the System.
  const mediaUnderManager = p.mediaUnder === 'manager' && slot === 0;
  return {
    system,
    systemSettings: p.systemSettings ? `${system}/${p.systemSettings}` : undefined,
    bios: `${system}/Bios`,
    biosSettings: `${system}/Bios/${p.biosSettings}`,
    media: `${mediaUnderManager ? manager : system}/VirtualMedia`,
    biosInventory: slot === 0 ? 'BIOS' : `BIOS-${systemId}`,
  };
}

export function simPaths(p: SimProfile, systemIds: string[] = [p.systemId]): SimPaths {
  const manager = `/Managers/${p.managerId}`;
  const dellAttributes = `${manager}/Oem/Dell/DellAttributes/${p.managerId}`;
  const hosts = systemIds.map((id, slot) => hostPaths(p, manager, id, slot));
  return {
    ...hosts[0]!,
    systems: '/Systems',
    managers: '/Managers',
    manager,
    managerSettings: `${manager}/Settings`,
    dellAttributes,
    dellAttributesSettings: `${dellAttributes}/Settings`,
    jobs: `${manager}/Jobs`,
    hosts,
  };
}

export const ref = (base: string, rel: string): { '@odata.id': string } => ({ '@odata.id': base + rel });

export function collection(base: string, rel: string, memberRels: string[], name: string): object {
  return {
    '@odata.id': base + rel,
    Name: name,
    Members: memberRels.map((m) => ref(base, m)),
    'Members@odata.count': memberRels.length,
  };
}

export function serviceRoot(bmc: SimBmc, base: string): object {
  return {
    '@odata.id': `${base}/`,
    '@odata.type': '#ServiceRoot.v1_15_0.ServiceRoot',
    Id: 'RootService',
    Name: `Simulated BMC ${bmc.index}`,
    RedfishVersion: '1.17.0',
    Vendor: bmc.profile.manufacturer,
    Systems: ref(base, '/Systems'),
    Managers: ref(base, '/Managers'),
    UpdateService: ref(base, '/UpdateService'),
    // The schema names the task service link `Tasks`.
    Tasks: ref(base, '/TaskService'),
    SessionService: ref(base, '/SessionService'),
    Registries: ref(base, '/Registries'),
    Links: { Sessions: ref(base, '/SessionService/Sessions') },
  };
}

export const RESET_TYPES = [
  'On',
  'ForceOff',
  'GracefulShutdown',
  'GracefulRestart',
  'ForceRestart',
  'PowerCycle',
  'Nmi',
];

function bootTargets(p: SimProfile): string[] {
  const cd = p.quirks.supermicroBoot ? 'UsbCd' : 'Cd';
  return ['None', 'Pxe', cd, 'Hdd', 'UefiHttp', 'BiosSetup'];
}

export function system(host: SimHost, base: string, paths: SimPaths, hp: HostPaths): object {
  const bmc = host.bmc;
  const p = bmc.profile;
  const suffix = host.slot === 0 ? '' : `-${host.slot}`;
  const out: Record<string, unknown> = {
    '@odata.id': base + hp.system,
    '@odata.type': '#ComputerSystem.v1_20_0.ComputerSystem',
    Id: host.systemId,
    Name: `sim-${bmc.index}${suffix}`,
    Manufacturer: p.manufacturer,
    Model: 'Simulated Server',
    SerialNumber: `SIM${String(bmc.index).padStart(6, '0')}${suffix}`,
    PowerState: host.power,
    BiosVersion: host.biosVersion,
    Boot: {
      BootSourceOverrideEnabled: host.boot.enabled,
      BootSourceOverrideTarget: host.boot.target,
      'BootSourceOverrideTarget@Redfish.AllowableValues': bootTargets(p),
      BootSourceOverrideMode: host.boot.mode,
      HttpBootUri: host.boot.httpBootUri,
    },
    Bios: ref(base, hp.bios),
    Actions: {
      '#ComputerSystem.Reset': {
        target: `${base}${hp.system}/Actions/ComputerSystem.Reset`,
        'ResetType@Redfish.AllowableValues': RESET_TYPES,
      },
    },
    Links: { ManagedBy: [ref(base, paths.manager)] },
  };
  if (hp.media.startsWith(hp.system)) out.VirtualMedia = ref(base, hp.media);
  if (hp.systemSettings) {
    out['@Redfish.Settings'] = {
      SettingsObject: ref(base, hp.systemSettings),
      // The schema: the ETag of the resource the settings apply to (the System), after applying.
      ETag: bmc.etag(host.key('system')),
    };
  }
  if (bmc.etagMode !== 'none') out['@odata.etag'] = bmc.etag(host.key('system'));
  return out;
}

export function bios(host: SimHost, base: string, hp: HostPaths): object {
  const bmc = host.bmc;
  return {
    '@odata.id': base + hp.bios,
    '@odata.type': '#Bios.v1_2_0.Bios',
    Id: 'Bios',
    AttributeRegistry: 'BiosAttributeRegistry.v1_0_0',
    Attributes: { ...host.bios.current },
    '@Redfish.Settings': {
      SettingsObject: ref(base, hp.biosSettings),
      SupportedApplyTimes: ['OnReset', 'AtMaintenanceWindowStart'],
      // The schema: the ETag of the resource the settings were applied to, after applying them.
      ETag: bmc.etag(host.key('bios')),
    },
    ...(bmc.etagMode !== 'none' ? { '@odata.etag': bmc.etag(host.key('bios')) } : {}),
  };
}

export function settingsObject(
  base: string,
  rel: string,
  attrs: Record<string, unknown>,
  etag?: string,
): object {
  return {
    '@odata.id': base + rel,
    '@odata.type': '#Settings',
    Id: rel.split('/').pop(),
    Attributes: { ...attrs },
    ...(etag ? { '@odata.etag': etag } : {}),
  };
}

export function manager(bmc: SimBmc, base: string, paths: SimPaths): object {
  const p = bmc.profile;
  const out: Record<string, unknown> = {
    '@odata.id': base + paths.manager,
    '@odata.type': '#Manager.v1_19_0.Manager',
    Id: p.managerId,
    Name: 'Simulated BMC',
    Manufacturer: p.manufacturer,
    ManagerType: 'BMC',
    FirmwareVersion: bmc.firmware.BMC,
    Status: { State: 'Enabled', Health: 'OK' },
    Actions: {
      '#Manager.Reset': {
        target: `${base}${paths.manager}/Actions/Manager.Reset`,
        'ResetType@Redfish.AllowableValues': ['GracefulRestart', 'ForceRestart'],
      },
    },
    Links: { ManagerForServers: paths.hosts.map((h) => ref(base, h.system)) },
  };
  if (paths.media.startsWith(paths.manager)) out.VirtualMedia = ref(base, paths.media);
  if (p.quirks.dellAttributes) {
    out.Links = {
      ...(out.Links as object),
      Oem: { Dell: { DellAttributes: [ref(base, paths.dellAttributes)] } },
    };
  } else if (!p.quirks.noManagerAttributes) {
    out.Attributes = { ...bmc.managerAttrs.current };
    out['@Redfish.Settings'] = {
      SettingsObject: ref(base, paths.managerSettings),
      SupportedApplyTimes: ['Immediate', 'OnReset'],
    };
  }
  if (bmc.etagMode !== 'none') out['@odata.etag'] = bmc.etag('manager');
  return out;
}

export function dellAttributes(bmc: SimBmc, base: string, paths: SimPaths): object {
  return {
    '@odata.id': base + paths.dellAttributes,
    Id: bmc.profile.managerId,
    AttributeRegistry: MANAGER_REGISTRY,
    Attributes: { ...bmc.managerAttrs.current },
    '@Redfish.Settings': {
      SettingsObject: ref(base, paths.dellAttributesSettings),
      SupportedApplyTimes: ['Immediate', 'OnReset'],
    },
    ...(bmc.etagMode !== 'none' ? { '@odata.etag': bmc.etag('manager') } : {}),
  };
}

export function mediaDevice(host: SimHost, base: string, hp: HostPaths, id: string): object | undefined {
  const bmc = host.bmc;
  const m = host.media.find((d) => d.id === id);
  if (!m) return undefined;
  const self = `${base}${hp.media}/${id}`;
  return {
    '@odata.id': self,
    '@odata.type': '#VirtualMedia.v1_6_0.VirtualMedia',
    Id: id,
    MediaTypes: m.types,
    Image: m.image,
    ImageName: m.image ? m.image.split('/').pop() : null,
    Inserted: m.inserted,
    WriteProtected: m.writeProtected,
    ConnectedVia: m.inserted ? 'URI' : 'NotConnected',
    Actions: {
      '#VirtualMedia.InsertMedia': {
        target: `${self}/Actions/VirtualMedia.InsertMedia`,
        ...(bmc.profile.quirks.insertActionInfo
          ? { '@Redfish.ActionInfo': `${self}/InsertMediaActionInfo` }
          : {}),
      },
      '#VirtualMedia.EjectMedia': { target: `${self}/Actions/VirtualMedia.EjectMedia` },
    },
    ...(bmc.etagMode !== 'none' ? { '@odata.etag': bmc.etag(host.key(`media-${id}`)) } : {}),
  };
}

/** FirmwareInventory ids: one BIOS per System, then the BMC and a NIC. */
export function inventoryIds(paths: SimPaths): string[] {
  return [...paths.hosts.map((h) => h.biosInventory), 'BMC', 'NIC'];
}

export function inventoryItem(bmc: SimBmc, base: string, paths: SimPaths, id: string): object | undefined {
  const slot = paths.hosts.findIndex((h) => h.biosInventory === id);
  if (slot < 0 && id !== 'BMC' && id !== 'NIC') return undefined;
  const host = slot >= 0 ? bmc.hosts[slot] : undefined;
  const version = host ? host.biosVersion : bmc.firmware[id as 'BMC' | 'NIC'];
  const related = host ? paths.hosts[slot]!.system : id === 'BMC' ? paths.manager : paths.system;
  return {
    '@odata.id': `${base}/UpdateService/FirmwareInventory/${id}`,
    '@odata.type': '#SoftwareInventory.v1_9_0.SoftwareInventory',
    Id: id,
    Name: `${id} firmware`,
    Version: version,
    Updateable: id !== 'NIC',
    RelatedItem: [ref(base, related)],
    Status: { State: 'Enabled', Health: 'OK' },
  };
}

export function taskView(bmc: SimBmc, base: string, paths: SimPaths, task: SimTask): object {
  if (task.kind === 'job') {
    return {
      '@odata.id': `${base}${paths.jobs}/${task.id}`,
      '@odata.type': '#DellJob.v1_5_0.DellJob',
      Id: task.id,
      JobState: task.state,
      PercentComplete: task.percent,
      Messages: task.messages,
    };
  }
  bmc.progress(task);
  return {
    '@odata.id': `${base}/TaskService/Tasks/${task.id}`,
    '@odata.type': '#Task.v1_7_0.Task',
    Id: task.id,
    Name: `Update ${task.target}`,
    TaskState: task.state,
    TaskStatus: task.state === 'Exception' ? 'Critical' : 'OK',
    PercentComplete: task.percent,
    // What was asked (Task.Payload), so a client that lost the answer can find its own task.
    Payload: {
      HttpOperation: 'POST',
      TargetUri: `${base}/UpdateService/Actions/UpdateService.SimpleUpdate`,
      JsonBody: JSON.stringify({
        ImageURI: task.image,
        Targets: [
          `${base}${task.target === 'BMC' ? paths.manager : (paths.hosts[task.host ? bmc.hosts.indexOf(task.host) : 0]?.system ?? '')}`,
        ],
      }),
    },
    // Lenovo returns the Task itself and no monitor; clients must follow its @odata.id.
    ...(bmc.profile.quirks.taskInBody ? {} : { TaskMonitor: `${base}/TaskService/TaskMonitors/${task.id}` }),
    Messages: task.messages,
  };
}

export const BIOS_REGISTRY_ENTRIES = [
  {
    AttributeName: 'BootMode',
    Type: 'Enumeration',
    ResetRequired: true,
    Value: [{ ValueName: 'Uefi' }, { ValueName: 'Bios' }],
  },
  {
    AttributeName: 'ProcTurboMode',
    Type: 'Enumeration',
    ResetRequired: true,
    Value: [{ ValueName: 'Enabled' }, { ValueName: 'Disabled' }],
  },
  {
    AttributeName: 'SriovGlobalEnable',
    Type: 'Enumeration',
    ResetRequired: true,
    Value: [{ ValueName: 'Enabled' }, { ValueName: 'Disabled' }],
  },
  { AttributeName: 'NumaNodes', Type: 'Integer', ResetRequired: true, LowerBound: 1, UpperBound: 8 },
  { AttributeName: 'AdminPhone', Type: 'String', ResetRequired: false, MaxLength: 32 },
  { AttributeName: 'SerialNumber', Type: 'String', ReadOnly: true },
];

/** The registry Dell's DellAttributes name (iDRAC publishes its attributes' flags there). */
export const MANAGER_REGISTRY = 'ManagerAttributeRegistry.v1_0_0';

/** The Dell profile's ManagerAttributeRegistry; Dell spells the read-only flag `Readonly`. */
export const MANAGER_REGISTRY_ENTRIES = [
  { AttributeName: 'NTP.1.Server', Type: 'String', ResetRequired: false, MaxLength: 255 },
  {
    AttributeName: 'Syslog.1.Enable',
    Type: 'Enumeration',
    ResetRequired: false,
    Value: [{ ValueName: 'Enabled' }, { ValueName: 'Disabled' }],
  },
  {
    AttributeName: 'Session.1.Timeout',
    Type: 'Integer',
    ResetRequired: false,
    LowerBound: 60,
    UpperBound: 10800,
  },
  { AttributeName: 'Info.1.Product', Type: 'String', Readonly: true },
];

/** Names the registry marks read-only. */
export const MANAGER_READ_ONLY = new Set(
  MANAGER_REGISTRY_ENTRIES.filter((e) => e.Readonly === true).map((e) => e.AttributeName),
);

/** ActionInfo of InsertMedia (AMI): which parameters are required, and their allowed values. */
export function insertActionInfo(base: string, rel: string): object {
  return {
    '@odata.id': base + rel,
    '@odata.type': '#ActionInfo.v1_3_0.ActionInfo',
    Id: 'InsertMediaActionInfo',
    Parameters: [
      { Name: 'Image', Required: true, DataType: 'String' },
      {
        Name: 'TransferProtocolType',
        Required: true,
        DataType: 'String',
        AllowableValues: ['HTTP', 'HTTPS', 'NFS'],
      },
      { Name: 'Inserted', Required: false, DataType: 'Boolean' },
      { Name: 'WriteProtected', Required: false, DataType: 'Boolean' },
      { Name: 'UserName', Required: false, DataType: 'String' },
      { Name: 'Password', Required: false, DataType: 'String' },
    ],
  };
}

export function redfishError(messageId: string, message: string): object {
  return {
    error: {
      code: messageId,
      message,
      '@Message.ExtendedInfo': [{ MessageId: messageId, Message: message, Severity: 'Warning' }],
    },
  };
}
