// Virtual media: find a CD/DVD device under the System or the Manager, insert an image with
// sushy's retry ladder for picky BMCs, eject it. Both are idempotent: inserting the image that
// is already in, or ejecting an empty drive, changes nothing.
import type { Bmc } from './bmc.js';
import type { RedfishClient, RedfishResponse } from './client.js';
import { isHttpStatus, unsupported, type RedfishError } from './errors.js';
import { actionParameters, linkOf, members, type ActionParameter } from './navigation.js';
import { taskFromResponse, waitForTask } from './tasks.js';
import type { ActionDescriptor, VirtualMedia } from './types.js';
import { confirmWrite, readThenPatch, type ConfirmOptions } from './writes.js';

export interface MediaDevice {
  path: string;
  media: VirtualMedia;
}

export interface InsertOptions extends ConfirmOptions {
  /** Default CD (matches CD and DVD). */
  mediaType?: 'CD' | 'DVD' | 'USBStick' | 'Floppy';
  writeProtected?: boolean;
  /** Credentials of the image server, if it needs any. Scrubbed from every error. */
  imageCredentials?: { username: string; password: string };
}

export interface InsertResult {
  path: string;
  changed: boolean;
  /** Rung of the retry ladder that succeeded (0 = first try). */
  rung: number;
}

/** Statuses after which another rung of the ladder is worth trying. */
const LADDER_STATUSES = [400, 415, 422, 500];
const MAX_RUNG = 3;

/** `MediaTypes` as a list of upper-case names; some BMCs send one string instead of an array. */
export function mediaTypesOf(media: VirtualMedia): string[] {
  const raw: unknown = media.MediaTypes;
  const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : [];
  return list.filter((t): t is string => typeof t === 'string').map((t) => t.toUpperCase());
}

function matchesType(media: VirtualMedia, type: string): boolean {
  const types = mediaTypesOf(media);
  if (type === 'CD' || type === 'DVD') return types.includes('CD') || types.includes('DVD');
  return types.includes(type.toUpperCase());
}

async function collectionPaths(bmc: Bmc): Promise<string[]> {
  const system = await bmc.system();
  const fromSystem = linkOf(system, 'VirtualMedia');
  const fromManager = bmc.managerPath ? linkOf(await bmc.manager(), 'VirtualMedia') : undefined;
  const ordered =
    bmc.vendor.virtualMedia.prefer === 'manager' ? [fromManager, fromSystem] : [fromSystem, fromManager];
  return ordered.filter((p): p is string => typeof p === 'string');
}

/** The first device of `type` under the System or the Manager (vendor decides which first). */
export async function findVirtualMedia(
  bmc: Bmc,
  type: InsertOptions['mediaType'] = 'CD',
): Promise<MediaDevice> {
  for (const collection of await collectionPaths(bmc)) {
    const list = await members<VirtualMedia>(bmc.client, collection);
    const media = list.find((m) => matchesType(m, type));
    if (media?.['@odata.id']) return { path: media['@odata.id'], media };
  }
  throw unsupported(`no ${type} virtual media device under the System or the Manager`);
}

function transferProtocol(image: string): string {
  return new URL(image).protocol.replace(':', '').toUpperCase();
}

/** Parameters the InsertMedia body can carry, and what this client sends for each. */
const KNOWN_INSERT_PARAMETERS = new Set([
  'Image',
  'Inserted',
  'WriteProtected',
  'TransferProtocolType',
  'TransferMethod',
  'UserName',
  'Password',
]);

/**
 * What the action's `@Redfish.ActionInfo` requires, as fields every rung must carry. A required
 * parameter this client cannot fill, or a transfer protocol the BMC does not allow, is refused
 * before anything is sent.
 */
export function requiredInsertFields(
  parameters: ActionParameter[],
  image: string,
  opts: InsertOptions,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of parameters.filter((x) => x.Required === true)) {
    const name = p.Name!;
    if (!KNOWN_INSERT_PARAMETERS.has(name)) {
      throw unsupported(`InsertMedia requires parameter ${name}, which this client cannot fill`, {
        parameter: name,
      });
    }
    if (name === 'TransferProtocolType') out[name] = transferProtocol(image);
    else if (name === 'TransferMethod') out[name] = 'Stream';
    else if (name === 'Inserted') out[name] = true;
    else if (name === 'WriteProtected') out[name] = opts.writeProtected ?? true;
    else if (name === 'UserName' || name === 'Password') {
      const creds = opts.imageCredentials ?? { username: 'none', password: 'none' };
      out.UserName = creds.username;
      out.Password = creds.password;
    }
  }
  const protocols = parameters.find((x) => x.Name === 'TransferProtocolType')?.AllowableValues;
  const wanted = transferProtocol(image);
  if (Array.isArray(protocols) && protocols.length > 0 && !protocols.includes(wanted)) {
    throw unsupported(
      `InsertMedia does not allow TransferProtocolType ${wanted} (allowed: ${protocols.join(', ')})`,
      {
        allowable: protocols,
      },
    );
  }
  return out;
}

/** The InsertMedia body for one rung of the ladder. */
export function insertPayload(image: string, rung: number, opts: InsertOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { Image: image };
  // Inserted and WriteProtected default to true; sending them true breaks Supermicro X11/X12.
  if (opts.writeProtected === false) body.WriteProtected = false;
  if (opts.imageCredentials) {
    body.UserName = opts.imageCredentials.username;
    body.Password = opts.imageCredentials.password;
  }
  if (rung >= 1) body.TransferProtocolType = transferProtocol(image);
  if (rung >= 2) body.TransferMethod = 'Stream';
  // NVIDIA DGX refuses an insert without credentials, even for an open image server.
  if (rung >= 3 && !opts.imageCredentials) {
    body.UserName = 'none';
    body.Password = 'none';
  }
  return body;
}

