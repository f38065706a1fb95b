// SIMULATOR resource paths and JSON views of a simulated BMC's state. Paths are relative to the
// BMC's `/redfish/v1`; `@odata.id`s carry the full prefix (`/bmc/<n>/redfish/v1/...`).
import type { SimBmc, SimTask } from './model.js';
import type { SimProfile } from './profiles.js';

export interface SimPaths {
  systems: string;
  system: string;
  systemSettings?: string;
  bios: string;
  biosSettings: string;
  managers: string;
  manager: string;
  managerSettings: string;
  dellAttributes: string;
  dellAttributesSettings: string;
  media: string;
  jobs: string;
}

export function simPaths(p: SimProfile): SimPaths {
  const system = `/Systems/${p.systemId}`;
  const manager = `/Managers/${p.managerId}`;
  const dellAttributes = `${manager}/Oem/Dell/DellAttributes/${p.managerId}`;
  return {
    systems: '/Systems',
    system,
    systemSettings: p.systemSettings ? `${system}/${p.systemSettings}` : undefined,
    bios: `${system}/Bios`,
    biosSettings: `${system}/Bios/${p.biosSettings}`,
    managers: '/Managers',
    manager,
    managerSettings: `${manager}/Settings`,
    dellAttributes,
    dellAttributesSettings: `${dellAttributes}/Settings`,
    media: `${p.mediaUnder === 'system' ? system : manager}/VirtualMedia`,
    jobs: `${manager}/Jobs`,
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
    TaskService: ref(base, '/TaskService'),
    SessionService: ref(base, '/SessionService'),
    Registries: ref(base, '/Registries'),
    Links: { Sessions: ref(base, '/SessionService/Sessions') },
  };
}

const RESET_TYPES = [
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

export function system(bmc: SimBmc, base: string, paths: SimPaths): object {
  const p = bmc.profile;
  const settingsKey = p.systemSettings ? 'systemSettings' : 'system';
  const out: Record<string, unknown> = {
    '@odata.id': base + paths.system,
    '@odata.type': '#ComputerSystem.v1_20_0.ComputerSystem',
    Id: p.systemId,
    Name: `sim-${bmc.index}`,
    Manufacturer: p.manufacturer,
    Model: 'Simulated Server',
    SerialNumber: `SIM${String(bmc.index).padStart(6, '0')}`,
    PowerState: bmc.power,
    BiosVersion: bmc.firmware.BIOS,
    Boot: {
      BootSourceOverrideEnabled: bmc.boot.enabled,
      BootSourceOverrideTarget: bmc.boot.target,
      'BootSourceOverrideTarget@Redfish.AllowableValues': bootTargets(p),
      BootSourceOverrideMode: bmc.boot.mode,
      HttpBootUri: bmc.boot.httpBootUri,
    },
    Bios: ref(base, paths.bios),
    Actions: {
      '#ComputerSystem.Reset': {
        target: `${base}${paths.system}/Actions/ComputerSystem.Reset`,
        'ResetType@Redfish.AllowableValues': RESET_TYPES,
      },
    },
    Links: { ManagedBy: [ref(base, paths.manager)] },
  };
  if (p.mediaUnder === 'system') out.VirtualMedia = ref(base, paths.media);
  if (paths.systemSettings) {
    out['@Redfish.Settings'] = {
      SettingsObject: ref(base, paths.systemSettings),
      ETag: bmc.etag(settingsKey),
    };
  }
  if (bmc.etagMode !== 'none') out['@odata.etag'] = bmc.etag('system');
  return out;
}

export function bios(bmc: SimBmc, base: string, paths: SimPaths): object {
  return {
    '@odata.id': base + paths.bios,
    '@odata.type': '#Bios.v1_2_0.Bios',
    Id: 'Bios',
    AttributeRegistry: 'BiosAttributeRegistry.v1_0_0',
    Attributes: { ...bmc.bios.current },
    '@Redfish.Settings': {
      SettingsObject: ref(base, paths.biosSettings),
      SupportedApplyTimes: ['OnReset', 'AtMaintenanceWindowStart'],
      ETag: bmc.etag('biosSettings'),
    },
    ...(bmc.etagMode !== 'none' ? { '@odata.etag': bmc.etag('bios') } : {}),
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
    Links: { ManagerForServers: [ref(base, paths.system)] },
  };
  if (p.mediaUnder === 'manager') out.VirtualMedia = ref(base, paths.media);
  if (p.quirks.dellAttributes) {
    out.Links = {
      ...(out.Links as object),
      Oem: { Dell: { DellAttributes: [ref(base, paths.dellAttributes)] } },
    };
  } else {
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
    Attributes: { ...bmc.managerAttrs.current },
    '@Redfish.Settings': {
      SettingsObject: ref(base, paths.dellAttributesSettings),
      SupportedApplyTimes: ['Immediate', 'OnReset'],
    },
    ...(bmc.etagMode !== 'none' ? { '@odata.etag': bmc.etag('manager') } : {}),
  };
}

export function mediaDevice(bmc: SimBmc, base: string, paths: SimPaths, id: string): object | undefined {
  const m = bmc.media.find((d) => d.id === id);
  if (!m) return undefined;
  const self = `${base}${paths.media}/${id}`;
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
      '#VirtualMedia.InsertMedia': { target: `${self}/Actions/VirtualMedia.InsertMedia` },
      '#VirtualMedia.EjectMedia': { target: `${self}/Actions/VirtualMedia.EjectMedia` },
    },
    ...(bmc.etagMode !== 'none' ? { '@odata.etag': bmc.etag(`media-${id}`) } : {}),
  };
}

export const INVENTORY = ['BIOS', 'BMC', 'NIC'] as const;

export function inventoryItem(bmc: SimBmc, base: string, paths: SimPaths, id: string): object | undefined {
  if (!(INVENTORY as readonly string[]).includes(id)) return undefined;
  const key = id as (typeof INVENTORY)[number];
  const related = key === 'BMC' ? paths.manager : paths.system;
  return {
    '@odata.id': `${base}/UpdateService/FirmwareInventory/${id}`,
    '@odata.type': '#SoftwareInventory.v1_9_0.SoftwareInventory',
    Id: id,
    Name: `${id} firmware`,
    Version: bmc.firmware[key],
    Updateable: key !== 'NIC',
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

export function redfishError(messageId: string, message: string): object {
  return {
    error: {
      code: messageId,
      message,
      '@Message.ExtendedInfo': [{ MessageId: messageId, Message: message, Severity: 'Warning' }],
    },
  };
}
