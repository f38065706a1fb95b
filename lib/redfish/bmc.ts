// A connected BMC: the client plus the System and Manager it works on and the vendor profile of
// that hardware. Operation modules (power, boot, virtual media, settings, update) take a `Bmc`.
import { RedfishClient, type RedfishClientOptions } from './client.js';
import { unsupported } from './errors.js';
import { linkOf, pickMember, serviceRoot } from './navigation.js';
import type { ComputerSystem, Manager, ServiceRoot } from './types.js';
import { profileByName, profileFor, type VendorName, type VendorProfile } from './vendors.js';

export interface ConnectOptions extends RedfishClientOptions {
  /** Id of the System to manage; default: the first member of Systems. */
  systemId?: string;
  /** Id of the Manager; default: the System's ManagedBy, else the first member of Managers. */
  managerId?: string;
  /** Override the vendor detected from Manufacturer. */
  vendor?: VendorName;
}

export class Bmc {
  constructor(
    readonly client: RedfishClient,
    readonly root: ServiceRoot,
    readonly systemPath: string,
    readonly managerPath: string | undefined,
    readonly vendor: VendorProfile,
  ) {}

  system(): Promise<ComputerSystem> {
    return this.client.get<ComputerSystem>(this.systemPath);
  }

  async manager(): Promise<Manager> {
    return this.client.get<Manager>(this.requireManager());
  }

  requireManager(): string {
    if (!this.managerPath) throw unsupported('this BMC exposes no Manager');
    return this.managerPath;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

async function findManager(
  client: RedfishClient,
  root: ServiceRoot,
  system: ComputerSystem,
  id?: string,
): Promise<string | undefined> {
  if (id === undefined) {
    const managedBy = system.Links?.ManagedBy?.[0]?.['@odata.id'];
    if (managedBy) return managedBy;
  }
  if (!linkOf(root, 'Managers')) return undefined;
  return pickMember(client, root, 'Managers', id);
}

/**
 * Opens a client, discovers the System and Manager and picks the vendor profile. The client is
 * closed again when discovery fails, so a failed connect leaks no session.
 */
export async function connectBmc(opts: ConnectOptions): Promise<Bmc> {
  const client = new RedfishClient(opts);
  try {
    const root = await serviceRoot(client);
    const systemPath = await pickMember(client, root, 'Systems', opts.systemId);
    const system = await client.get<ComputerSystem>(systemPath);
    const managerPath = await findManager(client, root, system, opts.managerId);
    let manufacturer = system.Manufacturer;
    if (!manufacturer && managerPath) manufacturer = (await client.get<Manager>(managerPath)).Manufacturer;
    const vendor = opts.vendor ? profileByName(opts.vendor) : profileFor(manufacturer ?? root.Vendor);
    client.log.debug({ event: 'redfish.connected', vendor: vendor.name, systemPath }, 'BMC discovered');
    return new Bmc(client, root, systemPath, managerPath, vendor);
  } catch (e) {
    await client.close();
    throw e;
  }
}
