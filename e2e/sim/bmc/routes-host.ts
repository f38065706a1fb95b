// SIMULATOR routes of one System behind the BMC: ComputerSystem.Reset, the boot override, BIOS
// settings and virtual media. Each handler works on `req.host`, the System the path names.
import type { SimProfile } from './profiles.js';
import {
  actionGuard,
  applyTimeOf,
  bodyObject,
  fail,
  noContent,
  precondition,
  type SimReply,
  type SimRequest,
} from './reply.js';
import * as view from './resources.js';
import { stageAttributes } from './host.js';

const RESET_TYPES: ReadonlySet<string> = new Set(view.RESET_TYPES);

export function systemReset(req: SimRequest): SimReply {
  const guard = actionGuard(req);
  if (guard) return guard;
  const type = bodyObject(req).ResetType;
  if (typeof type !== 'string' || !RESET_TYPES.has(type)) {
    return fail(400, 'Base.1.12.ActionParameterNotSupported', `ResetType ${String(type)} is not supported`);
  }
  if (type === 'Nmi') return noContent();
  // Accepted and dropped: the host never restarts (a fault a test asks for).
  if (req.bmc.faults.takeIgnoredWrite('POST', req.rel)) return noContent();
  if (!req.host.reset(type))
    return fail(409, 'Base.1.12.ResourceInUse', 'A power transition is in progress.');
  return noContent();
}

function validateBoot(p: SimProfile, boot: Record<string, unknown>, allowed: string[]): SimReply | undefined {
  const target = boot.BootSourceOverrideTarget;
  if (target !== undefined && !allowed.includes(target as string)) {
    return fail(
      400,
      'Base.1.12.PropertyValueNotInList',
      `BootSourceOverrideTarget ${JSON.stringify(target)} is not allowed`,
    );
  }
  if (p.quirks.rejectContinuous && boot.BootSourceOverrideEnabled === 'Continuous') {
    return fail(400, 'Base.1.12.PropertyValueNotInList', 'Continuous is not supported');
  }
  if (p.quirks.supermicroBoot && boot.BootSourceOverrideEnabled === undefined) {
    return fail(400, 'Base.1.12.PropertyMissing', 'BootSourceOverrideEnabled is required');
  }
  if (boot.HttpBootUri && target !== 'UefiHttp' && boot.HttpBootUri !== null) {
    return fail(
      400,
      'Base.1.12.PropertyValueConflict',
      'HttpBootUri needs BootSourceOverrideTarget UefiHttp',
    );
  }
  return undefined;
}

function applyBoot(req: SimRequest, boot: Record<string, unknown>): void {
  const host = req.host;
  const b = host.boot;
  const p = req.bmc.profile;
  if (typeof boot.BootSourceOverrideEnabled === 'string') b.enabled = boot.BootSourceOverrideEnabled;
  if (typeof boot.BootSourceOverrideTarget === 'string') {
    if (p.quirks.supermicroBoot && boot.BootSourceOverrideMode === undefined) b.mode = 'Legacy';
    b.target = boot.BootSourceOverrideTarget;
  }
  if (boot.BootSourceOverrideMode === 'UEFI' || boot.BootSourceOverrideMode === 'Legacy') {
    b.mode = boot.BootSourceOverrideMode;
  }
  if ('HttpBootUri' in boot) b.httpBootUri = (boot.HttpBootUri as string | null) ?? null;
  req.bmc.counters.bootPatches += 1;
  req.bmc.bump(host.key('system'), host.key('systemSettings'));
}

export function patchBoot(req: SimRequest, viaSettings: boolean): SimReply {
  const { bmc, host } = req;
  if (bmc.faults.takeIgnoredWrite('PATCH', req.rel)) return noContent();
  // A write-only settings object (AMI `SD`) is guarded by the ETag of the System it applies to.
  const guardedBy = viaSettings && !bmc.profile.settingsWriteOnly ? 'systemSettings' : 'system';
  const pre = precondition(req, host.key(guardedBy));
  if (pre) return pre;
  const body = bodyObject(req);
  const unknown = Object.keys(body).filter((k) => k !== 'Boot');
  if (unknown.length > 0) return { status: 400, text: `Unsupported properties: ${unknown.join(', ')}` };
  if (!viaSettings && bmc.profile.quirks.bootOnlyViaSettings) {
    return fail(400, 'Base.1.12.PropertyNotWritable', 'Boot must be changed through the settings object');
  }
  const boot = (body.Boot ?? {}) as Record<string, unknown>;
  const system = view.system(host, req.base, req.paths, req.hp) as { Boot: Record<string, string[]> };
  const invalid = validateBoot(
    bmc.profile,
    boot,
    system.Boot['BootSourceOverrideTarget@Redfish.AllowableValues']!,
  );
  if (invalid) return invalid;
  applyBoot(req, boot);
  return noContent();
}

