// Behaviours 1 and 2: the system removes only what it added (an admin cordon survives a maintenance),
// and approvals are scoped to a maintenance uid (approving M1 never starts M2; one approval write
// covering several queued maintenances runs them back to back, and approves nothing else).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SETUP_TIMEOUT_MS } from '../../../e2e/harness/dist.js';
import type { ServerClaim } from '../../../api/metal/v1alpha1/serverclaim.js';
import { KubeClient } from '../../../lib/kube/client.js';
import { serviceAccountKubeconfig, waitFor } from '../../../e2e/harness/env.js';
import { MAINTENANCE_TAINT_KEY, PARKED_ANNOTATION, PARKED_BY_ANNOTATION } from '../../../contract/names.js';
import { ServerClaimResource } from '../../../lib/kube/kinds.js';
import {
  HOLD_FOREVER,
  conditionOf,
  finish,
  getMaintenance,
  overlaps,
  startLifecycle,
  startOrder,
  stateOf,
  waitForGone,
  waitForMaintenance,
  waitForState,
  type Lifecycle,
} from './harness.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { LEGACY_NEEDED_LABEL } from '../../../contract/legacy-labels.js';

let lc: Lifecycle;
beforeAll(async () => {
  lc = await startLifecycle({ actorHoldMs: 1500 });
}, SETUP_TIMEOUT_MS);
afterAll(async () => {
  await lc?.stop();
}, 60_000);

describe('cordon ownership', () => {
  it('leaves an admin cordon and admin taint in place and removes only its own taint and park', async () => {
    const f = await lc.fleet('cordon', { servers: 1 });
    const server = f.servers[0]!;
    const adminTaint = { key: 'example.com/faulty-dimm', value: 'DIMM.Socket.A3', effect: 'NoBind' as const };
    await lc.servers.patch(server, { spec: { unclaimable: true, taints: [adminTaint] } });

    const m = await lc.maintenance('cordon-m', server, { reason: 'HardwareRepair' }, HOLD_FOREVER);
    const running = await waitForMaintenance(
      lc,
      'cordon-m',
      'InMaintenance and Ready',
      (x) => stateOf(x) === 'InMaintenance' && conditionOf(x, 'Ready')?.status === 'True',
    );
    expect(conditionOf(running, 'ServerParked')?.reason).toBe('Parked');
    let s = await lc.servers.get(server);
    expect(s.spec.unclaimable).toBe(true);
    expect(s.spec.taints).toEqual(
      expect.arrayContaining([
        adminTaint,
        { key: MAINTENANCE_TAINT_KEY, value: m.metadata.uid, effect: 'NoBind' },
      ]),
    );
    expect(s.metadata.annotations?.[PARKED_BY_ANNOTATION]).toBe(m.metadata.uid);
    expect(s.status?.maintenance).toMatchObject({
      state: 'InMaintenance',
      activeMaintenanceRef: { uid: m.metadata.uid },
    });

    await finish(lc, 'cordon-m');
    await waitForGone(lc, 'cordon-m');
    s = await lc.servers.get(server);
    expect(s.spec.unclaimable).toBe(true);
    expect(s.spec.taints).toEqual([adminTaint]);
    expect(s.metadata.annotations?.[PARKED_ANNOTATION]).toBeUndefined();
    expect(s.metadata.annotations?.[PARKED_BY_ANNOTATION]).toBeUndefined();
    expect(s.status?.maintenance?.state).toBe('None');
  });
});

