// The waits between reconciles: which event ends which.
import { describe, expect, it } from '@jest/globals';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { AdmissionWaits } from './admission-waits.js';

const m = (uid: string): ServerMaintenance => ({
  metadata: { name: uid, namespace: 'ops', uid },
  spec: { serverRef: { name: 's1' } },
});

describe('AdmissionWaits', () => {
  it("ends every wait on a server when its holder leaves, a budget denial's backoff too (issue 31)", () => {
    const waits = new AdmissionWaits();
    const now = Date.now();
    // b was denied for budget room earlier (a long backoff) and then held back as ServerBusy by the
    // controller's own decision, so no webhook ServerBusy was ever recorded for it.
    waits.waitAfterDenial('b', { reason: 'BudgetExhausted', retryAfterMs: 30_000 });
    waits.backOff('b', now + 60_000);
    waits.backOff('c', now + 30_000);
    waits.backOff('other-server', now + 30_000);
    waits.holderGone([m('b'), m('c')]);
    expect([...waits.backoff.keys()]).toEqual(['other-server']);
  });

  it('keeps a backoff no event of this server ends', () => {
    const waits = new AdmissionWaits();
    waits.backOff('x', Date.now() + 5_000);
    waits.holderGone([m('y')]);
    expect(waits.backoff.has('x')).toBe(true);
  });
});
