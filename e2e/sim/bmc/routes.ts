// SIMULATOR Redfish routes of one simulated BMC: a table from (profile, Systems, path) to
// handlers that read and change the model. Authentication, faults and outages are handled before
// this; the handlers are in routes-host.ts (per System) and routes-bmc.ts (the BMC itself).
import {
  dynamic,
  inventoryCollection,
  managerReset,
  patchManagerSettings,
  simpleUpdate,
} from './routes-bmc.js';
import { ejectMedia, insertMedia, patchBiosSettings, patchBoot, systemReset } from './routes-host.js';
import type { SimProfile } from './profiles.js';
import { fail, ok, withEtag, type Handler, type Methods, type SimReply, type SimRequest } from './reply.js';
import * as view from './resources.js';

export { fail, noContent, ok, type SimReply, type SimRequest } from './reply.js';

function settingsGet(req: SimRequest, key: string, attrs: () => Record<string, unknown>): SimReply {
  if (req.bmc.profile.settingsWriteOnly)
    return fail(404, 'Base.1.12.ResourceMissingAtURI', 'Write-only resource');
  return withEtag(req, key, view.settingsObject(req.base, req.rel, attrs(), req.bmc.etag(key)));
}

/** The handlers of System `slot`, each run with that System as `req.host`. */
function hostRoutes(r: Map<string, Methods>, p: SimProfile, hp: view.HostPaths, slot: number): void {
  const on =
    (h: Handler): Handler =>
    (q) =>
      h({ ...q, host: q.bmc.hosts[slot]!, hp });
  r.set(hp.system, {
    GET: on((q) => withEtag(q, q.host.key('system'), view.system(q.host, q.base, q.paths, hp))),
    PATCH: on((q) => patchBoot(q, false)),
  });
  if (hp.systemSettings) {
    r.set(hp.systemSettings, {
      GET: on((q) => settingsGet(q, q.host.key('systemSettings'), () => ({}))),
      PATCH: on((q) => patchBoot(q, true)),
    });
  }
  r.set(`${hp.system}/Actions/ComputerSystem.Reset`, { POST: on(systemReset) });
  r.set(hp.bios, {
    GET: on((q) => withEtag(q, q.host.key('bios'), view.bios(q.host, q.base, hp))),
    PATCH: on((q) =>
      p.quirks.biosPatchOnResource405
        ? fail(405, 'Base.1.12.OperationNotAllowed', 'PATCH the settings object')
        : patchBiosSettings(q),
    ),
  });
  r.set(hp.biosSettings, {
    GET: on((q) => settingsGet(q, q.host.key('biosSettings'), () => q.host.bios.pending)),
    PATCH: on(patchBiosSettings),
  });
  r.set(hp.media, {
    GET: on((q) =>
      ok(
        view.collection(
          q.base,
          hp.media,
          q.host.media.map((m) => `${hp.media}/${m.id}`),
          'Virtual Media',
        ),
      ),
    ),
  });
  for (const id of ['CD1', 'USB1']) {
    r.set(`${hp.media}/${id}`, {
      GET: on((q) => withEtag(q, q.host.key(`media-${id}`), view.mediaDevice(q.host, q.base, hp, id)!)),
    });
    if (p.quirks.insertActionInfo) {
      r.set(`${hp.media}/${id}/InsertMediaActionInfo`, {
        GET: (q) => ok(view.insertActionInfo(q.base, `${hp.media}/${id}/InsertMediaActionInfo`)),
      });
    }
    r.set(`${hp.media}/${id}/Actions/VirtualMedia.InsertMedia`, { POST: on((q) => insertMedia(q, id)) });
    r.set(`${hp.media}/${id}/Actions/VirtualMedia.EjectMedia`, { POST: on((q) => ejectMedia(q, id)) });
  }
}

function buildRoutes(p: SimProfile, paths: view.SimPaths): Map<string, Methods> {
  const r = new Map<string, Methods>();
  const { manager } = paths;
  r.set('', { GET: (q) => ok(view.serviceRoot(q.bmc, q.base)) });
  r.set('/Systems', {
    GET: (q) =>
      ok(
        view.collection(
          q.base,
          '/Systems',
          paths.hosts.map((h) => h.system),
          'Systems',
        ),
      ),
  });
  paths.hosts.forEach((hp, slot) => hostRoutes(r, p, hp, slot));
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
  // Dell publishes a registry for its DellAttributes too; the others only the BIOS's.
  const registries: (readonly [string, string, readonly object[]])[] = [
    ['BiosAttributeRegistry', 'BiosAttributeRegistry.v1_0_0', view.BIOS_REGISTRY_ENTRIES],
  ];
  if (p.quirks.dellAttributes)
    registries.push(['ManagerAttributeRegistry', view.MANAGER_REGISTRY, view.MANAGER_REGISTRY_ENTRIES]);
  r.set('/Registries', {
    GET: (q) =>
      ok(
        view.collection(
          q.base,
          '/Registries',
          registries.map(([id]) => `/Registries/${id}`),
          'Registries',
        ),
      ),
  });
  for (const [id, registry, entries] of registries) {
    r.set(`/Registries/${id}`, {
      GET: (q) =>
        ok({
          '@odata.id': `${q.base}/Registries/${id}`,
          Id: id,
          Registry: registry,
          Location: [{ Uri: `${q.base}/Registries/${id}/${id}.json` }],
        }),
    });
    r.set(`/Registries/${id}/${id}.json`, {
      GET: () => ok({ Id: registry, RegistryEntries: { Attributes: entries } }),
    });
  }
  return r;
}

type Table = { routes: Map<string, Methods>; paths: view.SimPaths };
const tables = new Map<SimProfile, Map<string, Table>>();

/** The route table of a profile with these System ids (shared by every BMC of that shape). */
export function routesFor(p: SimProfile, systemIds: string[] = [p.systemId]): Table {
  let byShape = tables.get(p);
  if (!byShape) tables.set(p, (byShape = new Map()));
  const key = systemIds.join('/');
  let t = byShape.get(key);
  if (!t) {
    const paths = view.simPaths(p, systemIds);
    t = { routes: buildRoutes(p, paths), paths };
    byShape.set(key, t);
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
