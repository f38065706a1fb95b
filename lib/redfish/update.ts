// Firmware: the inventory of UpdateService and `UpdateService.SimpleUpdate`, which answers with
// a task to wait for (see tasks.ts). Actions never carry If-Match.
import type { Bmc } from './bmc.js';
import { unsupported } from './errors.js';
import { checkAllowed, findAction, linkOf, members, requireLink } from './navigation.js';
import { taskFromResponse, type TaskHandle } from './tasks.js';
import type { ODataRef, SoftwareInventory, UpdateService } from './types.js';

export interface FirmwareItem {
  id: string;
  name?: string;
  version?: string;
  updateable?: boolean;
  /** Downloaded but not active yet (Dell/HPE `Staged`, Lenovo `-Pending` ids). */
  staged: boolean;
  path: string;
  relatedItems: string[];
}

export interface SimpleUpdateRequest {
  imageUri: string;
  /** FirmwareInventory paths to update; the BMC decides when omitted. */
  targets?: string[];
  transferProtocol?: string;
  applyTime?: 'Immediate' | 'OnReset' | 'OnStartUpdateRequest';
  forceUpdate?: boolean;
  /** Image-server credentials; registered as secrets so no error can show them. */
  credentials?: { username: string; password: string };
}

export interface RunningVersion {
  version: string;
  /** Where it was read: the resource's own property, or the FirmwareInventory item. */
  source: 'System.BiosVersion' | 'Manager.FirmwareVersion' | 'FirmwareInventory';
  /** A newer image is staged and waits for a reset (or, for a BMC, its own restart). */
  staged?: string;
}

export interface VersionOptions {
  /** Also read FirmwareInventory for a staged image (one GET per item: off by default). */
  staged?: boolean;
}

/** The inventory item that is `resourcePath`'s running firmware (RelatedItem), and a staged one. */
async function inventoryFor(
  bmc: Bmc,
  resourcePath: string,
  id: string,
): Promise<{ running?: FirmwareItem; staged?: FirmwareItem }> {
  if (!linkOf(bmc.root, 'UpdateService')) return {};
  const service = await updateService(bmc);
  if (!linkOf(service, 'FirmwareInventory')) return {};
  const items = (await firmwareInventory(bmc)).filter(
    (i) => i.relatedItems.includes(resourcePath) || i.id === id || i.id === `${id}-Pending`,
  );
  return { running: items.find((i) => !i.staged), staged: items.find((i) => i.staged) };
}

async function versionOf(
  bmc: Bmc,
  own: string | undefined,
  source: RunningVersion['source'],
  path: string,
  id: string,
  withStaged: boolean,
): Promise<RunningVersion> {
  if (own && !withStaged) return { version: own, source };
  if (own) {
    // The resource says what runs; the inventory only adds a staged image, when it can be read.
    const staged = (await inventoryFor(bmc, path, id).catch(() => undefined))?.staged?.version;
    return { version: own, source, ...(staged ? { staged } : {}) };
  }
  const inventory = await inventoryFor(bmc, path, id);
  const staged = inventory.staged?.version;
  const version = inventory.running?.version;
  if (!version)
    throw unsupported(`${path} reports no firmware version, and no FirmwareInventory item relates to it`, {
      path,
    });
  return { version, source: 'FirmwareInventory', ...(staged ? { staged } : {}) };
}

/** The running BIOS version: `System.BiosVersion`, else the inventory item related to the System. */
export async function biosVersion(bmc: Bmc, opts: VersionOptions = {}): Promise<RunningVersion> {
  const system = await bmc.system();
  return versionOf(bmc, system.BiosVersion, 'System.BiosVersion', bmc.systemPath, 'BIOS', !!opts.staged);
}

/** The running BMC version: `Manager.FirmwareVersion`, else the inventory item related to the Manager. */
export async function bmcVersion(bmc: Bmc, opts: VersionOptions = {}): Promise<RunningVersion> {
  const manager = await bmc.manager();
  const path = bmc.requireManager();
  return versionOf(bmc, manager.FirmwareVersion, 'Manager.FirmwareVersion', path, 'BMC', !!opts.staged);
}

async function updateService(bmc: Bmc): Promise<UpdateService> {
  return bmc.client.get<UpdateService>(requireLink(bmc.root, 'UpdateService'));
}

function isStaged(item: SoftwareInventory): boolean {
  if ((item.Id ?? '').endsWith('-Pending')) return true;
  if (item.Staged === true) return true;
  const oem = Object.values(item.Oem ?? {}) as { Staged?: unknown }[];
  return oem.some((o) => typeof o === 'object' && o !== null && o.Staged === true);
}

export async function firmwareInventory(bmc: Bmc): Promise<FirmwareItem[]> {
  const path = linkOf(await updateService(bmc), 'FirmwareInventory');
  if (!path) throw unsupported('UpdateService has no FirmwareInventory');
  return (await members<SoftwareInventory>(bmc.client, path)).map((item) => ({
    id: item.Id ?? '',
    name: item.Name,
    version: item.Version,
    updateable: item.Updateable,
    staged: isStaged(item),
    path: item['@odata.id'] ?? '',
    relatedItems: (Array.isArray(item.RelatedItem) ? item.RelatedItem : [])
      .map((r) => (r as Partial<ODataRef> | null)?.['@odata.id'])
      .filter((id): id is string => typeof id === 'string'),
  }));
}

/** Starts a SimpleUpdate; returns the task to wait for, or undefined if the BMC finished at once. */
export async function simpleUpdate(bmc: Bmc, req: SimpleUpdateRequest): Promise<TaskHandle | undefined> {
  const service = await updateService(bmc);
  const action = await findAction(bmc.client, service, 'UpdateService.SimpleUpdate', 'TransferProtocol');
  if (req.transferProtocol) checkAllowed(action, req.transferProtocol, 'TransferProtocol');
  const body: Record<string, unknown> = { ImageURI: req.imageUri };
  if (req.targets) body.Targets = req.targets;
  if (req.transferProtocol) body.TransferProtocol = req.transferProtocol;
  if (req.forceUpdate !== undefined) body.ForceUpdate = req.forceUpdate;
  if (req.applyTime) body['@Redfish.OperationApplyTime'] = req.applyTime;
  if (req.credentials) {
    bmc.client.registerSecret(req.credentials.password);
    body.Username = req.credentials.username;
    body.Password = req.credentials.password;
  }
  const res = await bmc.client.post(action.target, body);
  bmc.client.log.info({ event: 'redfish.update.started', status: res.status }, 'SimpleUpdate accepted');
  return taskFromResponse(res);
}
