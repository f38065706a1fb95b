// The Set reconciler's two pure pieces: the child it stamps (template copied, target set, owned by
// the Set so deleting the Set collects it, hold annotation only when held) and the view of a child
// the decision reads ("started" only past the maintenance gate).
import { describe, expect, it } from '@jest/globals';
import type { FirmwareObject } from '../model.js';
import { HOLD_ANNOTATION, TEMPLATE_HASH_ANNOTATION } from './model.js';
import { childView, restampPatch, stampChild, templateHash } from './reconciler.js';

const HASH = 'h1';

const set = {
  apiVersion: 'baseboard.metal.ironcore.dev/v1alpha1',
  kind: 'BMCVersionSet',
  metadata: { name: 'rack1', uid: 'uid-rack1', generation: 2 },
  spec: {
    bmcSelector: { matchLabels: { rack: '1' } },
    bmcVersionTemplate: { version: '5.1', image: { URI: 'https://images.test/bmc/5.1' } },
  },
};

describe('stampChild', () => {
  it('copies the template, names the target and is owned by the Set', () => {
    const c = stampChild('BMCVersionSet', set, 'rack1-bmc-a', 'bmc-a', 'Queued');
    expect(c).toMatchObject({
      apiVersion: 'baseboard.metal.ironcore.dev/v1alpha1',
      kind: 'BMCVersion',
      metadata: {
        name: 'rack1-bmc-a',
        annotations: {
          [HOLD_ANNOTATION]: 'Queued',
          [TEMPLATE_HASH_ANNOTATION]: templateHash('BMCVersionSet', set),
        },
        ownerReferences: [
          {
            apiVersion: 'baseboard.metal.ironcore.dev/v1alpha1',
            kind: 'BMCVersionSet',
            name: 'rack1',
            uid: 'uid-rack1',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: { version: '5.1', image: { URI: 'https://images.test/bmc/5.1' }, bmcRef: { name: 'bmc-a' } },
    });
    // A copy: editing the child never edits the Set's template.
    (c.spec as { image: { URI: string } }).image.URI = 'changed';
    expect(set.spec.bmcVersionTemplate.image.URI).toBe('https://images.test/bmc/5.1');
  });

  it('carries no hold annotation when not held, and the template hash always', () => {
    expect(stampChild('BMCVersionSet', set, 'rack1-bmc-b', 'bmc-b', undefined).metadata.annotations).toEqual({
      [TEMPLATE_HASH_ANNOTATION]: templateHash('BMCVersionSet', set),
    });
  });

  it('hashes the template with key order ignored, and a changed template to another hash', () => {
    const reordered = {
      ...set,
      spec: {
        ...set.spec,
        bmcVersionTemplate: { image: { URI: 'https://images.test/bmc/5.1' }, version: '5.1' },
      },
    };
    expect(templateHash('BMCVersionSet', reordered)).toBe(templateHash('BMCVersionSet', set));
    const bumped = {
      ...set,
      spec: { ...set.spec, bmcVersionTemplate: { ...set.spec.bmcVersionTemplate, version: '5.2' } },
    };
    expect(templateHash('BMCVersionSet', bumped)).not.toBe(templateHash('BMCVersionSet', set));
  });
});

describe('restampPatch', () => {
  it('writes the new template, nulls a field it dropped, keeps the target, and sets hash and hold at once', () => {
    const child = stampChild('BMCVersionSet', set, 'rack1-bmc-a', 'bmc-a', undefined);
    (child.spec as Record<string, unknown>).updatePolicy = 'Force';
    const bumped = { ...set, spec: { ...set.spec, bmcVersionTemplate: { version: '5.2' } } };
    expect(restampPatch('BMCVersionSet', bumped, child, 'Queued')).toEqual({
      metadata: {
        annotations: {
          [TEMPLATE_HASH_ANNOTATION]: templateHash('BMCVersionSet', bumped),
          [HOLD_ANNOTATION]: 'Queued',
        },
      },
      spec: { image: null, updatePolicy: null, version: '5.2' },
    });
    expect(restampPatch('BMCVersionSet', bumped, child, null).metadata).toMatchObject({
      annotations: { [HOLD_ANNOTATION]: null },
    });
  });
});

describe('childView', () => {
  const child = (state: string | undefined, phase?: string, hold?: string): FirmwareObject =>
    ({
      metadata: { name: 'fleet-srv-1', ...(hold ? { annotations: { [HOLD_ANNOTATION]: hold } } : {}) },
      spec: { serverRef: { name: 'srv-1' }, version: '2' },
      status: {
        ...(state ? { state } : {}),
        ...(phase
          ? {
              conditions: [
                { type: 'Progressing', status: 'True', reason: phase, message: '', lastTransitionTime: '' },
              ],
            }
          : {}),
      },
    }) as unknown as FirmwareObject;

  it('is started only in a phase past the maintenance gate', () => {
    expect(childView('BIOSVersionSet', child('InProgress', 'WaitingForMaintenance'), HASH).started).toBe(
      false,
    );
    expect(childView('BIOSVersionSet', child('InProgress', 'RequestingMaintenance'), HASH).started).toBe(
      false,
    );
    expect(childView('BIOSVersionSet', child('InProgress', 'Flashing'), HASH).started).toBe(true);
    expect(childView('BIOSVersionSet', child('Completed'), HASH).started).toBe(false);
  });

  it('reads the target from the kind’s ref and the hold from the annotation', () => {
    expect(childView('BIOSVersionSet', child(undefined, undefined, 'Paused'), HASH)).toEqual({
      name: 'fleet-srv-1',
      target: 'srv-1',
      started: false,
      hold: 'Paused',
      current: false,
    });
  });

  it('reads a done child whose spec changed since as pending: a new attempt not started yet', () => {
    const done = child('Completed');
    done.metadata.generation = 3;
    (done.status as { observedGeneration?: number }).observedGeneration = 2;
    expect(childView('BIOSVersionSet', done, HASH).state).toBe('Pending');
    (done.status as { observedGeneration?: number }).observedGeneration = 3;
    expect(childView('BIOSVersionSet', done, HASH).state).toBe('Completed');
  });

  it('is current only when stamped from the template hash given', () => {
    const stamped = stampChild('BMCVersionSet', set, 'rack1-bmc-a', 'bmc-a', undefined);
    expect(childView('BMCVersionSet', stamped, templateHash('BMCVersionSet', set)).current).toBe(true);
    expect(childView('BMCVersionSet', stamped, 'other').current).toBe(false);
  });
});
