// Issue 29, behaviour 5: kill -9 of upstream's manager and of our controllers in the middle of a
// maintenance of a claimed server. Whatever is killed when, the server ends in one of two states:
// still held for its maintenance (parked by upstream, powered off, our taint and parked-by, the
// maintenance InMaintenance) or, once the maintenance is gone, unparked (Reserved, powered on, no
// park annotations, no taint): never both (unparked while InMaintenance) and never neither (parked or
// tainted with nobody holding it). The claim stays Bound to the same server throughout, and our typed
// fields (claim spec.maintenance, server status.maintenance) survive every restart.
//
// Rounds, one claimed server each, kills at three phases:
//   1. before park: upstream's manager down when the maintenance starts; ours killed once it asked for
//      the park; upstream parks with ours down.
//   2. parked: all of our controllers and upstream's manager killed together; the maintenance deleted
//      while every one of them is down.
//   3. during unpark: upstream killed the moment we ask for the unpark; ours killed the moment upstream
//      has let go (parked annotation gone), before our taint and parked-by are removed.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SETUP_TIMEOUT_MS, SHORT_LEASE_ARGS } from '../../../e2e/harness/dist.js';
import type { Server } from '../../../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../../../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import { freshNamespace, waitFor } from '../../../e2e/harness/env.js';
import { isNotFound } from '../../../lib/kube/errors.js';
import {
  MAINTENANCE_TAINT_KEY,
  OPERATION_ANNOTATION,
  PARKED_ANNOTATION,
  PARKED_BY_ANNOTATION,
} from '../../../contract/names.js';
import type { ControllerName } from '../lifecycle/harness.js';
import { machinePower, type Machine } from './fleet.js';
import { startUpstream, type Upstream } from './harness.js';
import { Observer } from './observe.js';
import { maintenanceOf, POOL_LABEL, waitForMaintenanceState } from './scenario.js';

const MACHINES = 3;
const OURS: readonly ControllerName[] = [
  'maintenance-controller',
  'approval-controller',
  'budget-controller',
];
/** How long an end state must hold, unchanged, to count as where the server ended. */
const SETTLE_MS = 3_000;

let up: Upstream;
let watch: Observer;
/** server -> its claim, bound before the rounds. */
const claimOf = new Map<string, ServerClaim>();
const bootRefOf = new Map<string, string | undefined>();

beforeAll(async () => {
  up = await startUpstream({
    machines: MACHINES,
    labels: () => ({ [POOL_LABEL]: 'crash' }),
    controllerArgs: [...SHORT_LEASE_ARGS],
  });
  watch = new Observer(up.servers, up.claims);
  await watch.start();
  await up.waitAvailable(240_000);
  const namespace = await freshNamespace(up.admin, 'crash');
  await Promise.all(
    up.machines.map(async (m, i) => {
      const c = await up.claims.create({
        metadata: { name: `crash-c${i}`, namespace },
        spec: {
          power: 'On',
          image: 'ghcr.io/ironcore-dev/os-images/gardenlinux:1877.0',
          serverRef: { name: m.server },
          // Automatic: the policy approves for an unconsumed claim; no owner has to be played.
          maintenance: { approvalMode: 'Automatic' },
        },
      });
      claimOf.set(m.server, c);
    }),
  );
  await waitFor(
    'every claim Bound and its machine powered on',
    async () => {
      for (const m of up.machines) {
        const s = await up.servers.get(m.server);
        if (s.status?.state !== 'Reserved' || (await machinePower(m)) !== 'On') return false;
        bootRefOf.set(m.server, s.spec.bootConfigurationRef?.name);
      }
      return true;
    },
    { timeoutMs: 90_000, intervalMs: 500 },
  );
}, SETUP_TIMEOUT_MS); // may include the image files' build (e2e/harness/dist.ts)

afterAll(async () => {
  await watch?.stop();
  await up?.stop();
}, 120_000);

type Verdict = 'held' | 'unparked' | 'both' | 'neither' | 'moving';

interface Snapshot {
  server: Server;
  maintenance: ServerMaintenance | undefined;
  power: string;
}

async function snapshot(machine: Machine, m: ServerMaintenance): Promise<Snapshot> {
  const [server, maintenance, power] = await Promise.all([
    up.servers.get(machine.server),
    up.maintenances.get(m.metadata.name!, m.metadata.namespace).catch((e: unknown) => {
      if (isNotFound(e)) return undefined;
      throw e;
    }),
    machinePower(machine),
  ]);
  return { server, maintenance, power };
}

