// Room in one budget's ledger (checkRoom): what the grants already written, the census and the spec
// leave for one more reservation in a domain.
import fc from 'fast-check';
import type { ServerDisruptionBudget } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import { Codes } from '../../contract/codes.js';
import type { BudgetCensus } from '../world.js';
import { NOW } from '../testdata/load.js';
import { checkRoom, type RoomInput } from './plan.js';

describe('room in a ledger (checkRoom)', () => {
  const budget = (
    grants: { uid: string; server: string; domain?: string }[],
    spec: Partial<ServerDisruptionBudget['spec']> = {},
  ): ServerDisruptionBudget => ({
    metadata: { name: 'fleet', generation: 2 },
    spec: { serverSelector: {}, maxUnavailable: 2, ...spec },
    status: {
      observedGeneration: 2,
      grants: grants.map((g) => ({
        maintenanceUID: g.uid,
        maintenance: { namespace: 'ops', name: g.uid },
        server: g.server,
        grantedAt: NOW.toISOString(),
        ...(g.domain ? { domain: g.domain } : {}),
      })),
    },
  });
  const room = (
    b: ServerDisruptionBudget,
    over: Partial<RoomInput> = {},
    census: BudgetCensus = { expected: 10, unavailable: [] as string[] },
    domain = '',
  ) =>
    checkRoom({
      budget: b,
      reservation: { ref: { kind: 'ServerDisruptionBudget', name: 'fleet' }, domain, census },
      server: 's-new',
      maintenanceUID: 'uid-new',
      ledgerCap: 2000,
      finishedOnServer: new Set(),
      ...over,
    });

  it('fits while granted plus otherwise unavailable stays within the limit', () => {
    expect(room(budget([{ uid: 'a', server: 's1' }]))).toMatchObject({ kind: 'fits', allowed: 2, inUse: 1 });
  });

  it('refuses when full, naming the budget, how many are allowed and in use', () => {
    const r = room(budget([{ uid: 'a', server: 's1' }]), {}, { expected: 10, unavailable: ['s9'] });
    expect(r).toMatchObject({
      kind: 'denied',
      code: Codes.BUDGET_EXHAUSTED,
      allowed: 2,
      inUse: 2,
      retryAfterSeconds: 30,
    });
    if (r.kind === 'denied')
      expect(r.message).toBe(
        'ServerDisruptionBudget fleet: 2 unavailable, 2 allowed (maxUnavailable 2 of 10 servers)',
      );
  });

  it('counts a server once when it is both granted and unavailable', () => {
    expect(
      room(budget([{ uid: 'a', server: 's1' }]), {}, { expected: 10, unavailable: ['s1'] }),
    ).toMatchObject({ kind: 'fits', inUse: 1 });
  });

  it('needs no new room for a server that is already unavailable', () => {
    const r = room(
      budget([
        { uid: 'a', server: 's1' },
        { uid: 'b', server: 's2' },
      ]),
      {},
      { expected: 10, unavailable: ['s-new'] },
    );
    expect(r).toMatchObject({ kind: 'fits', alreadyUnavailable: true });
  });

  it('counts only grants of the same topology domain', () => {
    const b = budget(
      [
        { uid: 'a', server: 's1', domain: 'r1' },
        { uid: 'b', server: 's2', domain: 'r2' },
      ],
      { maxUnavailable: 1, topologyKey: 'rack' },
    );
    expect(room(b, {}, { expected: 5, unavailable: [] }, 'r3')).toMatchObject({ kind: 'fits', inUse: 0 });
    expect(room(b, {}, { expected: 5, unavailable: [] }, 'r1').kind).toBe('denied');
  });

  it('answers the same from a census that carries its set as from the list alone (property)', () => {
    const servers = ['s1', 's2', 's3', 's4', 's-new'];
    fc.assert(
      fc.property(
        fc.array(fc.record({ server: fc.constantFrom(...servers), domain: fc.constantFrom('', 'r1') }), {
          maxLength: 6,
        }),
        fc.subarray(servers),
        fc.integer({ min: 0, max: 6 }),
        (entries, unavailable, max) => {
          const b = budget(
            entries.map((e, i) => ({ uid: `u${i}`, ...e })),
            { maxUnavailable: max },
          );
          const listed = room(b, {}, { expected: 10, unavailable });
          const withSet = room(b, {}, { expected: 10, unavailable, unavailableSet: new Set(unavailable) });
          expect(withSet).toEqual(listed);
        },
      ),
    );
  });

  it('is idempotent for a maintenance already in the ledger', () => {
    expect(
      room(
        budget(
          [
            { uid: 'uid-new', server: 's-new' },
            { uid: 'x', server: 'y' },
          ],
          { maxUnavailable: 0 },
        ),
      ),
    ).toEqual({ kind: 'present' });
  });

  it('refuses a server another maintenance holds a grant for, unless that one is finished', () => {
    const b = budget([{ uid: 'a', server: 's-new' }], { maxUnavailable: 5 });
    expect(room(b)).toMatchObject({ kind: 'denied', code: Codes.SERVER_BUSY });
    expect(room(b, { finishedOnServer: new Set(['a']) })).toMatchObject({ kind: 'fits' });
  });

  it('refuses paused budgets, stale ones (observedGeneration < generation) and full ledgers', () => {
    expect(room(budget([], { paused: true }))).toMatchObject({ code: Codes.BUDGET_PAUSED });
    const stale = budget([]);
    stale.metadata.generation = 3;
    expect(room(stale)).toMatchObject({ code: Codes.BUDGET_STALE, retryAfterSeconds: 10 });
    expect(room(budget([{ uid: 'a', server: 's1' }]), { ledgerCap: 1 })).toMatchObject({
      code: Codes.BUDGET_LEDGER_FULL,
    });
  });
});
