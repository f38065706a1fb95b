// Navigation by `@odata.id`: links, collections (with `Members@odata.nextLink` paging), the
// System and Manager a client works on, and action targets with their allowable values.
import type { RedfishClient } from './client.js';
import { unsupported } from './errors.js';
import type { ActionDescriptor, Collection, ODataRef, Resource, ServiceRoot } from './types.js';

/** Safety net against a BMC whose nextLink points back at an earlier page. */
const MAX_PAGES = 100;

export function linkOf(resource: object, key: string): string | undefined {
  const ref = (resource as Record<string, unknown>)[key];
  if (typeof ref === 'object' && ref !== null && typeof (ref as ODataRef)['@odata.id'] === 'string') {
    return (ref as ODataRef)['@odata.id'];
  }
  return undefined;
}

export function requireLink(resource: Resource, key: string): string {
  const link = linkOf(resource, key);
  if (!link) {
    throw unsupported(`${resource['@odata.id'] ?? 'resource'} has no ${key} link`, {
      path: resource['@odata.id'],
    });
  }
  return link;
}

/** All member paths of a collection, following `Members@odata.nextLink`. */
export async function memberPaths(client: RedfishClient, path: string): Promise<string[]> {
  const out: string[] = [];
  const seen = new Set<string>();
  let next: string | undefined = path;
  while (next && !seen.has(next) && seen.size < MAX_PAGES) {
    seen.add(next);
    const page: Collection = await client.get<Collection>(next);
    const listed = Array.isArray(page.Members) ? (page.Members as unknown[]) : [];
    for (const m of listed) {
      const id = (m as Partial<ODataRef> | null)?.['@odata.id'];
      // A member without a usable @odata.id cannot be read: skip it rather than fail on it.
      if (typeof id === 'string' && id !== '') out.push(id);
      else client.log.debug({ event: 'redfish.member_without_id', path: next }, 'collection member skipped');
    }
    const link = page['Members@odata.nextLink'];
    next = typeof link === 'string' ? link : undefined;
  }
  return out;
}

/** All members of a collection, read one after another (BMCs dislike parallel bursts). */
export async function members<T extends Resource>(client: RedfishClient, path: string): Promise<T[]> {
  const out: T[] = [];
  for (const p of await memberPaths(client, path)) {
    const member = await client.get<T>(p);
    // Where it was read from is its identity, whatever the body says (or omits).
    out.push(typeof member['@odata.id'] === 'string' ? member : { ...member, '@odata.id': p });
  }
  return out;
}

export function serviceRoot(client: RedfishClient): Promise<ServiceRoot> {
  return client.get<ServiceRoot>(client.rootPath);
}

/**
 * The member of `collection` (a root link such as `Systems`) whose Id or path ends in `id`, or the
 * only/first member when no id is given.
 */
export async function pickMember(
  client: RedfishClient,
  root: ServiceRoot,
  collection: 'Systems' | 'Managers',
  id?: string,
): Promise<string> {
  const paths = await memberPaths(client, requireLink(root, collection));
  const found = id === undefined ? paths[0] : paths.find((p) => p.replace(/\/+$/, '').endsWith(`/${id}`));
  if (!found) {
    const listed = paths.length === 0 ? 'none with an @odata.id' : paths.join(', ');
    throw unsupported(
      id === undefined
        ? `no member in ${collection} (listed: ${listed})`
        : `no ${collection} member ${id} (listed: ${listed})`,
      { collection, members: paths },
    );
  }
  return found;
}

export interface ActionRef {
  target: string;
  /** Values of `parameter` the BMC declares (inline or through ActionInfo); undefined when it does not say. */
  allowable?: string[];
}

export interface ActionParameter {
  Name?: string;
  Required?: boolean;
  DataType?: string;
  AllowableValues?: string[];
}

interface ActionInfo extends Resource {
  Parameters?: ActionParameter[];
}

/** The parameters an action's `@Redfish.ActionInfo` declares; empty when it has none. */
export async function actionParameters(
  client: RedfishClient,
  action: ActionDescriptor,
): Promise<ActionParameter[]> {
  const infoPath = action['@Redfish.ActionInfo'];
  if (typeof infoPath !== 'string') return [];
  const info = await client.get<ActionInfo>(infoPath);
  return (Array.isArray(info.Parameters) ? info.Parameters : []).filter(
    (p): p is ActionParameter => typeof p === 'object' && p !== null && typeof p.Name === 'string',
  );
}

/** Looks up `#<name>` in `resource.Actions`, with the allowable values of one parameter. */
export async function findAction(
  client: RedfishClient,
  resource: Resource,
  name: string,
  parameter?: string,
): Promise<ActionRef> {
  const actions = resource.Actions as Record<string, ActionDescriptor | undefined> | undefined;
  const action = actions?.[`#${name}`];
  if (!action?.target) {
    throw unsupported(`${resource['@odata.id'] ?? 'resource'} offers no ${name} action`, {
      path: resource['@odata.id'],
    });
  }
  if (!parameter) return { target: action.target };
  const inline = action[`${parameter}@Redfish.AllowableValues`];
  if (Array.isArray(inline)) return { target: action.target, allowable: inline.map(String) };
  const infoPath = action['@Redfish.ActionInfo'];
  if (typeof infoPath !== 'string') return { target: action.target };
  const info = await client.get<ActionInfo>(infoPath);
  const param = info.Parameters?.find((p) => p.Name === parameter);
  return { target: action.target, allowable: param?.AllowableValues };
}

/** Throws UNSUPPORTED when the BMC declares allowable values and `value` is not one of them. */
export function checkAllowed(action: ActionRef, value: string, what: string): void {
  if (action.allowable && !action.allowable.includes(value)) {
    throw unsupported(`${what} ${value} is not allowed here (allowed: ${action.allowable.join(', ')})`, {
      allowable: action.allowable,
    });
  }
}