function sameImage(media: VirtualMedia, image: string): boolean {
  return media.Inserted === true && media.Image === image;
}

async function reread(client: RedfishClient, path: string): Promise<VirtualMedia | undefined> {
  try {
    return await client.get<VirtualMedia>(path);
  } catch {
    return undefined;
  }
}

async function insertByAction(
  bmc: Bmc,
  device: MediaDevice,
  action: ActionDescriptor,
  image: string,
  opts: InsertOptions,
): Promise<number> {
  const profile = bmc.vendor.virtualMedia;
  const required = requiredInsertFields(await actionParameters(bmc.client, action), image, opts);
  let lastError: unknown;
  for (let rung = profile.firstRung; rung <= MAX_RUNG; rung++) {
    try {
      const res = await bmc.client.post(action.target, { ...insertPayload(image, rung, opts), ...required });
      await settle(bmc, res, opts);
      return rung;
    } catch (e) {
      lastError = e;
      if (!LADDER_STATUSES.some((s) => isHttpStatus(e, s))) throw e;
      // Some BMCs insert and still answer with an error (sushy-tools with UefiHttp does).
      const now = await reread(bmc.client, device.path);
      if (now && sameImage(now, image)) return rung;
      bmc.client.log.info(
        { event: 'redfish.media.ladder', rung, status: (e as RedfishError).status },
        'insert refused',
      );
    }
  }
  throw lastError;
}

/** Inserts `image`, ejecting a different image first. */
export async function insertMedia(bmc: Bmc, image: string, opts: InsertOptions = {}): Promise<InsertResult> {
  const device = await findVirtualMedia(bmc, opts.mediaType);
  if (sameImage(device.media, image)) return { path: device.path, changed: false, rung: 0 };
  if (device.media.Inserted) await ejectDevice(bmc, device, opts);
  if (opts.imageCredentials) bmc.client.registerSecret(opts.imageCredentials.password);
  const action = device.media.Actions?.['#VirtualMedia.InsertMedia'];
  if (!action?.target) {
    // Devices without actions (some Lenovo, DMTF rackmount1) take a PATCH of the resource.
    await readThenPatch(bmc.client, device.path, {
      Image: image,
      Inserted: true,
      WriteProtected: opts.writeProtected ?? true,
    });
    await confirmMedia(bmc, device.path, `insert ${image}`, (m) => sameImage(m, image), opts);
    return { path: device.path, changed: true, rung: 0 };
  }
  const rung = await insertByAction(bmc, device, action, image, opts);
  await confirmMedia(bmc, device.path, `insert ${image}`, (m) => sameImage(m, image), opts);
  bmc.client.log.info(
    { event: 'redfish.media.inserted', device: device.path, rung },
    'virtual media inserted',
  );
  return { path: device.path, changed: true, rung };
}

const ejected = (m: VirtualMedia): boolean => m.Inserted !== true;

async function ejectDevice(bmc: Bmc, device: MediaDevice, opts: ConfirmOptions = {}): Promise<void> {
  const action = device.media.Actions?.['#VirtualMedia.EjectMedia'];
  if (!action?.target) {
    await readThenPatch(bmc.client, device.path, { Image: null, Inserted: false });
    await confirmMedia(bmc, device.path, 'eject', ejected, opts);
    return;
  }
  const first = bmc.vendor.virtualMedia.ejectWithEmptyObject ? {} : undefined;
  try {
    await settle(bmc, await bmc.client.post(action.target, first), opts);
  } catch (e) {
    const now = await reread(bmc.client, device.path);
    if (now && !now.Inserted) return; // "already ejected" in whatever words the BMC chose
    if (first !== undefined || !isHttpStatus(e, 400, 415)) throw e;
    await settle(bmc, await bmc.client.post(action.target, {}), opts);
  }
  await confirmMedia(bmc, device.path, 'eject', ejected, opts);
}

/** A 202 with a task: wait for it (bounded) before reading back. */
async function settle(bmc: Bmc, res: RedfishResponse, opts: ConfirmOptions): Promise<void> {
  const task = res.status === 202 ? taskFromResponse(res) : undefined;
  if (task) await waitForTask(bmc.client, task, { timeoutMs: opts.timeoutMs ?? 10_000, pollMs: opts.pollMs });
}

/** Reads the device back until it shows the change (see `confirmWrite`). */
async function confirmMedia(
  bmc: Bmc,
  path: string,
  what: string,
  agrees: (m: VirtualMedia) => boolean,
  opts: ConfirmOptions,
): Promise<void> {
  await confirmWrite(
    bmc.client,
    `virtual media ${what} on ${path}`,
    () => bmc.client.get<VirtualMedia>(path),
    agrees,
    (m) => `Inserted ${String(m.Inserted)}, Image ${JSON.stringify(m.Image ?? null)}`,
    opts,
  );
}

/** Ejects whatever is in the device of `type`; `changed: false` when it was empty. */
export async function ejectMedia(
  bmc: Bmc,
  type: InsertOptions['mediaType'] = 'CD',
  opts: ConfirmOptions = {},
): Promise<{ path: string; changed: boolean }> {
  const device = await findVirtualMedia(bmc, type);
  if (!device.media.Inserted && !device.media.Image) return { path: device.path, changed: false };
  await ejectDevice(bmc, device, opts);
  bmc.client.log.info({ event: 'redfish.media.ejected', device: device.path }, 'virtual media ejected');
  return { path: device.path, changed: true };
}
