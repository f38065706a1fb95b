import type { BMC } from '../../api/metal/v1alpha1/bmc.js';
import type { BMCSecret } from '../../api/metal/v1alpha1/bmcsecret.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import { REDFISH_PATH_PREFIX_ANNOTATION, resolveAccess, type AccessLookups } from './bmc-access.js';

const PASSWORD = 'Sup3r-Secret!';
const b64 = (s: string) => Buffer.from(s).toString('base64');

function bmc(extra: Partial<BMC['spec']> = {}, annotations?: Record<string, string>): BMC {
  return {
    metadata: { name: 'bmc1', ...(annotations ? { annotations } : {}) },
    spec: {
      access: { ip: '10.0.0.7' },
      protocol: { name: 'Redfish', port: 443 },
      bmcSecretRef: { name: 'creds' },
      ...extra,
    },
  };
}

function lookups(
  b: BMC | undefined,
  secret: BMCSecret | null = {
    metadata: { name: 'creds' },
    data: { username: b64('admin'), password: b64(PASSWORD) },
  },
): AccessLookups {
  return {
    bmc: (n) => (b && n === b.metadata.name ? b : undefined),
    secret: (n) => (secret && n === secret.metadata.name ? secret : undefined),
  };
}

const server = (spec: Partial<Server['spec']> = {}): Server => ({
  metadata: { name: 'srv1', annotations: { [REDFISH_PATH_PREFIX_ANNOTATION]: '/gw/srv1' } },
  spec: { systemUUID: 'u', bmcRef: { name: 'bmc1' }, ...spec },
});

describe('resolveAccess', () => {
  test('Server bmcRef -> BMC -> BMCSecret (base64 data), https by default', () => {
    const r = resolveAccess(server(), lookups(bmc()));
    expect(r).toMatchObject({
      ok: true,
      access: { endpoint: 'https://10.0.0.7:443', credentials: { username: 'admin', password: PASSWORD } },
    });
  });

  test('the path prefix annotation on the BMC addresses one BMC behind a gateway or the simulator', () => {
    const r = resolveAccess(
      server(),
      lookups(
        bmc(
          { protocol: { name: 'Redfish', port: 8443, scheme: 'https' } },
          { [REDFISH_PATH_PREFIX_ANNOTATION]: '/bmc/7' },
        ),
      ),
    );
    expect(r.ok && r.access.endpoint).toBe('https://10.0.0.7:8443/bmc/7');
    const bad = resolveAccess(server(), lookups(bmc({}, { [REDFISH_PATH_PREFIX_ANNOTATION]: 'bmc/7?x=1' })));
    expect(bad).toMatchObject({ ok: false, reason: 'InvalidPathPrefix' });
    for (const prefix of ['/bmc/../7', '/.', 'bmc', '/bmc/7/']) {
      const r2 = resolveAccess(server(), lookups(bmc({}, { [REDFISH_PATH_PREFIX_ANNOTATION]: prefix })));
      expect(r2).toMatchObject({ ok: false, reason: 'InvalidPathPrefix' });
    }
    const dotted = resolveAccess(
      server(),
      lookups(bmc({}, { [REDFISH_PATH_PREFIX_ANNOTATION]: '/gw.v2/bmc-7' })),
    );
    expect(dotted.ok && dotted.access.endpoint).toBe('https://10.0.0.7:443/gw.v2/bmc-7');
  });

  test('inline Server spec.bmc, stringData, IPv6, and the System from spec.systemURI', () => {
    const inline = server({
      bmcRef: undefined,
      systemURI: '/redfish/v1/Systems/System.Embedded.1',
      bmc: {
        address: 'fd00::7',
        protocol: { name: 'RedfishLocal', port: 8000, scheme: 'http' },
        bmcSecretRef: { name: 'creds' },
      },
    });
    const r = resolveAccess(
      inline,
      lookups(undefined, {
        metadata: { name: 'creds' },
        stringData: { username: 'root', password: PASSWORD },
      }),
    );
    expect(r).toMatchObject({
      ok: true,
      access: {
        endpoint: 'http://[fd00::7]:8000/gw/srv1',
        systemId: 'System.Embedded.1',
        credentials: { username: 'root' },
      },
    });
  });

  test('what is missing is named; no credential is in a message or the key', () => {
    expect(resolveAccess(server({ bmcRef: undefined }), lookups(undefined))).toMatchObject({
      ok: false,
      reason: 'NoBMC',
    });
    expect(resolveAccess(server(), lookups(undefined))).toMatchObject({ ok: false, reason: 'BMCNotFound' });
    expect(resolveAccess(server(), lookups(bmc(), null))).toMatchObject({
      ok: false,
      reason: 'SecretNotFound',
    });
    const partial = lookups(bmc(), { metadata: { name: 'creds' }, data: { username: b64('admin') } });
    const incomplete = resolveAccess(server(), partial);
    expect(incomplete).toMatchObject({ ok: false, reason: 'SecretIncomplete' });
    const ipmi = resolveAccess(server(), lookups(bmc({ protocol: { name: 'IPMI', port: 623 } })));
    expect(ipmi).toMatchObject({ ok: false, reason: 'UnsupportedProtocol' });
    const noIp = resolveAccess(server(), lookups(bmc({ access: {} })));
    expect(noIp).toMatchObject({ ok: false, reason: 'NoAddress' });
    const ok = resolveAccess(server(), lookups(bmc()));
    for (const r of [incomplete, ipmi, noIp]) expect(JSON.stringify(r)).not.toContain(PASSWORD);
    expect(ok.ok && ok.access.key).not.toContain(PASSWORD);
    // A rotated password changes the key, so the cached session is replaced.
    const rotated = resolveAccess(
      server(),
      lookups(bmc(), {
        metadata: { name: 'creds' },
        data: { username: b64('admin'), password: b64('other') },
      }),
    );
    expect(rotated.ok && ok.ok && rotated.access.key !== ok.access.key).toBe(true);
  });
});
