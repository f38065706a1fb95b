// Act 3's cast for every tenant count the demo accepts: five maintenances on five different servers
// (two on one server made `--tenants 2` fail with AlreadyExists), each tenant's approval as expected.
import type { ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import { planFleet } from '../sim/fleet/fleet.js';
import { STANDING_TENANT, announcePlan } from './announce-plan.js';
import { CLAIMED_SHARE } from './config.js';

const orphan: ServerClaim = {
  metadata: { name: 'orphan-1', namespace: 'x' },
  spec: { power: 'On', serverRef: { name: 'orphan-server' } },
} as ServerClaim;

describe('act 3 cast', () => {
  it.each([2, 3, 4, 7])(
    'with %i tenants: five servers, one maintenance each, the standing tenant second',
    (tenants) => {
      const servers = 20;
      const plan = planFleet({
        servers,
        racks: 2,
        tenants,
        claimsPerTenant: Math.floor((servers * CLAIMED_SHARE) / tenants),
        claimMode: 'serverRef',
      });
      const cast = announcePlan(plan, orphan, 'cordoned-server');
      const targets = cast.map((c) => c.server);
      expect(new Set(targets).size).toBe(5);
      expect(new Set(cast.map((c) => c.row.label)).size).toBe(5);
      const tenantOf = (server: string) =>
        plan.namespaces.indexOf(
          plan.claims.find((c) => c.spec.serverRef?.name === server)!.metadata.namespace!,
        );
      expect(cast.map((c) => c.row.expect)).toEqual([
        'Owner',
        'Standing',
        'Policy',
        'Deadline',
        'NotRequired',
      ]);
      expect(tenantOf(cast[1]!.server)).toBe(STANDING_TENANT);
      expect(tenantOf(cast[0]!.server)).not.toBe(STANDING_TENANT);
      expect(tenantOf(cast[3]!.server)).not.toBe(STANDING_TENANT);
    },
  );

  it('names the claim it lacks instead of reusing one', () => {
    const plan = planFleet({ servers: 6, racks: 1, tenants: 2, claimsPerTenant: 1, claimMode: 'serverRef' });
    expect(() => announcePlan(plan, orphan, 'c')).toThrow(
      'act 3 needs 3 seeded claims with a server; claim 2 has none',
    );
  });
});
