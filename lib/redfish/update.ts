// Firmware: the inventory of UpdateService and `UpdateService.SimpleUpdate`, which answers with
// a task to wait for (see tasks.ts). Actions never carry If-Match.
import type { Bmc } from './bmc.js';
import { unsupported } from './errors.js';
import { checkAllowed, findAction, linkOf, members, requireLink } from './navigation.js';
import { taskFromResponse, type TaskHandle } from './tasks.js';
import type { SoftwareInventory, UpdateService } from './types.js';

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
    relatedItems: (item.RelatedItem ?? []).map((r) => r['@odata.id']),
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
