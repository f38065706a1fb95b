import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import { DEFAULT_POLICY } from '../../policies/schema.js';
import { claimForCache, ownsLabel, sameBinding, serverBinding } from './cache-shape.js';
import { hasConsumer } from '../../contract/approval.js';

const ME = 'approval-controller';
const NEEDED = 'metal.ironcore.dev/maintenance-needed';

const claim = (managedFields: NonNullable<ServerClaim['metadata']['managedFields']>): ServerClaim => ({
  metadata: { name: 'c', namespace: 'tenant', uid: 'u', resourceVersion: '7', managedFields },
  spec: { power: 'On', image: 'img' },
});

const labelsOwned = (manager: string, subresource?: string) => ({
  manager,
  operation: 'Apply',
  ...(subresource ? { subresource } : {}),
  fieldsV1: { 'f:metadata': { 'f:labels': { [`f:${NEEDED}`]: {} } }, 'f:spec': { 'f:power': {} } },
});

describe('claimForCache', () => {
  const shape = claimForCache(ME);

  it('keeps what ownsLabel reads of our own entries and drops the rest of their fields', () => {
    const cached = shape(claim([labelsOwned(ME)]));
    expect(ownsLabel(cached, ME, NEEDED)).toBe(true);
    expect(cached.metadata.managedFields).toEqual([
      { manager: ME, fieldsV1: { 'f:metadata': { 'f:labels': { [`f:${NEEDED}`]: {} } } } },
    ]);
  });

  it('does not count a status-subresource entry as owning a label', () => {
    expect(ownsLabel(shape(claim([labelsOwned(ME, 'status')])), ME, NEEDED)).toBe(false);
  });

  it('keeps every other manager by name once, so the consumer check still sees Gardener MCM', () => {
    const full = claim([
      labelsOwned('mcm.ironcore.dev/field-owner'),
      labelsOwned('mcm.ironcore.dev/field-owner', 'status'),
      labelsOwned('kubectl'),
    ]);
    const cached = shape(full);
    expect(cached.metadata.managedFields).toEqual([
      { manager: 'mcm.ironcore.dev/field-owner' },
      { manager: 'kubectl' },
    ]);
    expect(hasConsumer(cached, DEFAULT_POLICY)).toBe(hasConsumer(full, DEFAULT_POLICY));
    expect(hasConsumer(cached, DEFAULT_POLICY)).toBe(true);
  });

  it('leaves no managedFields key when nothing is worth keeping, and the rest of the claim as it was', () => {
    const cached = shape(claim([labelsOwned(ME, 'status')]));
    expect(cached.metadata).toEqual({ name: 'c', namespace: 'tenant', uid: 'u', resourceVersion: '7' });
    expect(cached.spec).toEqual({ power: 'On', image: 'img' });
  });
});

describe('serverBinding', () => {
  const server = (claimName?: string): Server => ({
    metadata: { name: 's1', uid: 'su', resourceVersion: '3', labels: { rack: 'r1' } },
    spec: {
      systemUUID: 'x',
      taints: [{ key: 'k', effect: 'NoBind' }],
      ...(claimName ? { serverClaimRef: { name: claimName, namespace: 'tenant' } } : {}),
    },
    status: { state: 'Reserved' },
  });

  it('keeps identity and binding only', () => {
    expect(serverBinding(server('c'))).toEqual({
      metadata: { name: 's1', uid: 'su', resourceVersion: '3' },
      spec: { serverClaimRef: { name: 'c', namespace: 'tenant' } },
    });
  });

  it('tells a moved binding from an unrelated update', () => {
    expect(sameBinding(serverBinding(server('c')), serverBinding(server('c')))).toBe(true);
    expect(sameBinding(serverBinding(server('c')), serverBinding(server('d')))).toBe(false);
    expect(sameBinding(serverBinding(server()), serverBinding(server('c')))).toBe(false);
    expect(sameBinding(undefined, serverBinding(server()))).toBe(true);
  });
});
