// Behaviours 3, 4 and 8: an unanswered maintenance proceeds at its deadline (condition and Event
// DeadlineReached) and a defer past the deadline is refused while one within it is honoured; a claim
// nobody consumes follows the policy's approval path; maintenance windows from policy are honoured.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SETUP_TIMEOUT_MS } from '../../../e2e/harness/dist.js';
import type { ServerClaim } from '../../../api/metal/v1alpha1/serverclaim.js';
import { KubeClient } from '../../../lib/kube/client.js';
import { KubeApiError } from '../../../lib/kube/errors.js';
import { serviceAccountKubeconfig, waitFor } from '../../../e2e/harness/env.js';
import { ServerClaimResource } from '../../../lib/kube/kinds.js';
import { rfc3339 } from '../../../contract/time.js';
import {
  HOLD_FOREVER,
  TEST_POLICY,
  conditionOf,
  eventsFor,
  finish,
  getMaintenance,
  metricsOf,
  sample,
  startLifecycle,
  stateOf,
  waitForGone,
  waitForMaintenance,
  waitForState,
  type Fleet,
  type Lifecycle,
} from './harness.js';
import { setTimeout as sleep } from 'node:timers/promises';

let lc: Lifecycle;
beforeAll(async () => {
  lc = await startLifecycle({ actorHoldMs: 1000 });
}, SETUP_TIMEOUT_MS);
afterAll(async () => {
  await lc?.stop();
}, 60_000);

async function ownerOf(f: Fleet): Promise<KubeClient> {
  const { kubeconfig } = await serviceAccountKubeconfig(lc.admin, f.tenant, 'owner', [
    { apiGroups: ['metal.ironcore.dev'], resources: ['serverclaims'], verbs: ['get', 'patch', 'update'] },
  ]);
  return KubeClient.fromFile(kubeconfig);
}

async function announcedDeadline(f: Fleet, uid: string): Promise<string> {
  const claim = f.claims[0]!;
  return waitFor(`announcement of ${uid} with a deadline`, async () => {
    const c = await lc.claims.get(claim.name, claim.namespace);
    return c.status?.maintenance?.announcements?.find((a) => a.maintenanceUID === uid)?.deadline;
  });
}

describe('deadline escalation', () => {
  it('starts an unanswered maintenance within 30 s after its deadline, with condition and Event DeadlineReached', async () => {
    const f = await lc.fleet('deadline', { servers: 1, claims: 'consumer' });
    const deadline = rfc3339(Date.now() + 8000);
    const m = await lc.maintenance('deadline-m', f.servers[0]!, { approval: { deadline } }, HOLD_FOREVER);
    expect(await announcedDeadline(f, m.metadata.uid!)).toBe(deadline);
    const before = await waitForState(lc, 'deadline-m', 'Announced');
    expect(conditionOf(before, 'Approved')?.reason).toBe('AwaitingApproval');
    expect(before.status?.deadline).toBe(deadline);

    const started = await waitForState(lc, 'deadline-m', 'InMaintenance', { timeoutMs: 45_000 });
    const late = Date.parse(started.status!.startedAt!) - Date.parse(deadline);
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThanOrEqual(30_000);
    expect(started.status?.approval?.source).toBe('Deadline');
    expect(conditionOf(started, 'Approved')?.reason).toBe('DeadlineReached');
    const onMaintenance = await waitFor('DeadlineReached Event on the maintenance', async () => {
      const evs = await eventsFor(lc.admin, lc.ns, 'deadline-m');
      return evs.find((e) => e.reason === 'DeadlineReached');
    });
    expect(onMaintenance.type).toBe('Warning');
    await waitFor('DeadlineReached Event on the claim', async () =>
      (await eventsFor(lc.admin, f.tenant, f.claims[0]!.name)).some((e) => e.reason === 'DeadlineReached'),
    );
    const am = await metricsOf(lc, 'approval-controller');
    expect(sample(am, 'metal_approval_deadline_escalations_total')).toBeGreaterThanOrEqual(1);
    expect(sample(am, 'metal_approval_decisions_total', { source: 'Deadline' })).toBeGreaterThanOrEqual(1);
    await finish(lc, 'deadline-m');
    await waitForGone(lc, 'deadline-m');
  }, 90_000);

  it('refuses a defer past the deadline and honours one within it', async () => {
    const f = await lc.fleet('defer', { servers: 1, claims: 'consumer' });
    const owner = await ownerOf(f);
    try {
      const deadline = rfc3339(Date.now() + 60_000);
      const m = await lc.maintenance('defer-m', f.servers[0]!, { approval: { deadline } }, HOLD_FOREVER);
      await announcedDeadline(f, m.metadata.uid!);
      const claims = owner.resource<ServerClaim>(ServerClaimResource);
      const claim = f.claims[0]!;
      const tooLate = rfc3339(Date.parse(deadline) + 3600_000);
      const refused = await claims
        .patch(
          claim.name,
          { spec: { maintenance: { deferrals: [{ maintenanceUID: m.metadata.uid!, until: tooLate }] } } },
          { namespace: claim.namespace },
        )
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(refused).toBeInstanceOf(KubeApiError);
      expect((refused as KubeApiError).statusCode).toBe(403);
      expect((refused as KubeApiError).message).toContain('METAL_ERR_DEFER_PAST_DEADLINE');

      // Approve and defer within the deadline: the deferral wins until it ends, then it starts.
      const until = rfc3339(Date.now() + 7000);
      await claims.patch(
        claim.name,
        {
          spec: {
            maintenance: {
              approvals: [{ maintenanceUID: m.metadata.uid! }],
              deferrals: [{ maintenanceUID: m.metadata.uid!, until }],
            },
          },
        },
        { namespace: claim.namespace },
      );
      const deferred = await waitForMaintenance(
        lc,
        'defer-m',
        'Deferred',
        (x) => conditionOf(x, 'Approved')?.reason === 'Deferred',
      );
      expect(stateOf(deferred)).toBe('Announced');
      // The controller writes the maintenance's status first and refreshes the claim's announcement
      // after it (its announce queue): wait for that second write, well inside the deferral.
      const announced = await waitFor(
        "the deferral on the claim's announcement",
        async () => {
          const a = (await lc.claims.get(claim.name, claim.namespace)).status?.maintenance
            ?.announcements?.[0];
          return a?.state === 'Deferred' && a;
        },
        { timeoutMs: 5000 },
      );
      expect(announced).toMatchObject({
        state: 'Deferred',
        deferredUntil: until,
      });
      const started = await waitForState(lc, 'defer-m', 'InMaintenance', { timeoutMs: 30_000 });
      expect(Date.parse(started.status!.startedAt!)).toBeGreaterThanOrEqual(Date.parse(until));
      expect(started.status?.approval?.source).toBe('Owner');
      await finish(lc, 'defer-m');
      await waitForGone(lc, 'defer-m');
    } finally {
      await owner.close();
    }
  }, 90_000);
});

