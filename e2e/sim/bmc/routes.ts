// SIMULATOR Redfish routes of one simulated BMC: a table from (profile, path) to handlers that
// read and change the model. Authentication, faults and outages are handled before this.
import type { SimBmc, SimTask } from './model.js';
import type { SimProfile } from './profiles.js';
import * as view from './resources.js';

export interface SimRequest {
  bmc: SimBmc;
  /** `/bmc/<n>/redfish/v1`. */
  base: string;
  method: string;
  /** Path after `/redfish/v1`, without a trailing slash ('' for the root). */
  rel: string;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  paths: view.SimPaths;
}

export interface SimReply {
  status: number;
  body?: unknown;
  /** Raw text body (instead of JSON). */
  text?: string;
  headers?: Record<string, string>;
}

type Handler = (req: SimRequest) => SimReply;
type Methods = Partial<Record<'GET' | 'POST' | 'PATCH' | 'DELETE', Handler>>;

export const ok = (body: unknown, headers?: Record<string, string>): SimReply => ({
  status: 200,
  body,
  headers,
});
export const noContent = (): SimReply => ({ status: 204 });
export const fail = (status: number, id: string, message: string): SimReply => ({
  status,
  body: view.redfishError(id, message),
});

function header(req: SimRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function bodyObject(req: SimRequest): Record<string, unknown> {
  return typeof req.body === 'object' && req.body !== null ? (req.body as Record<string, unknown>) : {};
}

/** ETag precondition of a PATCH on the resource `key`; undefined when it passes. */
function precondition(req: SimRequest, key: string): SimReply | undefined {
  const bmc = req.bmc;
  if (bmc.etagMode === 'none') return undefined;
  const ifMatch = header(req, 'if-match');
  if (!ifMatch) {
    if (bmc.etagMode !== 'required') return undefined;
    bmc.counters.preconditionRequired += 1;
    return fail(428, 'Base.1.12.PreconditionRequired', 'This request requires the If-Match header.');
  }
  const strip = (t: string): string => t.replace(/^W\//, '');
  if (ifMatch === '*' || strip(ifMatch) === strip(bmc.etag(key) ?? '')) return undefined;
  bmc.counters.preconditionFailed += 1;
  return fail(412, 'Base.1.12.PreconditionFailed', 'The ETag supplied did not match the current one.');
}

/** Action POSTs: counts If-Match (clients must not send it) and refuses it like iDRAC. */
function actionGuard(req: SimRequest): SimReply | undefined {
  if (!header(req, 'if-match')) return undefined;
  req.bmc.counters.ifMatchOnActions += 1;
  if (!req.bmc.profile.quirks.rejectIfMatchOnActions) return undefined;
  return fail(412, 'Base.1.12.PreconditionFailed', 'If-Match is not supported on actions.');
}

function withEtag(req: SimRequest, key: string, body: object): SimReply {
  const etag = req.bmc.etag(key);
  return ok(body, etag ? { ETag: etag } : undefined);
}

// --- systems, power, boot -----------------------------------------------------------------------

const RESET_TYPES = new Set([
  'On',
  'ForceOff',
  'GracefulShutdown',
  'GracefulRestart',
  'ForceRestart',
  'PowerCycle',
  'Nmi',
]);

function systemReset(req: SimRequest): SimReply {
  const guard = actionGuard(req);
  if (guard) return guard;
  const type = bodyObject(req).ResetType;
  if (typeof type !== 'string' || !RESET_TYPES.has(type)) {
    return fail(400, 'Base.1.12.ActionParameterNotSupported', `ResetType ${String(type)} is not supported`);
  }
  if (type === 'Nmi') return noContent();
  if (!req.bmc.reset(type)) return fail(409, 'Base.1.12.ResourceInUse', 'A power transition is in progress.');
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
  const b = req.bmc.boot;
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
  req.bmc.bump('system', 'systemSettings');
}

function patchBoot(req: SimRequest, viaSettings: boolean): SimReply {
  const bmc = req.bmc;
  const key = viaSettings ? 'systemSettings' : 'system';
  const pre = precondition(req, key);
  if (pre) return pre;
  const body = bodyObject(req);
  const unknown = Object.keys(body).filter((k) => k !== 'Boot');
  if (unknown.length > 0) return { status: 400, text: `Unsupported properties: ${unknown.join(', ')}` };
  if (!viaSettings && bmc.profile.quirks.bootOnlyViaSettings) {
    return fail(400, 'Base.1.12.PropertyNotWritable', 'Boot must be changed through the settings object');
  }
  const boot = (body.Boot ?? {}) as Record<string, unknown>;
  const system = view.system(bmc, req.base, req.paths) as { Boot: Record<string, string[]> };
  const invalid = validateBoot(
    bmc.profile,
    boot,
    system.Boot['BootSourceOverrideTarget@Redfish.AllowableValues']!,
  );
  if (invalid) return invalid;
  applyBoot(req, boot);
  return noContent();
}

// --- settings (BIOS, BMC attributes) -------------------------------------------------------------

function patchBiosSettings(req: SimRequest): SimReply {
  const bmc = req.bmc;
  const pre = precondition(req, 'biosSettings');
  if (pre) return pre;
  const body = bodyObject(req);
  const attrs = body.Attributes;
  if (typeof attrs !== 'object' || attrs === null)
    return fail(400, 'Base.1.12.PropertyMissing', 'Attributes is required');
  const unknown = Object.keys(attrs).filter((k) => !(k in bmc.bios.current));
  if (unknown.length > 0)
    return fail(400, 'Base.1.12.PropertyUnknown', `Unknown attributes: ${unknown.join(', ')}`);
  const applyTime = (body['@Redfish.SettingsApplyTime'] as { ApplyTime?: string } | undefined)?.ApplyTime;
  if (bmc.profile.quirks.dellJobs && bmc.bios.jobId) {
    return fail(400, 'IDRAC.2.8.SYS011', 'Pending configuration values are already committed');
  }
  Object.assign(bmc.bios.pending, attrs);
  bmc.counters.biosPatches += 1;
  bmc.bump('biosSettings');
  if (bmc.profile.quirks.dellJobs && applyTime) {
    const job = bmc.scheduleBiosJob();
    return { status: 202, headers: { Location: `${req.base}${req.paths.jobs}/${job.id}` } };
  }
  return noContent();
}

function patchManagerSettings(req: SimRequest): SimReply {
  const bmc = req.bmc;
  const pre = precondition(req, 'managerSettings');
  if (pre) return pre;
  const body = bodyObject(req);
  const attrs = body.Attributes as Record<string, unknown> | undefined;
  if (!attrs) return fail(400, 'Base.1.12.PropertyMissing', 'Attributes is required');
  const unknown = Object.keys(attrs).filter((k) => !(k in bmc.managerAttrs.current));
  if (unknown.length > 0)
    return fail(400, 'Base.1.12.PropertyUnknown', `Unknown attributes: ${unknown.join(', ')}`);
  bmc.counters.managerPatches += 1;
  const applyTime = (body['@Redfish.SettingsApplyTime'] as { ApplyTime?: string } | undefined)?.ApplyTime;
  if (applyTime === 'Immediate') bmc.applyManagerAttrsNow(attrs);
  else {
    Object.assign(bmc.managerAttrs.pending, attrs);
    bmc.bump('managerSettings');
  }
  return noContent();
}

function managerReset(req: SimRequest): SimReply {
  const guard = actionGuard(req);
  if (guard) return guard;
  const type = bodyObject(req).ResetType;
  if (type !== 'GracefulRestart' && type !== 'ForceRestart') {
    return fail(400, 'Base.1.12.ActionParameterNotSupported', `ResetType ${String(type)} is not supported`);
  }
  req.bmc.managerReset(type);
  return noContent();
}

// --- virtual media -------------------------------------------------------------------------------

function insertMedia(req: SimRequest, id: string): SimReply {
  const guard = actionGuard(req);
  if (guard) return guard;
  const bmc = req.bmc;
  const device = bmc.media.find((m) => m.id === id)!;
  const body = bodyObject(req);
  const reject = (msg: string): SimReply => {
    bmc.counters.mediaInsertRejects += 1;
    return fail(400, 'Base.1.12.ActionParameterNotSupported', msg);
  };
  if (typeof body.Image !== 'string' || !/^https?:\/\//.test(body.Image))
    return reject('Image must be an http(s) URL');
  if (bmc.profile.quirks.supermicroMedia) {
    if ('Inserted' in body || 'WriteProtected' in body)
      return reject('Inserted and WriteProtected are not supported');
    if (!body.TransferProtocolType) return reject('TransferProtocolType is required');
  }
  if (device.inserted) return fail(409, 'Base.1.12.ResourceInUse', 'Media already inserted; eject first');
  Object.assign(device, { image: body.Image, inserted: true, writeProtected: body.WriteProtected !== false });
  bmc.counters.mediaInserts += 1;
  bmc.bump(`media-${id}`);
  return noContent();
}

function ejectMedia(req: SimRequest, id: string): SimReply {
  const guard = actionGuard(req);
  if (guard) return guard;
  const bmc = req.bmc;
  if (bmc.profile.quirks.ejectNeedsBody && req.body === undefined) {
    return fail(415, 'Base.1.12.UnsupportedMediaType', 'A JSON body is required');
  }
  const device = bmc.media.find((m) => m.id === id)!;
  if (!device.inserted) return fail(400, 'Base.1.12.ActionNotSupported', 'No media is inserted');
  Object.assign(device, { image: null, inserted: false });
  bmc.counters.mediaEjects += 1;
  bmc.bump(`media-${id}`);
  return noContent();
}

// --- update service and tasks --------------------------------------------------------------------

function simpleUpdate(req: SimRequest): SimReply {
  const guard = actionGuard(req);
  if (guard) return guard;
  const body = bodyObject(req);
  if (typeof body.ImageURI !== 'string' || body.ImageURI === '') {
    return fail(400, 'Base.1.12.PropertyMissing', 'ImageURI is required');
  }
  const targets = Array.isArray(body.Targets) ? (body.Targets as string[]) : [];
  const target = targets.some((t) => t.endsWith('/BMC')) ? 'BMC' : 'BIOS';
  const task = req.bmc.startUpdate(body.ImageURI, target);
  const q = req.bmc.profile.quirks;
  const monitor = `${req.base}/TaskService/TaskMonitors/${task.id}`;
  if (q.taskMonitorInBody) return { status: 202, body: { TaskMonitor: monitor } };
  if (q.taskInBody) return { status: 202, body: view.taskView(req.bmc, req.base, req.paths, task) };
  return {
    status: 202,
    body: view.taskView(req.bmc, req.base, req.paths, task),
    headers: { Location: monitor },
  };
}

function monitor(req: SimRequest, task: SimTask): SimReply {
  const bmc = req.bmc;
  bmc.progress(task);
  const body = view.taskView(bmc, req.base, req.paths, task);
  if (task.state !== 'Completed' && task.state !== 'Exception') {
    const retry = bmc.timing.taskRetryAfterS;
    return { status: 202, body, headers: retry > 0 ? { 'Retry-After': String(retry) } : {} };
  }
  if (task.state === 'Completed' && bmc.profile.quirks.successEnvelope) {
    return ok(view.redfishError('Base.1.4.Success', 'Successfully Completed Request'));
  }
  return ok(body);
}

function dynamic(req: SimRequest): SimReply | undefined {
  const m = /^\/TaskService\/(Tasks|TaskMonitors)\/([^/]+)$/.exec(req.rel);
  if (m && req.method === 'GET') {
    const task = req.bmc.tasks.get(m[2]!);
    if (!task) return fail(404, 'Base.1.12.ResourceMissingAtURI', 'No such task');
    return m[1] === 'Tasks' ? ok(view.taskView(req.bmc, req.base, req.paths, task)) : monitor(req, task);
  }
  const job = req.rel.startsWith(`${req.paths.jobs}/`)
    ? req.bmc.tasks.get(req.rel.split('/').pop()!)
    : undefined;
  if (job && req.method === 'GET') return ok(view.taskView(req.bmc, req.base, req.paths, job));
  const inv = /^\/UpdateService\/FirmwareInventory\/([^/]+)$/.exec(req.rel);
  if (inv && req.method === 'GET') {
    const item = view.inventoryItem(req.bmc, req.base, req.paths, inv[1]!);
    return item ? ok(item) : undefined;
  }
  return undefined;
}

// --- route table ---------------------------------------------------------------------------------

function settingsGet(req: SimRequest, key: string, attrs: () => Record<string, unknown>): SimReply {
  if (req.bmc.profile.settingsWriteOnly)
    return fail(404, 'Base.1.12.ResourceMissingAtURI', 'Write-only resource');
  return withEtag(req, key, view.settingsObject(req.base, req.rel, attrs(), req.bmc.etag(key)));
}

function inventoryCollection(req: SimRequest): SimReply {
  // Paged by two, to exercise Members@odata.nextLink.
  const skip = Number(req.query.get('$skip') ?? 0);
  const page = view.INVENTORY.slice(skip, skip + 2).map((id) => `/UpdateService/FirmwareInventory/${id}`);
  const body = view.collection(
    req.base,
    '/UpdateService/FirmwareInventory',
    page,
    'Firmware Inventory',
  ) as Record<string, unknown>;
  body['Members@odata.count'] = view.INVENTORY.length;
  if (skip + 2 < view.INVENTORY.length) {
    body['Members@odata.nextLink'] = `${req.base}/UpdateService/FirmwareInventory?$skip=${skip + 2}`;
  }
  return ok(body);
}

function buildRoutes(p: SimProfile, paths: view.SimPaths): Map<string, Methods> {
  const r = new Map<string, Methods>();
  const { system, manager } = paths;
  r.set('', { GET: (q) => ok(view.serviceRoot(q.bmc, q.base)) });
  r.set('/Systems', { GET: (q) => ok(view.collection(q.base, '/Systems', [system], 'Systems')) });
  r.set(system, {
    GET: (q) => withEtag(q, 'system', view.system(q.bmc, q.base, paths)),
    PATCH: (q) => patchBoot(q, false),
  });
  if (paths.systemSettings) {
    r.set(paths.systemSettings, {
      GET: (q) => settingsGet(q, 'systemSettings', () => ({})),
      PATCH: (q) => patchBoot(q, true),
    });
  }
  r.set(`${system}/Actions/ComputerSystem.Reset`, { POST: systemReset });
  r.set(paths.bios, {
    GET: (q) => withEtag(q, 'bios', view.bios(q.bmc, q.base, paths)),
    PATCH: (q) =>
      p.quirks.biosPatchOnResource405
        ? fail(405, 'Base.1.12.OperationNotAllowed', 'PATCH the settings object')
        : patchBiosSettings(q),
  });
  r.set(paths.biosSettings, {
    GET: (q) => settingsGet(q, 'biosSettings', () => q.bmc.bios.pending),
    PATCH: patchBiosSettings,
  });
  r.set('/Managers', { GET: (q) => ok(view.collection(q.base, '/Managers', [manager], 'Managers')) });
  r.set(manager, { GET: (q) => withEtag(q, 'manager', view.manager(q.bmc, q.base, paths)) });
  r.set(`${manager}/Actions/Manager.Reset`, { POST: managerReset });
  const settingsPath = p.quirks.dellAttributes ? paths.dellAttributesSettings : paths.managerSettings;
  if (p.quirks.dellAttributes) {
    r.set(paths.dellAttributes, {
      GET: (q) => withEtag(q, 'manager', view.dellAttributes(q.bmc, q.base, paths)),
    });
  }
  r.set(settingsPath, {
    GET: (q) => settingsGet(q, 'managerSettings', () => q.bmc.managerAttrs.pending),
    PATCH: patchManagerSettings,
  });
  r.set(paths.media, {
    GET: (q) =>
      ok(
        view.collection(
          q.base,
          paths.media,
          q.bmc.media.map((m) => `${paths.media}/${m.id}`),
          'Virtual Media',
        ),
      ),
  });
  for (const id of ['CD1', 'USB1']) {
    r.set(`${paths.media}/${id}`, {
      GET: (q) => withEtag(q, `media-${id}`, view.mediaDevice(q.bmc, q.base, paths, id)!),
    });
    r.set(`${paths.media}/${id}/Actions/VirtualMedia.InsertMedia`, { POST: (q) => insertMedia(q, id) });
    r.set(`${paths.media}/${id}/Actions/VirtualMedia.EjectMedia`, { POST: (q) => ejectMedia(q, id) });
  }
  r.set('/UpdateService', {
    GET: (q) =>
      ok({
        '@odata.id': `${q.base}/UpdateService`,
        Id: 'UpdateService',
        FirmwareInventory: view.ref(q.base, '/UpdateService/FirmwareInventory'),
        Actions: {
          '#UpdateService.SimpleUpdate': {
            target: `${q.base}/UpdateService/Actions/UpdateService.SimpleUpdate`,
            'TransferProtocol@Redfish.AllowableValues': ['HTTP', 'HTTPS'],
          },
        },
      }),
  });
  r.set('/UpdateService/FirmwareInventory', { GET: inventoryCollection });
  r.set('/UpdateService/Actions/UpdateService.SimpleUpdate', { POST: simpleUpdate });
  r.set('/TaskService', {
    GET: (q) => ok({ '@odata.id': `${q.base}/TaskService`, Tasks: view.ref(q.base, '/TaskService/Tasks') }),
  });
  r.set('/TaskService/Tasks', {
    GET: (q) =>
      ok(
        view.collection(
          q.base,
          '/TaskService/Tasks',
          [...q.bmc.tasks.keys()].map((id) => `/TaskService/Tasks/${id}`),
          'Tasks',
        ),
      ),
  });
  r.set('/SessionService', {
    GET: (q) =>
      ok({ '@odata.id': `${q.base}/SessionService`, Sessions: view.ref(q.base, '/SessionService/Sessions') }),
  });
  r.set('/Registries', {
    GET: (q) =>
      ok(view.collection(q.base, '/Registries', ['/Registries/BiosAttributeRegistry'], 'Registries')),
  });
  r.set('/Registries/BiosAttributeRegistry', {
    GET: (q) =>
      ok({
        '@odata.id': `${q.base}/Registries/BiosAttributeRegistry`,
        Id: 'BiosAttributeRegistry',
        Registry: 'BiosAttributeRegistry.v1_0_0',
        Location: [{ Uri: `${q.base}/Registries/BiosAttributeRegistry/BiosAttributeRegistry.json` }],
      }),
  });
  r.set('/Registries/BiosAttributeRegistry/BiosAttributeRegistry.json', {
    GET: () =>
      ok({
        Id: 'BiosAttributeRegistry.v1_0_0',
        RegistryEntries: { Attributes: view.BIOS_REGISTRY_ENTRIES },
      }),
  });
  return r;
}

const tables = new Map<SimProfile, { routes: Map<string, Methods>; paths: view.SimPaths }>();

export function routesFor(p: SimProfile): { routes: Map<string, Methods>; paths: view.SimPaths } {
  let t = tables.get(p);
  if (!t) {
    const paths = view.simPaths(p);
    t = { routes: buildRoutes(p, paths), paths };
    tables.set(p, t);
  }
  return t;
}

/** Dispatches one authenticated request. */
export function route(req: SimRequest, routes: Map<string, Methods>): SimReply {
  const methods = routes.get(req.rel);
  if (methods) {
    const handler = methods[req.method as keyof Methods];
    if (handler) return handler(req);
    return fail(405, 'Base.1.12.OperationNotAllowed', `${req.method} is not allowed on ${req.rel || '/'}`);
  }
  return dynamic(req) ?? fail(404, 'Base.1.12.ResourceMissingAtURI', `No resource at ${req.rel}`);
}
