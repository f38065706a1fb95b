import { Codes } from '../../contract/codes.js';
import { find, loadReview, loadWorld, request } from '../testdata/load.js';
import { clone, ruleInput } from '../testdata/helpers.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import { FIELDS_READ } from '../review.js';
import { placement } from './placement.js';
import { MAINTENANCE_TAINT_KEY } from '../../contract/names.js';

describe('placement (WS1)', () => {
  it('denies setting serverRef on an existing claim to a cordoned server', () => {
    const d = placement(ruleInput(loadReview('claim-set-serverref-cordoned').request));
    expect(d).toMatchObject({ allowed: false, code: Codes.SERVER_UNCLAIMABLE, status: 403 });
    expect(d.message).toContain('srv-cordoned is cordoned');
  });

  it('admits a claim created with a serverRef to a cordoned server, with a warning that it stays unbound', () => {
    const d = placement(ruleInput(loadReview('claim-create-cordoned').request));
    expect(d.allowed).toBe(true);
    expect(d.warnings).toEqual([expect.stringMatching(/stays unbound: server srv-cordoned is cordoned/)]);
  });

  it('warns when a claim is created for a server that does not exist', () => {
    const review = loadReview('claim-create-cordoned').request;
    (review.object as { spec: { serverRef: { name: string } } }).spec.serverRef.name = 'nope';
    const d = placement(ruleInput(review));
    expect(d.allowed).toBe(true);
    expect(d.warnings[0]).toContain('does not exist');
  });

  it('admits setting serverRef to a server it does not know with the same warning, never a 429', () => {
    const review = loadReview('claim-set-serverref-cordoned').request;
    (review.object as { spec: { serverRef: { name: string } } }).spec.serverRef.name = 'nope';
    const d = placement(ruleInput(review));
    expect(d).toMatchObject({ allowed: true, status: 200 });
    expect(d.warnings).toEqual([expect.stringContaining('server nope does not exist (yet)')]);
  });

  it('lets metal-operator record serverRef after it bound the server, even if the server got cordoned since', () => {
    const world = loadWorld();
    find(world.servers, 'srv-cordoned').spec.serverClaimRef = { namespace: 'tenant-a', name: 'claim-new' };
    expect(placement(ruleInput(loadReview('claim-set-serverref-cordoned').request, { world })).allowed).toBe(
      true,
    );
  });

  const bind = (
    serverName: string,
    claim = { namespace: 'tenant-a', name: 'claim-new' },
    mutateWorld?: (w: ReturnType<typeof loadWorld>) => void,
  ) => {
    const world = loadWorld();
    world.claims.push({
      metadata: { name: 'claim-new', namespace: 'tenant-a' },
      spec: { power: 'On', image: 'x' },
    });
    mutateWorld?.(world);
    const old = clone(find(world.servers, serverName));
    const next = clone(old);
    next.spec.serverClaimRef = claim;
    return placement(
      ruleInput(request({ kind: 'Server', operation: 'UPDATE', object: next, oldObject: old }), { world }),
    );
  };

  it('allows binding an available server', () => {
    expect(bind('srv-free').allowed).toBe(true);
  });

  it('denies binding a server with a NoBind taint the claim does not tolerate, naming the taint', () => {
    const d = bind('srv-tainted');
    expect(d).toMatchObject({ allowed: false, code: Codes.SERVER_TAINTED });
    expect(d.message).toContain('example.com/gpu=broken:NoBind');
    expect(d.message).not.toContain('reserved-for-evict');
  });

  it('allows binding a tainted server when the claim tolerates the NoBind taint', () => {
    const d = bind('srv-tainted', undefined, (w) => {
      find(w.claims, 'claim-new').spec.tolerations = [
        { key: 'example.com/gpu', operator: 'Equal', value: 'broken' },
      ];
    });
    expect(d.allowed).toBe(true);
  });

  it('denies binding a server in maintenance (typed status)', () => {
    expect(bind('srv-maint')).toMatchObject({ allowed: false, code: Codes.SERVER_IN_MAINTENANCE });
  });

  it('denies binding a server whose maintenance the index shows Approved, and legacy maintenance fields', () => {
    const approved = bind('srv-free', undefined, (w) => {
      find(w.maintenances, 'm-free').status = { state: 'Approved' };
    });
    expect(approved).toMatchObject({ allowed: false, code: Codes.SERVER_IN_MAINTENANCE });
    const legacy = bind('srv-free', undefined, (w) => {
      find(w.servers, 'srv-free').status = { state: 'Maintenance' };
    });
    expect(legacy.code).toBe(Codes.SERVER_IN_MAINTENANCE);
    const finished = bind('srv-free', undefined, (w) => {
      find(w.maintenances, 'm-free').status = { state: 'Completed' };
    });
    expect(finished.allowed).toBe(true);
  });

  it('lists every reason when several apply, first one as the code', () => {
    const d = bind('srv-tainted', undefined, (w) => {
      find(w.servers, 'srv-tainted').spec.unclaimable = true;
    });
    expect(d.code).toBe(Codes.SERVER_UNCLAIMABLE);
    expect(d.causes?.map((c) => c.reason)).toEqual([Codes.SERVER_UNCLAIMABLE, Codes.SERVER_TAINTED]);
  });

  it('always allows setting or clearing unclaimable, without touching the binding', () => {
    const world = loadWorld();
    const bound = find(world.servers, 'srv-claimed');
    const cordoned = clone(bound);
    cordoned.spec.unclaimable = true;
    expect(
      placement(
        ruleInput(request({ kind: 'Server', operation: 'UPDATE', object: cordoned, oldObject: bound })),
      ).allowed,
    ).toBe(true);
    const uncordoned = clone(cordoned);
    uncordoned.spec.unclaimable = false;
    expect(
      placement(
        ruleInput(request({ kind: 'Server', operation: 'UPDATE', object: uncordoned, oldObject: cordoned })),
      ).allowed,
    ).toBe(true);
  });

  it('treats a cordon set in the same write as the binding as a cordon', () => {
    const world = loadWorld();
    const old = find(world.servers, 'srv-free');
    const next = clone(old);
    next.spec.unclaimable = true;
    next.spec.serverClaimRef = { namespace: 'tenant-a', name: 'claim-a' };
    expect(
      placement(ruleInput(request({ kind: 'Server', operation: 'UPDATE', object: next, oldObject: old })))
        .code,
    ).toBe(Codes.SERVER_UNCLAIMABLE);
  });

  it('reads no field of the Server spec or status but those the object check covers (FIELDS_READ)', () => {
    const read = { spec: new Set<string>(), status: new Set<string>() };
    /** A part of the server that records which of its fields are read. */
    const recorder = <T extends object>(part: T, into: Set<string>): T =>
      new Proxy(part, {
        get(target, key, receiver) {
          if (typeof key === 'string') into.add(key);
          return Reflect.get(target, key, receiver) as unknown;
        },
      });
    const recording = (server: Server): Server => ({
      ...server,
      spec: recorder(server.spec, read.spec),
      status: recorder(server.status ?? {}, read.status),
    });
    const world = loadWorld();
    for (const name of ['srv-free', 'srv-cordoned', 'srv-tainted', 'srv-maint', 'srv-claimed']) {
      const old = clone(find(world.servers, name));
      const next = clone(old);
      next.spec.serverClaimRef = { namespace: 'tenant-a', name: 'claim-other' };
      const legacy = clone(next);
      legacy.status = { state: 'Maintenance' };
      const legacyRef = clone(next);
      legacyRef.spec.serverMaintenanceRef = { namespace: 'ops', name: 'old-style' };
      for (const object of [next, legacy, legacyRef])
        placement(
          ruleInput(
            request({
              kind: 'Server',
              operation: 'UPDATE',
              object: recording(object),
              oldObject: recording(old),
            }),
            { world },
          ),
        );
    }
    expect([...read.spec].sort()).toEqual([...FIELDS_READ.Server!.spec!].sort());
    expect([...read.status].sort()).toEqual([...FIELDS_READ.Server!.status!].sort());
  });

  it('ignores deletes, other kinds, and subresources', () => {
    const world = loadWorld();
    const s = find(world.servers, 'srv-cordoned');
    expect(placement(ruleInput(request({ kind: 'Server', operation: 'DELETE', oldObject: s }))).allowed).toBe(
      true,
    );
    expect(
      placement(ruleInput(request({ kind: 'ServerBoot', operation: 'CREATE', object: s }))).allowed,
    ).toBe(true);
    const statusWrite = request({
      kind: 'Server',
      operation: 'UPDATE',
      object: s,
      oldObject: s,
      subResource: 'status',
    });
    expect(placement(ruleInput(statusWrite)).allowed).toBe(true);
  });

  describe('claims that tolerate the maintenance taint', () => {
    type ClaimSpec = { tolerations?: { key: string; operator?: string; effect?: string }[] };
    const withTolerations = (
      name: string,
      tolerations: ClaimSpec['tolerations'],
      old?: ClaimSpec['tolerations'],
    ) => {
      const review = clone(loadReview(name).request);
      (review.object as { spec: ClaimSpec }).spec.tolerations = tolerations;
      if (old !== undefined) (review.oldObject as { spec: ClaimSpec }).spec.tolerations = old;
      return review;
    };
    const reserved = { key: MAINTENANCE_TAINT_KEY, operator: 'Exists' };

    it('refuses a create that tolerates the key, naming the field, why, and what is valid', () => {
      const d = placement(ruleInput(withTolerations('claim-create-cordoned', [{ key: 'other' }, reserved])));
      expect(d).toMatchObject({
        allowed: false,
        code: Codes.TOLERATION_RESERVED,
        status: 403,
        causes: [{ field: 'spec.tolerations[1].key', reason: 'FieldValueForbidden' }],
      });
      expect(d.message).toContain(`spec.tolerations[1] tolerates ${MAINTENANCE_TAINT_KEY}`);
      expect(d.message).toContain('tolerate any other key');
    });

    it('refuses it whatever the operator or effect, and on an update that adds it', () => {
      for (const t of [{ key: MAINTENANCE_TAINT_KEY }, { key: MAINTENANCE_TAINT_KEY, effect: 'NoBind' }])
        expect(placement(ruleInput(withTolerations('claim-create-cordoned', [t]))).code).toBe(
          Codes.TOLERATION_RESERVED,
        );
      expect(
        placement(ruleInput(withTolerations('claim-set-serverref-cordoned', [reserved], []))),
      ).toMatchObject({
        allowed: false,
        code: Codes.TOLERATION_RESERVED,
      });
    });

    it('keeps a toleration the stored claim had, with a warning, and still refuses held servers', () => {
      const d = placement(ruleInput(withTolerations('claim-set-serverref-cordoned', [reserved], [reserved])));
      // srv-cordoned is refused for its cordon; the toleration changes nothing about that.
      expect(d).toMatchObject({ allowed: false, code: Codes.SERVER_UNCLAIMABLE });
      expect(d.warnings).toEqual([expect.stringContaining('servers in maintenance stay refused to it')]);
      const world = loadWorld();
      find(world.servers, 'srv-cordoned').spec.serverClaimRef = { namespace: 'tenant-a', name: 'claim-new' };
      const recorded = placement(
        ruleInput(withTolerations('claim-set-serverref-cordoned', [reserved], [reserved]), { world }),
      );
      expect(recorded).toMatchObject({
        allowed: true,
        warnings: [expect.stringContaining('spec.tolerations[0]')],
      });
    });

    it('admits tolerations of any other key', () => {
      const d = placement(
        ruleInput(
          withTolerations('claim-create-cordoned', [{ key: 'maintenance.metal.ironcore.dev/other' }]),
        ),
      );
      expect(d.allowed).toBe(true);
    });
  });
});
