// Issue 29, behaviour 2, for claims that would tolerate our maintenance taint
// (`maintenance.metal.ironcore.dev/in-maintenance`). Such a claim would see held servers as claimable
// to upstream's binder, which honours the toleration, while our webhook refuses them
// (METAL_ERR_SERVER_IN_MAINTENANCE does not look at tolerations): each denial would back the claim off
// in controller-runtime (5 ms doubling, to 1000 s) while a free server waits. So the key is reserved:
// a claim that tolerates it is refused at admission, naming the field (METAL_ERR_TOLERATION_RESERVED),
// and the same claims without it bind the free servers within 10 s, upstream never meeting our webhook
// on the way (docs/compatibility.md, "Placement next to metal-operator's binder").
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SETUP_TIMEOUT_MS } from '../../../e2e/harness/dist.js';
import type { ServerClaim } from '../../../api/metal/v1alpha1/serverclaim.js';
import type { Toleration } from '../../../api/schema/common.js';
import { freshNamespace } from '../../../e2e/harness/env.js';
import { MAINTENANCE_TAINT_KEY } from '../../../contract/names.js';
import { Codes } from '../../../contract/codes.js';
import { KubeApiError } from '../../../lib/kube/errors.js';
import { errorMessage } from '../../../lib/errors.js';
import type { Upstream } from './harness.js';
import type { Observer } from './observe.js';
import {
  bindTimes,
  holdApproved,
  inMaintenanceDenials,
  BIND_WITHIN_MS,
  LiveFleet,
  POOL,
} from './liveness.js';

let up: Upstream;
let watch: Observer;

const fleet = new LiveFleet();

beforeAll(async () => {
  // 0-6 approved for maintenance and held by a budget (Available, powered off, our taint); 7-9 free.
  ({ up, watch } = await fleet.start(() => ({ [POOL]: 'tolerating' })));
}, SETUP_TIMEOUT_MS); // may include the image files' build (e2e/harness/dist.ts)

afterAll(() => fleet.stop(), 120_000);

const claim = (namespace: string, i: number, tolerations: Toleration[]): ServerClaim => ({
  metadata: { name: `tolerating-c${i}`, namespace },
  spec: {
    power: 'On',
    image: 'ghcr.io/ironcore-dev/os-images/gardenlinux:1877.0',
    serverSelector: { matchLabels: { [POOL]: 'tolerating' } },
    tolerations,
  },
});

/** The error of a write that must be refused; fails the test if the write went through. */
async function refusal(write: () => Promise<unknown>): Promise<KubeApiError> {
  try {
    await write();
  } catch (e) {
    if (e instanceof KubeApiError) return e;
    throw new Error(`expected the webhook's refusal, got ${errorMessage(e)}`, { cause: e });
  }
  throw new Error('expected the webhook to refuse the write; it went through');
}

describe('claims may not tolerate the maintenance taint', () => {
  it('a claim tolerating it is refused naming the field; the same claims without it bind the free servers within 10 s', async () => {
    await holdApproved(up, [0, 1, 2, 3, 4, 5, 6], 'tol');
    const namespace = await freshNamespace(up.admin, 'tolerating');
    const reserved: Toleration = { key: MAINTENANCE_TAINT_KEY, operator: 'Exists' };
    const other: Toleration = { key: 'example.com/dedicated', operator: 'Exists' };
    const refused = await Promise.all(
      [0, 1, 2].map((i) => refusal(() => up.claims.create(claim(namespace, i, [other, reserved])))),
    );
    for (const e of refused) {
      expect(e.status.message).toContain(Codes.TOLERATION_RESERVED);
      expect(e.status.details?.causes).toEqual([
        expect.objectContaining({ field: 'spec.tolerations[1].key', reason: 'FieldValueForbidden' }),
      ]);
    }
    const claims = await Promise.all([0, 1, 2].map((i) => up.claims.create(claim(namespace, i, [other]))));
    const times = await bindTimes(watch, claims, 60_000);
    expect({ times, denials: inMaintenanceDenials(up) }).toEqual({
      times: times.map((t) => (t !== undefined && t <= BIND_WITHIN_MS ? t : 'not within 10 s')),
      denials: 0,
    });
    // Adding the toleration later is refused as well: the claim stays as it was.
    const bound = claims[0]!;
    const update = await refusal(() =>
      up.claims.patch(
        bound.metadata.name!,
        { spec: { tolerations: [other, reserved] } },
        { namespace, type: 'merge' },
      ),
    );
    expect(update.status.message).toContain(Codes.TOLERATION_RESERVED);
    const after = await up.claims.get(bound.metadata.name!, namespace);
    expect(after.spec.tolerations).toEqual([other]);
  }, 240_000);
});