/**
 * Where the server stands for maintenance `m` (call it once the server was parked or asked to be).
 * `both`: unparked and powered while the maintenance still runs, with no park request pending.
 * `neither`: the maintenance gone, yet the server not back (parked, off, tainted or marked parked-by
 * us) with no request pending: what must not last. `moving`: a park or unpark in progress.
 */
function verdict(snap: Snapshot, m: ServerMaintenance): Verdict {
  const { server, maintenance } = snap;
  const op = server.metadata.annotations?.[OPERATION_ANNOTATION];
  if (isRunning(maintenance)) {
    if (isBack(snap) && op !== 'park') return 'both';
    return isHeld(snap, m) ? 'held' : 'moving';
  }
  if (maintenance) return 'moving';
  if (isBack(snap) && !hasMarks(server) && server.status?.maintenance?.state === 'None') return 'unparked';
  return op ? 'moving' : 'neither';
}

const isRunning = (m: ServerMaintenance | undefined) =>
  m?.status?.state === 'InMaintenance' && !m.metadata.deletionTimestamp;

const isParkedNow = (s: Server) =>
  s.status?.state === 'Parked' || s.metadata.annotations?.[PARKED_ANNOTATION] === 'true';

/** Reserved, not parked, powered on: where upstream's unpark returns a claimed server. */
const isBack = ({ server, power }: Snapshot) =>
  server.status?.state === 'Reserved' && !isParkedNow(server) && power === 'On';

/** Our taint, our parked-by, or an operation request on the server. */
const hasMarks = (s: Server) =>
  (s.spec.taints ?? []).some((t) => t.key === MAINTENANCE_TAINT_KEY) ||
  Boolean(s.metadata.annotations?.[PARKED_BY_ANNOTATION] || s.metadata.annotations?.[OPERATION_ANNOTATION]);

/** Parked and off for `m`: our taint and parked-by name it, the projection says InMaintenance. */
function isHeld({ server, power }: Snapshot, m: ServerMaintenance): boolean {
  const taint = (server.spec.taints ?? []).find((t) => t.key === MAINTENANCE_TAINT_KEY);
  return (
    isParkedNow(server) &&
    power === 'Off' &&
    taint?.value === m.metadata.uid &&
    server.metadata.annotations?.[PARKED_BY_ANNOTATION] === m.metadata.uid &&
    server.status?.maintenance?.state === 'InMaintenance'
  );
}

/** Waits until the server is `want` for `m` and stays so for SETTLE_MS; fails at once on `both`. */
async function endsAs(machine: Machine, m: ServerMaintenance, want: 'held' | 'unparked'): Promise<Snapshot> {
  let last: Snapshot | undefined;
  let since = 0;
  const seen: Verdict[] = [];
  const described = () =>
    `seen ${seen.join(' -> ')}; last: state ${last?.server.status?.state}, power ${last?.power}, ` +
    `annotations ${JSON.stringify(last?.server.metadata.annotations ?? {})}, taints ` +
    `${JSON.stringify(last?.server.spec.taints ?? [])}, maintenance ${last?.maintenance?.status?.state ?? 'gone'}`;
  return waitFor(
    `${machine.server} ${want} for ${m.metadata.name}`,
    async () => {
      last = await snapshot(machine, m);
      const v = verdict(last, m);
      if (seen.at(-1) !== v) seen.push(v);
      if (v === 'both') throw new Error(`unparked while its maintenance runs; ${described()}`);
      if (v !== want) {
        since = 0;
        return undefined;
      }
      since ||= Date.now();
      return Date.now() - since >= SETTLE_MS ? last : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 250 },
  ).catch((e: unknown) => {
    throw new Error(`${(e as Error).message}; ${described()}`, { cause: e });
  });
}

/** The claim of `server` is Bound to it, has been since its bind, and keeps its typed spec.maintenance. */
async function claimHeld(server: string): Promise<void> {
  const c = claimOf.get(server)!;
  const now = await up.claims.get(c.metadata.name!, c.metadata.namespace);
  expect(now.status?.phase).toBe('Bound');
  expect(now.spec.serverRef?.name).toBe(server);
  expect(now.spec.maintenance).toEqual({ approvalMode: 'Automatic' });
  const phases = watch.phases.get(`${c.metadata.namespace}/${c.metadata.name}`)!;
  expect(phases.slice(phases.indexOf('Bound'))).toEqual(['Bound']);
  expect(watch.boundServers().get(server)).toEqual([`${c.metadata.namespace}/${c.metadata.name}`]);
}

