// Virtual media: find a CD/DVD device under the System or the Manager, insert an image with
// sushy's retry ladder for picky BMCs, eject it. Both are idempotent: inserting the image that
// is already in, or ejecting an empty drive, changes nothing.
import type { Bmc } from './bmc.js';
import type { RedfishClient } from './client.js';
import { isHttpStatus, unsupported, type RedfishError } from './errors.js';
import { linkOf, members } from './navigation.js';
import type { VirtualMedia } from './types.js';
import { readThenPatch } from './writes.js';

export interface MediaDevice {
  path: string;
  media: VirtualMedia;
}

export interface InsertOptions {
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

function matchesType(media: VirtualMedia, type: string): boolean {
  const types = (media.MediaTypes ?? []).map((t) => t.toUpperCase());
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
  target: string,
  image: string,
  opts: InsertOptions,
): Promise<number> {
  const profile = bmc.vendor.virtualMedia;
  let lastError: unknown;
  for (let rung = profile.firstRung; rung <= MAX_RUNG; rung++) {
    try {
      await bmc.client.post(target, insertPayload(image, rung, opts));
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
  if (device.media.Inserted) await ejectDevice(bmc, device);
  if (opts.imageCredentials) bmc.client.registerSecret(opts.imageCredentials.password);
  const action = device.media.Actions?.['#VirtualMedia.InsertMedia'];
  if (!action?.target) {
    // Devices without actions (some Lenovo, DMTF rackmount1) take a PATCH of the resource.
    await readThenPatch(bmc.client, device.path, {
      Image: image,
      Inserted: true,
      WriteProtected: opts.writeProtected ?? true,
    });
    return { path: device.path, changed: true, rung: 0 };
  }
  const rung = await insertByAction(bmc, device, action.target, image, opts);
  bmc.client.log.info(
    { event: 'redfish.media.inserted', device: device.path, rung },
    'virtual media inserted',
  );
  return { path: device.path, changed: true, rung };
}

async function ejectDevice(bmc: Bmc, device: MediaDevice): Promise<void> {
  const action = device.media.Actions?.['#VirtualMedia.EjectMedia'];
  if (!action?.target) {
    await readThenPatch(bmc.client, device.path, { Image: null, Inserted: false });
    return;
  }
  const first = bmc.vendor.virtualMedia.ejectWithEmptyObject ? {} : undefined;
  try {
    await bmc.client.post(action.target, first);
  } catch (e) {
    const now = await reread(bmc.client, device.path);
    if (now && !now.Inserted) return; // "already ejected" in whatever words the BMC chose
    if (first !== undefined || !isHttpStatus(e, 400, 415)) throw e;
    await bmc.client.post(action.target, {});
  }
}

/** Ejects whatever is in the device of `type`; `changed: false` when it was empty. */
export async function ejectMedia(
  bmc: Bmc,
  type: InsertOptions['mediaType'] = 'CD',
): Promise<{ path: string; changed: boolean }> {
  const device = await findVirtualMedia(bmc, type);
  if (!device.media.Inserted && !device.media.Image) return { path: device.path, changed: false };
  await ejectDevice(bmc, device);
  bmc.client.log.info({ event: 'redfish.media.ejected', device: device.path }, 'virtual media ejected');
  return { path: device.path, changed: true };
}