describe('approvals scoped to a maintenance uid', () => {
  let owner: KubeClient;
  afterAll(async () => {
    await owner?.close();
  });

  async function approve(claim: { namespace: string; name: string }, uids: string[]): Promise<ServerClaim> {
    const claims = owner.resource<ServerClaim>(ServerClaimResource);
    const current = await claims.get(claim.name, claim.namespace);
    const approvals = [
      ...(current.spec.maintenance?.approvals ?? []),
      ...uids.map((maintenanceUID) => ({ maintenanceUID })),
    ];
    return claims.patch(claim.name, { spec: { maintenance: { approvals } } }, { namespace: claim.namespace });
  }

  it('announces, and approving M1 starts M1 and never M2', async () => {
    const f = await lc.fleet('approve', { servers: 1, claims: 'consumer' });
    const claim = f.claims[0]!;
    owner = await KubeClient.fromFile(
      (
        await serviceAccountKubeconfig(lc.admin, f.tenant, 'owner', [
          {
            apiGroups: ['metal.ironcore.dev'],
            resources: ['serverclaims'],
            verbs: ['get', 'patch', 'update'],
          },
        ])
      ).kubeconfig,
    );
    const m1 = await lc.maintenance('approve-m1', f.servers[0]!, { reason: 'FirmwareUpdate' }, HOLD_FOREVER);
    const m2 = await lc.maintenance('approve-m2', f.servers[0]!, { reason: 'SecurityPatch' });
    // The announcements, and (legacy window open) the maintenance-needed label for the CCM.
    const announced = await waitFor('both announced on the claim, with the legacy label', async () => {
      const c = await lc.claims.get(claim.name, claim.namespace);
      const uids = (c.status?.maintenance?.announcements ?? []).map((a) => a.maintenanceUID).sort();
      return uids.length === 2 && c.metadata.labels?.[LEGACY_NEEDED_LABEL] === 'true' ? c : undefined;
    });
    expect(
      announced.status?.maintenance?.announcements?.find((a) => a.maintenanceUID === m1.metadata.uid),
    ).toMatchObject({
      reason: 'FirmwareUpdate',
      class: 'Planned',
      state: 'Announced',
    });
    await waitForState(lc, 'approve-m1', 'Announced');
    const waiting = await waitForState(lc, 'approve-m2', 'Announced');
    expect(conditionOf(waiting, 'Approved')?.reason).toBe('AwaitingApproval');

    await approve(claim, [m1.metadata.uid!]);
    const started = await waitForState(lc, 'approve-m1', 'InMaintenance');
    expect(started.status?.approval).toMatchObject({
      source: 'Owner',
      approvedBy: `system:serviceaccount:${f.tenant}:owner`,
    });
    expect(conditionOf(started, 'Approved')?.reason).toBe('OwnerApproved');
    // The decision line an operator greps for: who approved it, written once, not per reconcile.
    const isM1Approval = (l: Record<string, unknown>) =>
      l.decision === 'OwnerApproved' && String(l.maintenance).endsWith('/approve-m1');
    const line = await lc.controllers['approval-controller'].waitForLog(isM1Approval, 10_000);
    expect(line).toMatchObject({
      msg: 'maintenance approved: Owner',
      source: 'Owner',
      approvedBy: `system:serviceaccount:${f.tenant}:owner`,
    });
    expect(lc.controllers['approval-controller'].logs.filter(isM1Approval)).toHaveLength(1);

    await finish(lc, 'approve-m1');
    await waitForGone(lc, 'approve-m1');
    // M2 is next on the server and nothing holds it, yet without its own approval it never starts.
    await sleep(5000);
    const m2now = await getMaintenance(lc, 'approve-m2');
    expect(stateOf(m2now)).toBe('Announced');
    expect(conditionOf(m2now, 'Admitted')?.reason).toBe('AwaitingApproval');
    expect(startOrder(lc.history)).not.toContain('approve-m2');
    expect(m2.metadata.uid).toBeDefined();
  }, 90_000);

  it('runs several maintenances approved in one write back to back, and that write approves nothing else', async () => {
    const claimRef = (
      await lc.claims.list({ labelSelector: 'lifecycle.metal.ironcore.dev/case' })
    ).items.find((c) => c.metadata.name?.includes('approve'))!;
    const claim = { namespace: claimRef.metadata.namespace!, name: claimRef.metadata.name! };
    const server = claimRef.spec.serverRef!.name;
    const m2 = (await getMaintenance(lc, 'approve-m2'))!;
    const m3 = await lc.maintenance('approve-m3', server);
    const m4 = await lc.maintenance('approve-m4', server);
    await waitFor('three announced', async () => {
      const c = await lc.claims.get(claim.name, claim.namespace);
      return (c.status?.maintenance?.announcements ?? []).length === 3;
    });
    const batch = [m2, m3, m4].map((m) => m.metadata.uid!);
    const startsBefore = lc.history.length;
    await approve(claim, batch);
    // The simulated actor finishes each one (deletes it) 1.5 s after it is Ready.
    for (const name of ['approve-m2', 'approve-m3', 'approve-m4'])
      await waitForGone(lc, name, { timeoutMs: 60_000 });
    const ran = startOrder(lc.history.slice(startsBefore));
    expect(ran.sort()).toEqual(['approve-m2', 'approve-m3', 'approve-m4']);
    expect(overlaps(lc.history)).toEqual([]);
    // Each ran exactly once.
    for (const name of ran) {
      const entries = lc.history.filter((r) => r.name === name && r.state === 'InMaintenance' && !r.deleted);
      expect(new Set(entries.map((e) => e.uid)).size).toBe(1);
    }

    // Used exactly once: a maintenance announced later is not covered by the approvals still on the claim.
    const m5 = await lc.maintenance('approve-m5', server);
    await waitForState(lc, 'approve-m5', 'Announced');
    await sleep(4000);
    const later = await getMaintenance(lc, 'approve-m5');
    expect(stateOf(later)).toBe('Announced');
    expect(later?.status?.approval).toBeUndefined();
    const c = await lc.claims.get(claim.name, claim.namespace);
    expect((c.spec.maintenance?.approvals ?? []).map((a) => a.maintenanceUID)).toEqual(
      expect.arrayContaining(batch),
    );
    expect((c.status?.maintenance?.announcements ?? []).map((a) => a.maintenanceUID)).toEqual([
      m5.metadata.uid,
    ]);
    await finish(lc, 'approve-m5');
    await waitForGone(lc, 'approve-m5');
    await waitFor('legacy label removed with the last announcement', async () => {
      const now = await lc.claims.get(claim.name, claim.namespace);
      return now.metadata.labels?.[LEGACY_NEEDED_LABEL] === undefined;
    });
  }, 120_000);

  it('translates the legacy maintenance-approved label into approvals of what is announced then, and of nothing later', async () => {
    const f = await lc.fleet('legacy', { servers: 1, claims: 'consumer' });
    const claim = f.claims[0]!;
    const server = f.servers[0]!;
    const first = await Promise.all(['legacy-a', 'legacy-b'].map((n) => lc.maintenance(n, server)));
    await waitFor('both announced', async () => {
      const c = await lc.claims.get(claim.name, claim.namespace);
      return (
        (c.status?.maintenance?.announcements ?? []).length === 2 &&
        c.metadata.labels?.[LEGACY_NEEDED_LABEL] === 'true'
      );
    });
    // What the cloud-controller-manager does when the Node is approved: set the label on the claim.
    await lc.claims.patch(
      claim.name,
      { metadata: { labels: { 'metal.ironcore.dev/maintenance-approved': 'true' } } },
      { namespace: claim.namespace },
    );
    for (const m of first) await waitForGone(lc, m.metadata.name!, { timeoutMs: 60_000 });
    for (const m of first) {
      const ran = lc.history.filter((r) => r.uid === m.metadata.uid && r.state === 'InMaintenance');
      expect(ran.length).toBeGreaterThan(0);
    }
    // The label is still on the claim, but it approved only what was announced when it was set.
    const later = await lc.maintenance('legacy-c', server);
    await waitForState(lc, 'legacy-c', 'Announced');
    await sleep(4000);
    const c = await lc.claims.get(claim.name, claim.namespace);
    expect(c.metadata.labels?.['metal.ironcore.dev/maintenance-approved']).toBe('true');
    expect(stateOf(await getMaintenance(lc, 'legacy-c'))).toBe('Announced');
    expect((c.spec.maintenance?.approvals ?? []).map((a) => a.maintenanceUID)).not.toContain(
      later.metadata.uid,
    );
    await finish(lc, 'legacy-c');
    await waitForGone(lc, 'legacy-c');
  }, 90_000);
});
