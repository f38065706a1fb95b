// Next to the real metal-operator (v0.7.0, its own manager, unchanged; issue 29): it discovers
// machines through its own BMC and server controllers, its claim binder never binds where our
// contract forbids while many claims arrive at once, its full-object and status writes keep our
// typed fields, and its server reconciler parks and unparks a claimed server for our maintenance.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SETUP_TIMEOUT_MS } from '../../../e2e/harness/dist.js';
import type { Server } from '../../../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../../../api/metal/v1alpha1/serverclaim.js';
import { waitFor } from '../../../e2e/harness/env.js';
import { MAINTENANCE_TAINT_KEY, PARKED_ANNOTATION } from '../../../contract/names.js';
import { machinePower } from './fleet.js';
import { startUpstream, type Upstream } from './harness.js';
import { Observer } from './observe.js';
import {
  blockServers,
  CASE_LABEL,
  createClaims,
  maintenanceOf,
  POOL_LABEL,
  waitForMaintenanceState,
  type Blocked,
} from './scenario.js';

const MACHINES = 8;
/** Claims created at once: a serverRef claim for every server, the rest by selector. */
const CLAIMS = 500;

let up: Upstream;
let watch: Observer;
let blocked: Blocked;

beforeAll(async () => {
  up = await startUpstream({ machines: MACHINES, labels: () => ({ [POOL_LABEL]: 'a' }) });
  watch = new Observer(up.servers, up.claims);
  await watch.start();
}, SETUP_TIMEOUT_MS); // may include the image files' build (e2e/harness/dist.ts)

afterAll(async () => {
  await watch?.stop();
  await up?.stop();
}, 120_000);

describe('upstream metal-operator discovers machines through its own controllers', () => {
  it('creates a Server per BMC and takes it Initial -> Discovery -> Available, powered off', async () => {
    const servers = await up.waitAvailable(240_000);
    for (const m of up.machines) {
      const s = servers.find((x) => x.metadata.name === m.server)!;
      expect(s.spec.systemUUID).toBe(m.systemUUID);
      expect(s.spec.bmcRef?.name).toBe(m.bmc);
      expect(s.metadata.labels?.[POOL_LABEL]).toBe('a'); // copied from the BMC by upstream
      // Only the registry report (the metalprobe stand-in) carries the network interfaces.
      expect(s.status?.networkInterfaces?.[0]?.name).toBe('eth0');
      expect(await machinePower(m)).toBe('Off');
    }
    expect([...up.standins.registered.keys()].sort()).toEqual(up.machines.map((m) => m.server).sort());
  }, 260_000);
});

describe('claims by serverRef and by selector, all at once', () => {
  let claims: ServerClaim[];

  beforeAll(async () => {
    blocked = await blockServers(up);
    claims = await createClaims(up, 'burst', CLAIMS);
  }, 180_000);

  it('bind nowhere the contract forbids: not cordoned, tainted, in maintenance, approved for one or legacy', async () => {
    const free = up.machines.map((m) => m.server).filter((s) => !blocked.all.includes(s));
    // Every free server gets exactly one claim; then nothing else moves.
    await waitFor(
      'every free server bound',
      () => free.every((s) => watch.servers.getByName(s)?.spec.serverClaimRef),
      { timeoutMs: 90_000, intervalMs: 250 },
    );
    // Upstream writes a claim's phase in a reconcile of its own, queued behind the other ~500 claims
    // every Server event enqueues again: wait for the phases, then let nothing else move.
    await waitFor(
      'a Bound claim for every free server',
      () =>
        watch.claims
          .list()
          .filter((c) => c.metadata.labels?.[CASE_LABEL] === 'burst' && c.status?.phase === 'Bound').length >=
        free.length,
      { timeoutMs: 90_000, intervalMs: 250 },
    );
    await new Promise((r) => setTimeout(r, 5_000));
    const bound = watch.boundServers();
    expect(blocked.all.filter((s) => bound.has(s))).toEqual([]);
    for (const s of free) expect(bound.get(s)).toHaveLength(1);
    // Claims: Bound only to a free server that names them back; a serverRef claim for a blocked
    // server keeps asking and stays unbound.
    const now = (await up.claims.list()).items.filter(
      (c) => c.metadata.labels?.['upstream.test/case'] === 'burst',
    );
    expect(now).toHaveLength(claims.length);
    const boundClaims = now.filter((c) => c.status?.phase === 'Bound');
    expect(boundClaims).toHaveLength(free.length);
    for (const c of boundClaims) {
      const server = watch.servers.getByName(c.spec.serverRef!.name)!;
      expect(free).toContain(server.metadata.name);
      expect(server.spec.serverClaimRef).toMatchObject({
        namespace: c.metadata.namespace,
        name: c.metadata.name,
      });
    }
    for (const c of now.filter((x) => x.spec.serverRef && blocked.all.includes(x.spec.serverRef.name)))
      expect(c.status?.phase).not.toBe('Bound');
  }, 200_000);

  it("keep the claim's typed spec.maintenance through upstream's bind, finalizer and phase writes", async () => {
    const claims = (await up.claims.list()).items.filter(
      (c) => c.metadata.labels?.['upstream.test/case'] === 'burst',
    );
    expect(claims).toHaveLength(CLAIMS);
    for (const c of claims) {
      const i = Number(c.metadata.name!.split('-c')[1]);
      expect(c.spec.maintenance).toEqual({ approvalMode: i % 2 === 1 ? 'Manual' : 'Automatic' });
    }
    // ... including every claim upstream has written to: its finalizer, serverRef and phase patches.
    const bound = claims.filter((c) => c.status?.phase === 'Bound');
    expect(bound.length).toBe(MACHINES - blocked.all.length);
    for (const c of bound) expect(c.metadata.finalizers).toContain('metal.ironcore.dev/serverclaim');
  });

  it("keep the server's status.maintenance and our taint through upstream's status writes and park", async () => {
    for (const [server, state] of [
      [blocked.inMaintenance, 'InMaintenance'],
      [blocked.approved, 'Approved'],
    ] as const) {
      const s: Server = await up.servers.get(server);
      expect(s.status?.maintenance?.state).toBe(state);
      expect(s.spec.taints?.some((t) => t.key === MAINTENANCE_TAINT_KEY)).toBe(true);
    }
    const parked = await up.servers.get(blocked.inMaintenance);
    expect(parked.status?.state).toBe('Parked');
    expect(parked.metadata.annotations?.[PARKED_ANNOTATION]).toBe('true');
  });
});

