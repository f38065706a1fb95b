import { describe, expect, it } from '@jest/globals';
import { withoutGrants } from './edit.js';

const grant = (uid: string) => ({ maintenanceUID: uid, server: `server-${uid}` });
const budget = (...uids: string[]) => ({
  metadata: { name: 'rack', resourceVersion: '7' },
  status: { currentHealthy: 3, grants: uids.map(grant) },
});

describe('withoutGrants', () => {
  it('drops the picked grants, keeps the others in order and the rest of the budget as it was', () => {
    const before = budget('a', 'b', 'c', 'd');
    const { next, dropped } = withoutGrants(
      before,
      (g) => g.maintenanceUID === 'b' || g.maintenanceUID === 'd',
    );
    expect(dropped.map((g) => g.maintenanceUID)).toEqual(['b', 'd']);
    expect(next).toEqual({
      metadata: { name: 'rack', resourceVersion: '7' },
      status: { currentHealthy: 3, grants: [grant('a'), grant('c')] },
    });
  });

  it('leaves the input untouched (a cached object must not change under its cache)', () => {
    const before = budget('a', 'b');
    const copy = structuredClone(before);
    withoutGrants(before, (g) => g.maintenanceUID === 'a');
    expect(before).toEqual(copy);
  });

  it('has nothing to write when no grant is picked, or there is no ledger', () => {
    expect(withoutGrants(budget('a'), (g) => g.maintenanceUID === 'z')).toEqual({ dropped: [] });
    const noLedger: { metadata: { name: string }; status?: { grants?: { maintenanceUID: string }[] } } = {
      metadata: { name: 'empty' },
    };
    expect(withoutGrants(noLedger, () => true)).toEqual({ dropped: [] });
  });
});
