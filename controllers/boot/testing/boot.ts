// Test helpers for the boot decision: objects, contexts, and a fake BMC that applies decided
// actions to an observation, so a whole boot can be driven step by step without I/O.
import type { ServerMaintenance } from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import type { Server } from '../../../api/metal/v1alpha1/server.js';
import { decide } from '../decide.js';
import type { BmcObservation, BootAction, BootContext, BootWorld, Decision, ServerBoot } from '../model.js';

export const T0 = Date.parse('2026-08-20T22:00:00Z');
export const IMAGE = 'https://images.example.com/maintenance-os/v3.iso';

export function ctxAt(ms: number, extra: Partial<BootContext> = {}): BootContext {
  return {
    now: new Date(ms),
    defaultPhaseTimeoutMs: 600_000,
    pollMs: 1_000,
    pinPollMs: 5_000,
    settleMs: 30_000,
    retryMs: 10_000,
    ...extra,
  };
}

export function makeBoot(spec: Partial<ServerBoot['spec']> = {}, status?: ServerBoot['status']): ServerBoot {
  return {
    metadata: {
      name: 'srv1-boot',
      namespace: 'ops',
      uid: 'boot-uid',
      generation: 1,
      finalizers: ['maintenance.metal.ironcore.dev/serverboot-restore'],
    },
    spec: { serverRef: { name: 'srv1' }, method: 'VirtualMedia', image: IMAGE, ...spec },
    ...(status ? { status } : {}),
  };
}

export function makeServer(claimed = false): Server {
  return {
    metadata: { name: 'srv1' },
    spec: {
      systemUUID: 'uuid-1',
      bmcRef: { name: 'bmc1' },
      ...(claimed ? { serverClaimRef: { namespace: 'tenant', name: 'claim' } } : {}),
    },
  };
}

export function makeMaintenance(
  state: string,
  extra: Partial<ServerMaintenance['metadata']> = {},
): ServerMaintenance {
  return {
    metadata: { name: 'sm1', namespace: 'ops', uid: 'sm-uid', ...extra },
    spec: { serverRef: { name: 'srv1' } },
    status: { state },
  };
}

export function makeWorld(extra: Partial<BootWorld> = {}): BootWorld {
  return {
    server: makeServer(),
    access: {
      ok: true,
      access: { endpoint: 'https://10.0.0.1:443', credentials: { username: 'u', password: 'p' }, key: 'k' },
    },
    ...extra,
  };
}

/** A simulated BMC: power transitions take `restartMs`; a Once override is consumed at boot. */
export class FakeBmc {
  power = 'On';
  override: BmcObservation['override'] = { enabled: 'Disabled', target: 'None', mode: 'UEFI' };
  media: { device: string; image: string | null; inserted: boolean } | null = {
    device: '/redfish/v1/Systems/1/VirtualMedia/CD1',
    image: null,
    inserted: false,
  };
  continuous = true;
  aliases: Record<string, readonly string[]> = {};
  boots: { at: number; device: string; media: string | null }[] = [];
  /** Pending power events: [at, state]. */
  #timeline: [number, string][] = [];
  readonly restartMs = 4_000;
  applied: BootAction[] = [];

  observe(now: number): BmcObservation {
    this.advance(now);
    return {
      powerState: this.power,
      override: { ...this.override },
      targetAliases: this.aliases,
      continuous: this.continuous,
      media: this.media && { ...this.media },
    };
  }

  advance(now: number): void {
    while (this.#timeline.length > 0 && this.#timeline[0]![0] <= now) {
      const [at, state] = this.#timeline.shift()!;
      this.power = state;
      if (state === 'On') this.#booted(at);
    }
  }