export function patchBiosSettings(req: SimRequest): SimReply {
  const { bmc, host } = req;
  // A write-only settings object (AMI `SD`) is guarded by the ETag of the Bios it applies to.
  const onSettings = req.rel === req.hp.biosSettings && !bmc.profile.settingsWriteOnly;
  const pre = precondition(req, host.key(onSettings ? 'biosSettings' : 'bios'));
  if (pre) return pre;
  const body = bodyObject(req);
  const attrs = body.Attributes;
  if (typeof attrs !== 'object' || attrs === null)
    return fail(400, 'Base.1.12.PropertyMissing', 'Attributes is required');
  const unknown = Object.keys(attrs).filter((k) => !(k in host.bios.current));
  if (unknown.length > 0)
    return fail(400, 'Base.1.12.PropertyUnknown', `Unknown attributes: ${unknown.join(', ')}`);
  const applyTime = applyTimeOf(body);
  if (bmc.profile.quirks.dellJobs && host.bios.jobId) {
    return fail(400, 'IDRAC.2.8.SYS011', 'Pending configuration values are already committed');
  }
  if (bmc.faults.takeIgnoredWrite('PATCH', req.rel)) return noContent();
  bmc.counters.biosPatches += 1;
  if (stageAttributes(host.bios.pending, host.bios.current, attrs as Record<string, unknown>))
    host.ledger.biosSettingsDiscards += 1;
  else host.ledger.biosSettingsWrites += 1;
  bmc.bump(host.key('biosSettings'));
  if (bmc.profile.quirks.dellJobs && applyTime) {
    const job = bmc.scheduleBiosJob(host);
    return { status: 202, headers: { Location: `${req.base}${req.paths.jobs}/${job.id}` } };
  }
  return noContent();
}

export function insertMedia(req: SimRequest, id: string): SimReply {
  const guard = actionGuard(req);
  if (guard) return guard;
  const { bmc, host } = req;
  const device = host.media.find((m) => m.id === id)!;
  const body = bodyObject(req);
  const reject = (msg: string): SimReply => {
    bmc.counters.mediaInsertRejects += 1;
    return fail(400, 'Base.1.12.ActionParameterNotSupported', msg);
  };
  if (typeof body.Image !== 'string' || !/^https?:\/\//.test(body.Image))
    return reject('Image must be an http(s) URL');
  if (bmc.profile.quirks.insertActionInfo && !body.TransferProtocolType) {
    return reject("TransferProtocolType is required (see the action's @Redfish.ActionInfo)");
  }
  if (bmc.profile.quirks.supermicroMedia) {
    if ('Inserted' in body || 'WriteProtected' in body)
      return reject('Inserted and WriteProtected are not supported');
    if (!body.TransferProtocolType) return reject('TransferProtocolType is required');
  }
  if (device.inserted) return fail(409, 'Base.1.12.ResourceInUse', 'Media already inserted; eject first');
  if (bmc.faults.takeIgnoredWrite('POST', req.rel)) return noContent();
  Object.assign(device, { image: body.Image, inserted: true, writeProtected: body.WriteProtected !== false });
  bmc.counters.mediaInserts += 1;
  bmc.bump(host.key(`media-${id}`));
  return noContent();
}

export function ejectMedia(req: SimRequest, id: string): SimReply {
  const guard = actionGuard(req);
  if (guard) return guard;
  const { bmc, host } = req;
  if (bmc.profile.quirks.ejectNeedsBody && req.body === undefined) {
    return fail(415, 'Base.1.12.UnsupportedMediaType', 'A JSON body is required');
  }
  const device = host.media.find((m) => m.id === id)!;
  if (!device.inserted) return fail(400, 'Base.1.12.ActionNotSupported', 'No media is inserted');
  if (bmc.faults.takeIgnoredWrite('POST', req.rel)) return noContent();
  Object.assign(device, { image: null, inserted: false });
  bmc.counters.mediaEjects += 1;
  bmc.bump(host.key(`media-${id}`));
  return noContent();
}
