// Where a Server's BMC is and how to log in: Server spec.bmcRef -> BMC (spec.access.ip,
// spec.protocol) -> BMCSecret (username, password), or the Server's inline spec.bmc. Pure: the
// objects come from informer caches. Credentials stay in the returned value and are never put
// into a reason, a message or the cache key.
import { createHash } from 'node:crypto';
import type { BMC } from '../../api/metal/v1alpha1/bmc.js';
import type { BMCSecret } from '../../api/metal/v1alpha1/bmcsecret.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';

/**
 * On a BMC (or on a Server with inline `spec.bmc`): path in front of `/redfish/v1`, for BMCs
 * reached through a gateway that serves many of them under prefixes (and our simulator).
 */
export const REDFISH_PATH_PREFIX_ANNOTATION = 'maintenance.metal.ironcore.dev/redfish-path-prefix';

export interface BmcAccess {
  /** `https://10.0.0.7:443` plus an optional path prefix. */
  endpoint: string;
  credentials: { username: string; password: string };
  /** Id of the System to manage (from Server spec.systemURI), if the Server names one. */
  systemId?: string;
  /** Changes when endpoint or credentials change; never contains a credential. */
  key: string;
}

export type AccessResult = { ok: true; access: BmcAccess } | { ok: false; reason: string; message: string };

export interface AccessLookups {
  bmc(name: string): BMC | undefined;
  secret(name: string): BMCSecret | undefined;
}

const REDFISH_PROTOCOLS = new Set(['Redfish', 'RedfishLocal', 'RedfishWithRegistryPatch']);
// Path segments of unreserved characters; `.` and `..` would walk out of the prefix.
const PREFIX = /^(\/(?!\.\.?(\/|$))[A-Za-z0-9._~-]+)*$/;

function fail(reason: string, message: string): AccessResult {
  return { ok: false, reason, message };
}

/** A key of BMCSecret data or stringData; data is base64 as in a core Secret. */
function secretValue(secret: BMCSecret, key: string): string | undefined {
  const plain = secret.stringData?.[key];
  if (plain !== undefined) return plain;
  const encoded = secret.data?.[key];
  return encoded === undefined ? undefined : Buffer.from(encoded, 'base64').toString('utf8');
}

function hostPart(address: string): string {
  // IPv6 literals need brackets in a URL.
  return address.includes(':') && !address.startsWith('[') ? `[${address}]` : address;
}

function systemIdOf(server: Server): string | undefined {
  const uri = server.spec.systemURI?.replace(/\/+$/, '');
  if (!uri) return undefined;
  return uri.slice(uri.lastIndexOf('/') + 1) || undefined;
}

interface Target {
  where: string;
  address: string | undefined;
  protocol: { name: string; port: number; scheme?: string };
  secretName: string;
  annotations: Record<string, string> | undefined;
}

function targetOf(server: Server, lookups: AccessLookups): Target | AccessResult {
  const ref = server.spec.bmcRef?.name;
  if (ref) {
    const bmc = lookups.bmc(ref);
    if (!bmc) return fail('BMCNotFound', `BMC ${ref} of server ${server.metadata.name} does not exist`);
    return {
      where: `BMC ${ref}`,
      // access.ip is the address; status.ip (metal-operator's discovery) stands in for endpointRef BMCs.
      address: bmc.spec.access?.ip ?? bmc.status?.ip,
      protocol: bmc.spec.protocol,
      secretName: bmc.spec.bmcSecretRef.name,
      annotations: bmc.metadata.annotations,
    };
  }
  const inline = server.spec.bmc;
  if (inline) {
    return {
      where: `server ${server.metadata.name} spec.bmc`,
      address: inline.address,
      protocol: inline.protocol,
      secretName: inline.bmcSecretRef.name,
      annotations: server.metadata.annotations,
    };
  }
  return fail('NoBMC', `server ${server.metadata.name} has neither spec.bmcRef nor spec.bmc`);
}

export function resolveAccess(server: Server, lookups: AccessLookups): AccessResult {
  const target = targetOf(server, lookups);
  if ('ok' in target) return target;
  const { where, protocol } = target;
  if (!target.address) return fail('NoAddress', `${where} has no address (spec.access.ip)`);
  if (!REDFISH_PROTOCOLS.has(protocol.name)) {
    return fail('UnsupportedProtocol', `${where} speaks ${protocol.name}; booting to an image needs Redfish`);
  }
  const prefix = target.annotations?.[REDFISH_PATH_PREFIX_ANNOTATION] ?? '';
  if (!PREFIX.test(prefix)) {
    return fail(
      'InvalidPathPrefix',
      `${where}: annotation ${REDFISH_PATH_PREFIX_ANNOTATION} must be a path like /bmc/7`,
    );
  }
  const secret = lookups.secret(target.secretName);
  if (!secret) return fail('SecretNotFound', `BMCSecret ${target.secretName} of ${where} does not exist`);
  const username = secretValue(secret, 'username');
  const password = secretValue(secret, 'password');
  if (!username || !password) {
    return fail('SecretIncomplete', `BMCSecret ${target.secretName} needs the keys username and password`);
  }
  const scheme = protocol.scheme ?? 'https';
  const endpoint = `${scheme}://${hostPart(target.address)}:${protocol.port}${prefix}`;
  const key = createHash('sha256').update(`${endpoint}\0${username}\0${password}`).digest('hex').slice(0, 16);
  return {
    ok: true,
    access: {
      endpoint,
      credentials: { username, password },
      systemId: systemIdOf(server),
      key: `${endpoint}#${key}`,
    },
  };
}