describe("a maintenance of a claimed server: upstream's reconciler parks and unparks it", () => {
  it('parks it (power off through the mock), holds it, and returns it Reserved, powered, claim Bound', async () => {
    const bound = [...watch.boundServers().entries()].find(([s]) => !blocked.all.includes(s))!;
    const [server, [claimKey]] = bound;
    const machine = up.machines.find((m) => m.server === server)!;
    const before = await up.servers.get(server);
    expect(before.status?.state).toBe('Reserved');
    await waitFor('the claimed machine powered on', async () => (await machinePower(machine)) === 'On', {
      timeoutMs: 30_000,
    });
    const bootRef = before.spec.bootConfigurationRef;
    expect(bootRef?.name).toBe(claimKey!.split('/')[1]);

    const m = await maintenanceOf(up, `park-${server}`, server);
    const [ns, claimName] = claimKey!.split('/') as [string, string];
    const claim = await up.claims.get(claimName, ns);
    // The owner approves, as its approvalMode asks (Automatic: the policy's no-consumer rule does).
    if (claim.spec.maintenance?.approvalMode === 'Manual')
      await up.claims.patch(
        claimName,
        {
          spec: {
            maintenance: {
              approvals: [{ maintenanceUID: m.metadata.uid!, maintenanceName: m.metadata.name! }],
            },
          },
        },
        { namespace: ns },
      );
    await waitForMaintenanceState(up, m, 'InMaintenance', 60_000);
    await waitFor(
      'upstream parked the server',
      async () => (await up.servers.get(server)).status?.state === 'Parked',
      {
        timeoutMs: 60_000,
      },
    );
    expect(await machinePower(machine)).toBe('Off');
    expect((await up.servers.get(server)).status?.maintenance?.state).toBe('InMaintenance');

    await up.maintenances.delete(m.metadata.name!, { namespace: m.metadata.namespace });
    const back = await waitFor(
      'upstream unparked the server back to Reserved and our taint is gone',
      async () => {
        const s = await up.servers.get(server);
        const tainted = (s.spec.taints ?? []).some((t) => t.key === MAINTENANCE_TAINT_KEY);
        return s.status?.state === 'Reserved' && !s.metadata.annotations?.[PARKED_ANNOTATION] && !tainted
          ? s
          : undefined;
      },
      { timeoutMs: 90_000 },
    );
    await waitFor('the machine powered on again', async () => (await machinePower(machine)) === 'On', {
      timeoutMs: 60_000,
    });
    expect(back.spec.serverClaimRef?.name).toBe(claimKey!.split('/')[1]);
    expect(back.spec.bootConfigurationRef).toEqual(bootRef);
    // Bound from the bind on; never anything else while parked.
    const phases = watch.phases.get(claimKey!)!;
    expect(phases.slice(phases.indexOf('Bound'))).toEqual(['Bound']);
  }, 240_000);
});

describe('the projection never refuses placement without our taint', () => {
  it('every Server version the watch showed projected Approved or InMaintenance carried the NoBind taint', () => {
    // Held servers were seen Approved and InMaintenance; projection-only moments (a projection the
    // controller has not caught up on yet) are in the same versions: the taint goes on first.
    expect(watch.servers.list().some((s) => s.status?.maintenance?.state === 'None')).toBe(true);
    expect(watch.untaintedRefusals).toEqual([]);
  });
});