  /** A reboot the BMC starts by itself (a firmware update). */
  reboot(now: number): void {
    this.power = 'PoweringOff';
    this.#timeline = [
      [now + this.restartMs / 2, 'PoweringOn'],
      [now + this.restartMs, 'On'],
    ];
  }

  #booted(at: number): void {
    const armed = this.override.enabled !== 'Disabled' && this.override.target !== 'None';
    this.boots.push({
      at,
      device: armed ? this.override.target : 'Hdd',
      media: this.media?.inserted ? this.media.image : null,
    });
    if (this.override.enabled === 'Once')
      this.override = { ...this.override, enabled: 'Disabled', target: 'None' };
  }

  apply(action: BootAction, now: number): void {
    this.applied.push(action);
    switch (action.kind) {
      case 'insertMedia':
        this.media = { device: this.media!.device, image: action.image, inserted: true };
        return;
      case 'ejectMedia':
        this.media = { device: this.media!.device, image: null, inserted: false };
        return;
      case 'setOverride': {
        const r = action.request;
        const target = this.aliases[r.target]?.[0] ?? r.target;
        const enabled = r.enabled === 'Continuous' && !this.continuous ? 'Once' : r.enabled;
        this.override = {
          enabled,
          target,
          mode: r.mode ?? 'UEFI',
          ...(r.httpBootUri ? { httpBootUri: r.httpBootUri } : {}),
        };
        return;
      }
      case 'restoreOverride':
        this.override = { ...action.previous };
        return;
      case 'reset':
        this.reboot(now);
        return;
      default:
    }
  }
}

export interface Step {
  boot: ServerBoot;
  decision: Extract<Decision, { kind: 'act' }>;
  observed: boolean;
}

/**
 * One reconcile against the fake BMC: decide (observing if asked), apply the actions, and write
 * the status as the reconciler would (only when every action succeeded).
 */
export function step(
  boot: ServerBoot,
  world: BootWorld,
  bmc: FakeBmc,
  now: number,
  ctx: Partial<BootContext> = {},
  fail?: (a: BootAction) => Error | undefined,
): Step {
  const c = ctxAt(now, ctx);
  let decision = decide(boot, world, c);
  let observed = false;
  if (decision.kind === 'observe') {
    observed = true;
    decision = decide(boot, { ...world, bmc: { ok: true, observation: bmc.observe(now) } }, c);
  }
  if (decision.kind !== 'act') throw new Error('asked to observe twice');
  for (const a of decision.actions) {
    const err = fail?.(a);
    if (err) throw err;
    bmc.apply(a, now);
  }
  const next: ServerBoot = decision.status ? { ...boot, status: decision.status } : boot;
  return { boot: next, decision, observed };
}

/** Steps until `until(boot)` holds, advancing the clock by each requeue (bounded). */
export function drive(
  boot: ServerBoot,
  world: BootWorld,
  bmc: FakeBmc,
  start: number,
  until: (b: ServerBoot) => boolean,
  ctx: Partial<BootContext> = {},
): { boot: ServerBoot; now: number; steps: Step[] } {
  let now = start;
  let current = boot;
  const steps: Step[] = [];
  for (let i = 0; i < 200 && !until(current); i++) {
    const s = step(current, world, bmc, now, ctx);
    steps.push(s);
    current = s.boot;
    now += Math.max(1, Math.min(s.decision.requeueAfterMs ?? 1_000, 60_000));
  }
  if (!until(current)) throw new Error(`did not get there: ${JSON.stringify(current.status)}`);
  return { boot: current, now, steps };
}

/** A condition of the boot's status by type. */
export const cond = (b: ServerBoot, type: string) => b.status?.conditions?.find((c) => c.type === type);
/** A predicate for drive(): the boot reached phase `p`. */
export const phase = (p: string) => (b: ServerBoot) => b.status?.phase === p;
/** Every Event reason the steps emitted, in order. */
export const reasons = (steps: { decision: { events: { reason: string }[] } }[]) =>
  steps.flatMap((s) => s.decision.events.map((e) => e.reason));

/** A boot driven to Running on `bmc` (VirtualMedia unless `spec` says otherwise). */
export function toRunning(bmc: FakeBmc, spec: Partial<ServerBoot['spec']> = {}, world = makeWorld()) {
  return drive(makeBoot(spec), world, bmc, T0, phase('Running'));
}