/** Unparked as before the maintenance: the claim's boot configuration is still the server's. */
function restored(s: Snapshot, server: string): void {
  expect(s.server.spec.serverClaimRef?.name).toBe(claimOf.get(server)!.metadata.name);
  expect(s.server.spec.bootConfigurationRef?.name).toBe(bootRefOf.get(server));
}

const annotation = (s: Server, key: string) => s.metadata.annotations?.[key];

function serverShows(server: string, what: string, pred: (s: Server) => boolean): Promise<Server> {
  return waitFor(
    `${server}: ${what}`,
    () => {
      const s = watch.servers.getByName(server);
      return s && pred(s) ? s : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 20 },
  );
}

describe('kill -9 of upstream metal-operator and of our controllers mid-maintenance', () => {
  it('before park: upstream down as the maintenance starts, ours killed once it asked for the park', async () => {
    const machine = up.machines[0]!;
    await up.killManager();
    const m = await maintenanceOf(up, 'crash-before-park', machine.server);
    await waitForMaintenanceState(up, m, 'InMaintenance', 60_000);
    await serverShows(
      machine.server,
      'park requested',
      (s) => annotation(s, OPERATION_ANNOTATION) === 'park',
    );
    await up.kill('maintenance-controller');
    // Nobody has parked it yet: the maintenance runs on a server that is still Reserved and on.
    expect((await up.servers.get(machine.server)).status?.state).toBe('Reserved');
    await up.startManager();
    await serverShows(machine.server, 'parked by upstream', (s) => s.status?.state === 'Parked');
    await up.start('maintenance-controller');
    await endsAs(machine, m, 'held');
    await claimHeld(machine.server);

    await up.maintenances.delete(m.metadata.name!, { namespace: m.metadata.namespace });
    restored(await endsAs(machine, m, 'unparked'), machine.server);
    await claimHeld(machine.server);
  }, 180_000);

  it('parked: every controller of ours and upstream killed together, the maintenance deleted while all are down', async () => {
    const machine = up.machines[1]!;
    const m = await maintenanceOf(up, 'crash-parked', machine.server);
    await serverShows(machine.server, 'parked by upstream', (s) => s.status?.state === 'Parked');
    await endsAs(machine, m, 'held');
    await Promise.all([up.killManager(), ...OURS.map((c) => up.kill(c))]);
    // Ours first, upstream still down: nothing lets go of a server whose maintenance runs.
    await Promise.all(OURS.map((c) => up.start(c)));
    await endsAs(machine, m, 'held');
    await up.startManager();
    await endsAs(machine, m, 'held');
    await claimHeld(machine.server);

    await Promise.all([up.killManager(), ...OURS.map((c) => up.kill(c))]);
    await up.maintenances.delete(m.metadata.name!, { namespace: m.metadata.namespace });
    // Deleted, but our finalizer keeps it until the server is back: still held, nobody running.
    const gone = await snapshot(machine, m);
    expect(gone.maintenance?.metadata.deletionTimestamp).toBeDefined();
    expect(gone.server.status?.state).toBe('Parked');
    await up.startManager();
    await Promise.all(OURS.map((c) => up.start(c)));
    restored(await endsAs(machine, m, 'unparked'), machine.server);
    await claimHeld(machine.server);
  }, 180_000);

  it('during unpark: upstream killed as we ask for it, ours killed once upstream has let go', async () => {
    const machine = up.machines[2]!;
    const m = await maintenanceOf(up, 'crash-unpark', machine.server);
    await serverShows(machine.server, 'parked by upstream', (s) => s.status?.state === 'Parked');
    await endsAs(machine, m, 'held');
    await up.maintenances.delete(m.metadata.name!, { namespace: m.metadata.namespace });
    await serverShows(
      machine.server,
      'unpark requested',
      (s) => annotation(s, OPERATION_ANNOTATION) === 'unpark',
    );
    await up.killManager();
    await up.startManager();
    await serverShows(machine.server, 'upstream let go', (s) => annotation(s, PARKED_ANNOTATION) !== 'true');
    await up.kill('maintenance-controller');
    await up.start('maintenance-controller');
    restored(await endsAs(machine, m, 'unparked'), machine.server);
    await claimHeld(machine.server);
  }, 180_000);
});

describe('through every kill', () => {
  it('no Server version projected Approved or InMaintenance lacked our NoBind taint', () => {
    expect(watch.untaintedRefusals).toEqual([]);
  });
});
