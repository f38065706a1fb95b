// Behaviour 7: a grant whose maintenance never reaches InMaintenance expires after the grant TTL (and
// not before), while the grant of a running maintenance stays however old; deleting a ServerMaintenance
// in any phase releases its grant, taint and park within 60 s.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SETUP_TIMEOUT_MS } from '../../../e2e/harness/dist.js';
import type { LedgerEntry, ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import { waitFor } from '../../../e2e/harness/env.js';
import { MAINTENANCE_TAINT_KEY, PARKED_ANNOTATION, PARKED_BY_ANNOTATION } from '../../../contract/names.js';
import {
  HOLD_FOREVER,
  caseBudget,
  conditionOf,
  eventsFor,
  finish,
  ledgerHas,
  startLifecycle,
  waitForGone,
  waitForMaintenance,
  waitForState,
  type Lifecycle,
} from './harness.js';

const TTL_MS = 15_000; // the suite policy's grants.ttl

let lc: Lifecycle;
beforeAll(async () => {
  lc = await startLifecycle({ actorHoldMs: 1000 });
}, SETUP_TIMEOUT_MS);
afterAll(async () => {
  await lc?.stop();
}, 60_000);

/** Writes a ledger entry as the webhook would (a leaked grant: its status write was then refused). */
async function leakGrant(budget: string, m: ServerMaintenance, grantedAt: Date): Promise<void> {
  const entry: LedgerEntry = {
    maintenanceUID: m.metadata.uid!,
    maintenance: { namespace: m.metadata.namespace!, name: m.metadata.name! },
    server: m.spec.serverRef.name,
    grantedAt: grantedAt.toISOString(),
  };
  for (let i = 0; i < 20; i++) {
    const b = await lc.sdbs.get(budget);
    try {
      await lc.sdbs.replaceStatus({
        ...b,
        status: { ...b.status, grants: [...(b.status?.grants ?? []), entry] },
      });
      return;
    } catch {
      // conflict with the budget controller: read again
    }
  }
  throw new Error('could not write the ledger entry');
}

const budgetOf = (name: string): Promise<ServerDisruptionBudget> => lc.sdbs.get(name);

describe('grant TTL', () => {
  it("expires a grant whose maintenance never reaches InMaintenance after the TTL, and keeps a running one's", async () => {
    const f = await lc.fleet('ttl', { servers: 3, claims: 'consumer' });
    const budget = (await caseBudget(lc, f, 3)).metadata.name!;
    // Never reaches InMaintenance: the owner never answers and the deadline is an hour away.
    const stuck = await lc.maintenance('ttl-stuck', f.servers[0]!, {}, HOLD_FOREVER);
    await waitForState(lc, 'ttl-stuck', 'Announced');
    // Runs: the claim's standing approval lets it start; its grant is older than the TTL.
    await lc.claims.patch(
      f.claims[1]!.name,
      { spec: { maintenance: { approvalMode: 'Automatic' } } },
      { namespace: f.tenant },
    );
    const runs = await lc.maintenance('ttl-runs', f.servers[1]!, {}, HOLD_FOREVER);
    await waitForState(lc, 'ttl-runs', 'InMaintenance');
    const leakedAt = new Date();
    await leakGrant(budget, stuck, leakedAt);
    // A grant naming a maintenance that does not exist (it was deleted without its finalizer's help).
    const ghost = {
      ...stuck,
      metadata: { ...stuck.metadata, uid: 'ghost-uid', name: 'ttl-ghost' },
      spec: { serverRef: { name: f.servers[2]! } },
    };
    await leakGrant(budget, ghost, new Date());

    await waitFor(
      'the ghost grant dropped at once (its maintenance has ended)',
      async () => !ledgerHas(await budgetOf(budget), 'ghost-uid'),
      { timeoutMs: 10_000 },
    );
    expect(ledgerHas(await budgetOf(budget), stuck.metadata.uid!)).toBe(true);
    await waitFor(
      'the stuck grant dropped',
      async () => !ledgerHas(await budgetOf(budget), stuck.metadata.uid!),
      { timeoutMs: TTL_MS + 15_000, intervalMs: 250 },
    );
    const droppedAfter = Date.now() - leakedAt.getTime();
    expect(droppedAfter).toBeGreaterThanOrEqual(TTL_MS - 1000);
    expect(droppedAfter).toBeLessThanOrEqual(TTL_MS + 10_000);
    // The running maintenance's grant is older than the TTL by now and stays.
    const b = await budgetOf(budget);
    const running = b.status?.grants?.find((g) => g.maintenanceUID === runs.metadata.uid);
    expect(running).toBeDefined();
    expect(Date.now() - Date.parse(running!.grantedAt)).toBeGreaterThan(TTL_MS);
    // Budgets are cluster-scoped: their Events land in the default namespace.
    const expired = (await eventsFor(lc.admin, 'default', budget)).filter((e) => e.reason === 'GrantExpired');
    expect(expired.map((e) => e.note).join('\n')).toContain('ttl-stuck');
    for (const n of ['ttl-stuck', 'ttl-runs']) await finish(lc, n);
    for (const n of ['ttl-stuck', 'ttl-runs']) await waitForGone(lc, n);
  }, 90_000);
});

describe('deletion in any phase', () => {
  it('releases grant, taint and park of Pending, Announced, Approved, InMaintenance and Failed maintenances within 60 s', async () => {
    const f = await lc.fleet('phases', { servers: 2 });
    const claimed = await lc.fleet('phases-claimed', { servers: 1, claims: 'consumer' });
    const unbudgeted = await lc.fleet('phases-free', { servers: 1 });
    const budget = (await caseBudget(lc, f, 1)).metadata.name!;
    const [sIn, sAp] = f.servers as [string, string];
    const sFa = unbudgeted.servers[0]!;

    const mIn = await lc.maintenance('phase-in', sIn, {}, HOLD_FOREVER);
    await waitForMaintenance(lc, 'phase-in', 'Ready', (m) => conditionOf(m, 'Ready')?.status === 'True');
    // Approved, refused for budget (K=1 is taken) and holding a leaked grant of its own.
    const mAp = await lc.maintenance('phase-approved', sAp, {}, HOLD_FOREVER);
    await waitForMaintenance(
      lc,
      'phase-approved',
      'BudgetExhausted',
      (m) => conditionOf(m, 'Admitted')?.reason === 'BudgetExhausted',
    );
    await leakGrant(budget, mAp, new Date());
    const mAn = await lc.maintenance('phase-announced', claimed.servers[0]!, {}, HOLD_FOREVER);
    await waitForState(lc, 'phase-announced', 'Announced');
    const mPe = await lc.maintenance('phase-pending', 'no-such-server', {}, HOLD_FOREVER);
    await waitForMaintenance(
      lc,
      'phase-pending',
      'ServerNotFound',
      (m) => conditionOf(m, 'Admitted')?.reason === 'ServerNotFound',
    );
    // Failed: held longer than its maxDuration; a Failed maintenance holds nothing any more.
    const mFa = await lc.maintenance('phase-failed', sFa, { maxDuration: '4s' }, HOLD_FOREVER);
    const failed = await waitForState(lc, 'phase-failed', 'Failed', { timeoutMs: 40_000 });
    expect(conditionOf(failed, 'Failed')?.reason).toBe('MaxDurationExceeded');

    let s = await lc.servers.get(sIn);
    expect(s.spec.taints?.find((t) => t.key === MAINTENANCE_TAINT_KEY)?.value).toBe(mIn.metadata.uid);
    expect(s.metadata.annotations?.[PARKED_BY_ANNOTATION]).toBe(mIn.metadata.uid);
    expect(ledgerHas(await budgetOf(budget), mIn.metadata.uid!)).toBe(true);
    expect(ledgerHas(await budgetOf(budget), mAp.metadata.uid!)).toBe(true);
    // An approved maintenance already keeps new claims off its server (WS1).
    expect((await lc.servers.get(sAp)).spec.taints?.find((t) => t.key === MAINTENANCE_TAINT_KEY)?.value).toBe(
      mAp.metadata.uid,
    );

    const all = [mIn, mAp, mAn, mPe, mFa];
    const deletedAt = Date.now();
    for (const m of all) await finish(lc, m.metadata.name!);
    for (const m of all) await waitForGone(lc, m.metadata.name!, { timeoutMs: 60_000 });
    await waitFor(
      'every server released',
      async () => {
        for (const name of [sIn, sAp, sFa, claimed.servers[0]!]) {
          const srv = await lc.servers.get(name);
          if (srv.spec.taints?.some((t) => t.key === MAINTENANCE_TAINT_KEY)) return false;
          if (
            srv.metadata.annotations?.[PARKED_BY_ANNOTATION] ||
            srv.metadata.annotations?.[PARKED_ANNOTATION]
          )
            return false;
          if ((srv.status?.maintenance?.state ?? 'None') !== 'None') return false;
        }
        return true;
      },
      { timeoutMs: 60_000 },
    );
    const b = await budgetOf(budget);
    expect(
      (b.status?.grants ?? []).filter((g) => all.some((m) => m.metadata.uid === g.maintenanceUID)),
    ).toEqual([]);
    expect(Date.now() - deletedAt).toBeLessThan(60_000);
    // The leaked grant went with its maintenance, long before its TTL.
    expect(Date.now() - deletedAt).toBeLessThan(TTL_MS);
    s = await lc.servers.get(sIn);
    expect(s.status?.state).not.toBe('Parked');
  }, 150_000);
});
