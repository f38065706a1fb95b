import { ServerBootKind } from '../api/maintenance/v1alpha1/serverboot.js';
import type { ServerMaintenance } from '../api/maintenance/v1alpha1/servermaintenance.js';
import { validateObject } from '../api/schema/validate.js';
import { isMetalError } from '../lib/errors.js';
import {
  BOOT_MAINTENANCE_LABEL,
  BOOT_MAINTENANCE_UID_LABEL,
  BOOT_SERVER_LABEL,
  labelValue,
  serverBootFromMaintenance,
  serverBootName,
} from './boot.js';

const UID = '6f1c2a8e-1b7d-4c55-9a43-0d2f3b1e9c77';

function maintenance(
  overrides: Partial<ServerMaintenance['spec']> = {},
  name = 'rack1-srv02-bmc-upgrade',
): ServerMaintenance {
  return {
    metadata: { name, namespace: 'tenant-a', uid: UID },
    spec: {
      serverRef: { name: 'rack1-srv02' },
      boot: { image: 'https://images.example.com/maintenance-os/v3.iso', method: 'VirtualMedia' },
      ...overrides,
    },
  };
}

describe('serverBootFromMaintenance', () => {
  test('a maintenance without a boot image needs no ServerBoot', () => {
    expect(serverBootFromMaintenance(maintenance({ boot: undefined }))).toBeUndefined();
  });

  test('names, labels, owner and spec of the boot', () => {
    const b = serverBootFromMaintenance(maintenance())!;
    expect(b.metadata).toEqual({
      name: 'rack1-srv02-bmc-upgrade-boot',
      namespace: 'tenant-a',
      labels: {
        [BOOT_MAINTENANCE_LABEL]: 'rack1-srv02-bmc-upgrade',
        [BOOT_MAINTENANCE_UID_LABEL]: UID,
        [BOOT_SERVER_LABEL]: 'rack1-srv02',
      },
      ownerReferences: [
        {
          apiVersion: 'maintenance.metal.ironcore.dev/v1alpha1',
          kind: 'ServerMaintenance',
          name: 'rack1-srv02-bmc-upgrade',
          uid: UID,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    });
    expect(b.spec).toEqual({
      serverRef: { name: 'rack1-srv02' },
      maintenanceRef: { name: 'rack1-srv02-bmc-upgrade' },
      method: 'VirtualMedia',
      image: 'https://images.example.com/maintenance-os/v3.iso',
      pin: true,
      restore: true,
    });
    expect({ apiVersion: b.apiVersion, kind: b.kind }).toEqual({
      apiVersion: ServerBootKind.apiVersion,
      kind: 'ServerBoot',
    });
  });

  test('the method defaults to VirtualMedia; UefiHttp and Pxe are carried over; a phase timeout is passed on', () => {
    const noMethod = maintenance({ boot: { image: 'https://x/y.iso' } as ServerMaintenance['spec']['boot'] });
    expect(serverBootFromMaintenance(noMethod)!.spec.method).toBe('VirtualMedia');
    const http = maintenance({ boot: { image: 'https://x/uki.efi', method: 'UefiHttp' } });
    expect(serverBootFromMaintenance(http)!.spec.method).toBe('UefiHttp');
    const pxe = maintenance({ boot: { image: 'ghcr.io/ironcore-dev/os:1', method: 'Pxe' } });
    expect(serverBootFromMaintenance(pxe, { phaseTimeout: '15m' })!.spec).toMatchObject({
      method: 'Pxe',
      phaseTimeout: '15m',
    });
  });

  test('the result is a valid ServerBoot', () => {
    // Each method with an image it can boot: a URL for VirtualMedia and UefiHttp, an OCI reference for Pxe.
    const images = { VirtualMedia: 'https://x/i.iso', UefiHttp: 'https://x/uki.efi', Pxe: 'ghcr.io/x/os:1' };
    for (const method of ['VirtualMedia', 'UefiHttp', 'Pxe'] as const) {
      const b = serverBootFromMaintenance(maintenance({ boot: { image: images[method], method } }), {
        phaseTimeout: '90s',
      });
      expect(validateObject(ServerBootKind, b)).toMatchObject({ ok: true });
    }
  });

  test('long names are shortened with a hash: unique, stable, and within the limits', () => {
    const long = `m${'x'.repeat(250)}`;
    const other = `m${'x'.repeat(249)}y`;
    const a = serverBootFromMaintenance(maintenance({}, long))!;
    const b = serverBootFromMaintenance(maintenance({}, other))!;
    expect(a.metadata.name!.length).toBeLessThanOrEqual(253);
    expect(a.metadata.name).not.toBe(b.metadata.name);
    expect(serverBootName(long)).toBe(a.metadata.name);
    const label = a.metadata.labels![BOOT_MAINTENANCE_LABEL]!;
    expect(label.length).toBeLessThanOrEqual(63);
    expect(label).not.toBe(b.metadata.labels![BOOT_MAINTENANCE_LABEL]);
    expect(label).toMatch(/^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/);
    // The owner reference keeps the full name: it must find the maintenance.
    expect(a.metadata.ownerReferences![0]!.name).toBe(long);
    expect(a.spec.maintenanceRef!.name).toBe(long);
  });

  test('labelValue keeps valid values and repairs the others', () => {
    expect(labelValue('rack1-srv02')).toBe('rack1-srv02');
    expect(labelValue('a'.repeat(63))).toBe('a'.repeat(63));
    const fixed = labelValue(`-${'b'.repeat(70)}`);
    expect(fixed.length).toBeLessThanOrEqual(63);
    expect(fixed).toMatch(/^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/);
  });

  test('an object that was never stored (no uid) is refused with a coded error', () => {
    const m = maintenance();
    delete m.metadata.uid;
    let thrown: unknown;
    try {
      serverBootFromMaintenance(m);
    } catch (e) {
      thrown = e;
    }
    expect(isMetalError(thrown, 'METAL_ERR_BOOT_MAINTENANCE_NOT_STORED')).toBe(true);
  });
});
