// The Set reconciler's two pure pieces: the child it stamps (template copied, target set, owned by
// the Set so deleting the Set collects it, hold annotation only when held) and the view of a child
// the decision reads ("started" only past the maintenance gate).
import { describe, expect, it } from '@jest/globals';
import type { FirmwareObject } from '../model.js';
import { HOLD_ANNOTATION } from './model.js';
import { childView, stampChild } from './reconciler.js';

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
        annotations: { [HOLD_ANNOTATION]: 'Queued' },
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

  it('carries no annotation when not held', () => {
    expect(stampChild('BMCVersionSet', set, 'rack1-bmc-b', 'bmc-b', undefined).metadata.annotations).toBe(
      undefined,
    );
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
    expect(childView('BIOSVersionSet', child('InProgress', 'WaitingForMaintenance')).started).toBe(false);
    expect(childView('BIOSVersionSet', child('InProgress', 'RequestingMaintenance')).started).toBe(false);
    expect(childView('BIOSVersionSet', child('InProgress', 'Flashing')).started).toBe(true);
    expect(childView('BIOSVersionSet', child('Completed')).started).toBe(false);
  });

  it('reads the target from the kind’s ref and the hold from the annotation', () => {
    expect(childView('BIOSVersionSet', child(undefined, undefined, 'Paused'))).toEqual({
      name: 'fleet-srv-1',
      target: 'srv-1',
      started: false,
      hold: 'Paused',
    });
  });
});
