import { ServerMaintenanceKind } from '../maintenance/v1alpha1/servermaintenance.js';
import { validateObject } from './validate.js';

const maintenance = (notBefore: unknown) => ({
  apiVersion: 'maintenance.metal.ironcore.dev/v1alpha1',
  kind: 'ServerMaintenance',
  metadata: { name: 'm', namespace: 'ops' },
  spec: { serverRef: { name: 'srv-1' }, reason: 'FirmwareUpdate', approval: { notBefore } },
});

describe('validateObject', () => {
  it('checks formats by default, naming the field', () => {
    expect(validateObject(ServerMaintenanceKind, maintenance('next tuesday'))).toEqual({
      ok: false,
      errors: [{ field: 'spec.approval.notBefore', message: 'must match format "date-time"' }],
    });
    expect(validateObject(ServerMaintenanceKind, maintenance('2026-03-01T10:00:00Z')).ok).toBe(true);
  });

  it('without formats still checks types, and only skips the format', () => {
    expect(validateObject(ServerMaintenanceKind, maintenance('next tuesday'), { formats: false }).ok).toBe(
      true,
    );
    expect(validateObject(ServerMaintenanceKind, maintenance(42), { formats: false })).toMatchObject({
      ok: false,
      errors: [{ field: 'spec.approval.notBefore', message: 'must be string' }],
    });
  });
});
