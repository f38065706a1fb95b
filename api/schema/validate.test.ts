import { ServerMaintenanceKind } from '../maintenance/v1alpha1/servermaintenance.js';
import { shapeOf, validateObject, withFields } from './validate.js';

const maintenance = (notBefore: unknown) => ({
  apiVersion: 'maintenance.metal.ironcore.dev/v1alpha1',
  kind: 'ServerMaintenance',
  metadata: { name: 'm', namespace: 'ops' },
  spec: { serverRef: { name: 'srv-1' }, reason: 'FirmwareUpdate', approval: { notBefore } },
});

const condition = (reason: string) => ({
  type: 'Ready',
  status: 'True',
  lastTransitionTime: '2026-03-01T10:00:00Z',
  reason,
  message: '',
});

describe('validateObject', () => {
  it('checks formats by default, naming the field', () => {
    expect(validateObject(ServerMaintenanceKind, maintenance('next tuesday'))).toEqual({
      ok: false,
      errors: [
        { field: 'spec.approval.notBefore', message: 'must be of type date-time; got "next tuesday"' },
      ],
    });
    expect(validateObject(ServerMaintenanceKind, maintenance('2026-03-01T10:00:00Z')).ok).toBe(true);
  });

  it('shape only still checks types, and skips formats and patterns', () => {
    expect(validateObject(ServerMaintenanceKind, maintenance('next tuesday'), { values: false }).ok).toBe(
      true,
    );
    expect(validateObject(ServerMaintenanceKind, maintenance(42), { values: false })).toMatchObject({
      ok: false,
      errors: [{ field: 'spec.approval.notBefore', message: 'must be of type string; got 42' }],
    });
    const badReason = {
      ...maintenance('2026-03-01T10:00:00Z'),
      status: { conditions: [condition('not a reason!')] },
    };
    expect(validateObject(ServerMaintenanceKind, badReason).ok).toBe(false);
    expect(validateObject(ServerMaintenanceKind, badReason, { values: false }).ok).toBe(true);
  });
});

describe('fields', () => {
  const withStatus = (status: unknown) => ({ ...maintenance('2026-03-01T10:00:00Z'), status });
  const only = { status: ['state'] } as const;

  it('checks only the status fields named, and the rest of status not at all', () => {
    const badConditions = withStatus({ state: 'Pending', conditions: 'none' });
    expect(validateObject(ServerMaintenanceKind, badConditions, { values: false }).ok).toBe(false);
    expect(validateObject(ServerMaintenanceKind, badConditions, { values: false, fields: only }).ok).toBe(
      true,
    );
    expect(
      validateObject(ServerMaintenanceKind, withStatus({ state: 7 }), { values: false, fields: only }),
    ).toMatchObject({ ok: false, errors: [{ field: 'status.state' }] });
  });

  it('narrows spec the same way; a part not named is checked whole', () => {
    const base = maintenance('2026-03-01T10:00:00Z');
    const badClass = { ...base, spec: { ...base.spec, class: 7 } };
    const specOnly = { spec: ['serverRef'] } as const;
    expect(validateObject(ServerMaintenanceKind, badClass, { values: false }).ok).toBe(false);
    expect(validateObject(ServerMaintenanceKind, badClass, { values: false, fields: specOnly }).ok).toBe(
      true,
    );
    const badRef = { ...base, spec: { ...base.spec, serverRef: 'srv-1' } };
    expect(validateObject(ServerMaintenanceKind, badRef, { values: false, fields: specOnly })).toMatchObject({
      ok: false,
      errors: [{ field: 'spec.serverRef' }],
    });
    // status is not named: still checked whole.
    const badStatus = { ...base, status: { state: 'Pending', conditions: 'none' } };
    expect(validateObject(ServerMaintenanceKind, badStatus, { values: false, fields: specOnly }).ok).toBe(
      false,
    );
  });

  it('keeps the required fields it keeps, and leaves a schema without the part alone', () => {
    const part = {
      type: 'object',
      required: ['a', 'b'],
      properties: { a: { type: 'string' }, b: { type: 'string' } },
    };
    const schema = { type: 'object', properties: { spec: part, status: part } };
    expect(withFields(schema, { status: ['a', 'gone'] })).toEqual({
      type: 'object',
      properties: {
        spec: part,
        status: { type: 'object', required: ['a'], properties: { a: { type: 'string' } } },
      },
    });
    expect(withFields(schema, { spec: ['b'], status: [] })).toEqual({
      type: 'object',
      properties: {
        spec: { type: 'object', required: ['b'], properties: { b: { type: 'string' } } },
        status: { type: 'object', required: [], properties: {} },
      },
    });
    const noStatus = { type: 'object', properties: { spec: { type: 'object' } } };
    expect(withFields(noStatus, { status: ['a'] })).toBe(noStatus);
  });
});

describe('shapeOf', () => {
  it('drops value keywords at schema positions only, keeping a property named like one', () => {
    const schema = {
      type: 'object',
      required: ['pattern'],
      properties: {
        pattern: { type: 'string', pattern: '^a$', maxLength: 3 },
        list: { type: 'array', maxItems: 2, items: { type: 'integer', minimum: 0 } },
        either: {
          anyOf: [
            { type: 'integer', maximum: 9 },
            { type: 'string', format: 'uri' },
          ],
        },
        labels: { type: 'object', additionalProperties: { type: 'string', minLength: 1 } },
      },
    };
    expect(shapeOf(schema)).toEqual({
      type: 'object',
      required: ['pattern'],
      properties: {
        pattern: { type: 'string' },
        list: { type: 'array', items: { type: 'integer' } },
        either: { anyOf: [{ type: 'integer' }, { type: 'string' }] },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
      },
    });
  });
});
