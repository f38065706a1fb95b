// SIMULATOR routes of the BMC itself: Manager attributes and reset, UpdateService.SimpleUpdate,
// task monitors, Dell jobs and the firmware inventory.
import type { SimTask } from './model.js';
import {
  actionGuard,
  applyTimeOf,
  bodyObject,
  fail,
  noContent,
  ok,
  precondition,
  type SimReply,
  type SimRequest,
} from './reply.js';
import * as view from './resources.js';

export function patchManagerSettings(req: SimRequest): SimReply {
  const bmc = req.bmc;
  const pre = precondition(req, 'managerSettings');
  if (pre) return pre;
  const body = bodyObject(req);
  const attrs = body.Attributes as Record<string, unknown> | undefined;
  if (!attrs) return fail(400, 'Base.1.12.PropertyMissing', 'Attributes is required');
  const unknown = Object.keys(attrs).filter((k) => !(k in bmc.managerAttrs.current));
  if (unknown.length > 0)
    return fail(400, 'Base.1.12.PropertyUnknown', `Unknown attributes: ${unknown.join(', ')}`);
  const readOnly = bmc.profile.quirks.dellAttributes
    ? Object.keys(attrs).filter((k) => view.MANAGER_READ_ONLY.has(k))
    : [];
  if (readOnly.length > 0)
    return fail(400, 'Base.1.12.PropertyNotWritable', `Read-only attributes: ${readOnly.join(', ')}`);
  if (bmc.faults.takeIgnoredWrite('PATCH', req.rel)) return noContent();
  bmc.counters.managerPatches += 1;
  bmc.ledger.bmcSettingsWrites += 1;
  if (applyTimeOf(body) === 'Immediate') bmc.applyManagerAttrsNow(attrs);
  else {
    Object.assign(bmc.managerAttrs.pending, attrs);
    bmc.bump('managerSettings');
  }
  return noContent();
}

export function managerReset(req: SimRequest): SimReply {
  const guard = actionGuard(req);
  if (guard) return guard;
  const type = bodyObject(req).ResetType;
  if (type !== 'GracefulRestart' && type !== 'ForceRestart') {
    return fail(400, 'Base.1.12.ActionParameterNotSupported', `ResetType ${String(type)} is not supported`);
  }
  req.bmc.managerReset(type);
  return noContent();
}

/** What a SimpleUpdate's Targets name: the BMC, or the BIOS of one System (default the first). */
function updateTarget(req: SimRequest, targets: string[]): { target: 'BIOS' | 'BMC'; slot: number } | string {
  if (targets.length === 0) return { target: 'BIOS', slot: 0 };
  const rels = targets.map((t) => t.replace(/^.*\/redfish\/v1/, '').replace(/\/+$/, ''));
  if (rels.some((t) => t === '/UpdateService/FirmwareInventory/BMC' || t === req.paths.manager)) {
    return { target: 'BMC', slot: 0 };
  }
  const slot = req.paths.hosts.findIndex((h) =>
    rels.some((t) => t === h.system || t === `/UpdateService/FirmwareInventory/${h.biosInventory}`),
  );
  return slot >= 0 ? { target: 'BIOS', slot } : `Targets ${targets.join(', ')} name nothing updateable`;
}

export function simpleUpdate(req: SimRequest): SimReply {
  const guard = actionGuard(req);
  if (guard) return guard;
  const body = bodyObject(req);
  if (typeof body.ImageURI !== 'string' || body.ImageURI === '') {
    return fail(400, 'Base.1.12.PropertyMissing', 'ImageURI is required');
  }
  const which = updateTarget(req, Array.isArray(body.Targets) ? (body.Targets as string[]) : []);
  if (typeof which === 'string') return fail(400, 'Base.1.12.PropertyValueNotInList', which);
  const task = req.bmc.startUpdate(body.ImageURI, which.target, req.bmc.hosts[which.slot]);
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

/** Routes with an id in the path: tasks, monitors, Dell jobs, inventory items. */
export function dynamic(req: SimRequest): SimReply | undefined {
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

export function inventoryCollection(req: SimRequest): SimReply {
  // Paged by two, to exercise Members@odata.nextLink.
  const ids = view.inventoryIds(req.paths);
  const skip = Number(req.query.get('$skip') ?? 0);
  const page = ids.slice(skip, skip + 2).map((id) => `/UpdateService/FirmwareInventory/${id}`);
  const body = view.collection(
    req.base,
    '/UpdateService/FirmwareInventory',
    page,
    'Firmware Inventory',
  ) as Record<string, unknown>;
  body['Members@odata.count'] = ids.length;
  if (skip + 2 < ids.length) {
    body['Members@odata.nextLink'] = `${req.base}/UpdateService/FirmwareInventory?$skip=${skip + 2}`;
  }
  return ok(body);
}