describe('claims nobody answers for', () => {
  it("approves a maintenance of a claim without consumer through the policy rule, and waits for a consumer's owner", async () => {
    const orphan = await lc.fleet('orphan', { servers: 1, claims: 'no-consumer' });
    const owned = await lc.fleet('owned', { servers: 1, claims: 'consumer' });
    const created = Date.now();
    await lc.maintenance('orphan-m', orphan.servers[0]!, {}, HOLD_FOREVER);
    await lc.maintenance('owned-m', owned.servers[0]!, {}, HOLD_FOREVER);
    const started = await waitForState(lc, 'orphan-m', 'InMaintenance', { timeoutMs: 30_000 });
    expect(started.status?.approval).toMatchObject({
      source: 'Policy',
      approvedBy: 'policy rule no-consumer',
    });
    expect(conditionOf(started, 'Approved')?.reason).toBe('PolicyApproved');
    // The rule waits its `after` (3 s) from the announcement.
    expect(Date.parse(started.status!.startedAt!) - created).toBeGreaterThanOrEqual(2000);
    const owned1 = await getMaintenance(lc, 'owned-m');
    expect(stateOf(owned1)).toBe('Announced');
    expect(conditionOf(owned1, 'Approved')?.reason).toBe('AwaitingApproval');
    await finish(lc, 'orphan-m');
    await finish(lc, 'owned-m');
    await waitForGone(lc, 'orphan-m');
    await waitForGone(lc, 'owned-m');
  }, 60_000);
});

/** HH:MM in UTC, `offsetMin` minutes from now. */
function hhmm(offsetMin: number): string {
  const d = new Date(Date.now() + offsetMin * 60_000);
  return `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`;
}
const everyDay = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

describe('maintenance windows', () => {
  it('starts window-bound classes only inside a window, and others at once', async () => {
    const windowed = {
      ...TEST_POLICY.classes,
      Planned: { ...TEST_POLICY.classes.Planned, requireWindow: true },
    };
    const closed = [{ name: 'later', days: everyDay, start: hhmm(120), end: hhmm(180), timeZone: 'UTC' }];
    await lc.setPolicy({ classes: windowed, windows: closed });
    try {
      const f = await lc.fleet('window', { servers: 2 });
      await lc.maintenance('window-planned', f.servers[0]!, { class: 'Planned' }, HOLD_FOREVER);
      await lc.maintenance('window-urgent', f.servers[1]!, { class: 'Urgent' }, HOLD_FOREVER);
      await waitForState(lc, 'window-urgent', 'InMaintenance');
      const outside = await waitForMaintenance(
        lc,
        'window-planned',
        'OutsideWindow',
        (x) => conditionOf(x, 'Admitted')?.reason === 'OutsideWindow',
      );
      expect(stateOf(outside)).toBe('Approved');
      expect(conditionOf(outside, 'Admitted')?.message).toContain('next opens at');
      await sleep(3000);
      expect(stateOf(await getMaintenance(lc, 'window-planned'))).toBe('Approved');

      // The window opens (a policy change, hot-reloaded by webhook and controllers): it starts.
      const open = [{ name: 'now', days: everyDay, start: hhmm(-60), end: hhmm(60), timeZone: 'UTC' }];
      await lc.setPolicy({ classes: windowed, windows: open });
      await waitForState(lc, 'window-planned', 'InMaintenance', { timeoutMs: 30_000 });
      for (const name of ['window-planned', 'window-urgent']) await finish(lc, name);
      for (const name of ['window-planned', 'window-urgent']) await waitForGone(lc, name);
    } finally {
      await lc.setPolicy({});
    }
  }, 90_000);
});
