// SIMULATOR one server (ComputerSystem) behind a simulated BMC: power transitions, boots, the
// boot override, BIOS attributes and version, virtual media, and the server's exactly-once ledger.
// Several hosts may share one BMC (a chassis manager, a multi-node enclosure); the BMC owns the
// clock, the ETag versions and the aggregate counters, the host its own state.
import { isDeepStrictEqual } from 'node:util';
import type { SimBmc } from './model.js';

export type PowerState = 'On' | 'Off' | 'PoweringOn' | 'PoweringOff';

export interface BootRecord {
  seq: number;
  at: number;
  /** Device booted: the override target, or Hdd. */
  device: string;
  httpBootUri?: string;
  /** Image in the virtual CD at boot time. */
  media?: string;
  cause: 'reset' | 'bmc';
  /** Id of the System that booted (several may share one BMC). */
  system: string;
}

export interface MediaDevice {
  id: string;
  types: string[];
  image: string | null;
  inserted: boolean;
  writeProtected: boolean;
}

/** What happened to one server, counted once per effect: the proof of "exactly once". */
export interface HostLedger {
  /** SimpleUpdate tasks started against this server's BIOS. */
  biosUpdatesStarted: number;
  /** BIOS images that became active (after the flash and the reboot that activates it). */
  biosFlashes: number;
  /** Accepted PATCHes of BIOS attributes. */
  biosSettingsWrites: number;
  /** Pending BIOS attribute sets that were applied by a boot. */
  biosSettingsApplied: number;
  /** PATCHes that only put current values back over pending ones (a discard). */
  biosSettingsDiscards: number;
  /** ComputerSystem.Reset requests accepted, and reboots the BMC started by itself. */
  resets: number;
  bmcReboots: number;
}

const INITIAL_BIOS: Record<string, unknown> = {
  BootMode: 'Uefi',
  ProcTurboMode: 'Enabled',
  SriovGlobalEnable: 'Disabled',
  NumaNodes: 2,
  AdminPhone: '',
};

/**
 * Stages `attrs` in `pending`: a value equal to the current one removes what was pending for it
 * (the difference is gone, as on real BMCs). True when that is all the PATCH did: a discard.
 */
export function stageAttributes(
  pending: Record<string, unknown>,
  current: Record<string, unknown>,
  attrs: Record<string, unknown>,
): boolean {
  let discardOnly = true;
  for (const [k, v] of Object.entries(attrs)) {
    if (isDeepStrictEqual(current[k], v)) delete pending[k];
    else {
      pending[k] = v;
      discardOnly = false;
    }
  }
  return discardOnly;
}

export function newHostLedger(): HostLedger {
  return {
    biosUpdatesStarted: 0,
    biosFlashes: 0,
    biosSettingsWrites: 0,
    biosSettingsApplied: 0,
    biosSettingsDiscards: 0,
    resets: 0,
    bmcReboots: 0,
  };
}

export class SimHost {
  readonly bmc: SimBmc;
  /** Position behind its BMC (0 = the first System). */
  readonly slot: number;
  /** The System's Id in Redfish. */
  readonly systemId: string;
  ledger = newHostLedger();
  power: PowerState = 'On';
  /** Power state after the running transition. */
  #powerTarget: 'On' | 'Off' | undefined;
  /** Bumped when a transition is superseded; its pending events then do nothing. */
  #generation = 0;
  boot = {
    enabled: 'Disabled',
    target: 'None',
    mode: 'UEFI' as 'UEFI' | 'Legacy',
    httpBootUri: null as string | null,
  };
  bios = {
    current: { ...INITIAL_BIOS },
    pending: {} as Record<string, unknown>,
    jobId: undefined as string | undefined,
  };
  biosVersion = '1.0.0';
  /** A flashed BIOS image that becomes active at the next boot. */
  stagedBiosVersion: string | undefined;
  media: MediaDevice[] = [
    { id: 'CD1', types: ['CD', 'DVD'], image: null, inserted: false, writeProtected: true },
    { id: 'USB1', types: ['USBStick'], image: null, inserted: false, writeProtected: true },
  ];
  /** The host never comes back on (a board stuck in POST, a dead PSU): power-ons end in Off. */
  stuck = false;

  constructor(bmc: SimBmc, slot: number, systemId: string) {
    this.bmc = bmc;
    this.slot = slot;
    this.systemId = systemId;
  }

  /** ETag key of one of this host's resources (the first host keeps the bare names). */
  key(name: string): string {
    return this.slot === 0 ? name : `${name}#${this.slot}`;
  }

  get transitioning(): boolean {
    return this.#powerTarget !== undefined;
  }

  /** Applies a ComputerSystem.Reset. Returns false when another transition is running. */
  reset(type: string): boolean {
    // Only ForceOff may cut into a running transition (a shutdown that takes too long).
    const forcing = type === 'ForceOff' && this.#powerTarget === 'Off';
    if (this.transitioning && !forcing) return false;
    if (forcing) {
      this.#generation += 1;
      this.power = 'On';
    }
    const resets = this.bmc.counters.resets;
    resets[type] = (resets[type] ?? 0) + 1;
    this.ledger.resets += 1;
    const t = this.bmc.timing;
    const off: Record<string, number> = { ForceOff: t.forceOffMs, GracefulShutdown: t.gracefulShutdownMs };
    if (type === 'On' || type === 'ForceOn') {
      if (this.power === 'Off') this.#transition('On', t.powerOnMs, 'reset');
    } else if (type in off) {
      if (this.power === 'On') this.#transition('Off', off[type]!, 'reset');
    } else if (type === 'PushPowerButton') {
      this.#transition(this.power === 'On' ? 'Off' : 'On', t.powerOnMs, 'reset');
    } else {
      this.#restart('reset');
    }
    return true;
  }

  /** A reboot the BMC starts by itself (firmware activation, watchdog, …). */
  bmcInitiatedReboot(): void {
    this.#generation += 1;
    this.#powerTarget = undefined;
    this.ledger.bmcReboots += 1;
    this.#restart('bmc');
  }

  #transition(to: 'On' | 'Off', ms: number, cause: BootRecord['cause']): void {
    this.#powerTarget = to;
    this.power = to === 'On' ? 'PoweringOn' : 'PoweringOff';
    this.bmc.bump(this.key('system'));
    const generation = this.#generation;
    this.bmc.schedule(ms, () => {
      if (generation !== this.#generation) return;
      this.#powerTarget = undefined;
      this.bmc.bump(this.key('system'));
      if (to === 'On') this.#cameUp(cause);
      else this.power = 'Off';
    });
  }

  #restart(cause: BootRecord['cause']): void {
    this.#powerTarget = 'On';
    this.power = 'PoweringOff';
    this.bmc.bump(this.key('system'));
    const generation = this.#generation;
    const ms = this.bmc.timing.restartMs;
    this.bmc.schedule(ms / 2, () => {
      if (generation !== this.#generation) return;
      this.power = 'PoweringOn';
      this.bmc.bump(this.key('system'));
    });
    this.bmc.schedule(ms, () => {
      if (generation !== this.#generation) return;
      this.#powerTarget = undefined;
      this.bmc.bump(this.key('system'));
      this.#cameUp(cause);
    });
  }

  /** End of a power-on: the host boots, unless it is stuck and falls back to Off. */
  #cameUp(cause: BootRecord['cause']): void {
    if (this.stuck) {
      this.power = 'Off';
      return;
    }
    this.power = 'On';
    this.#booted(cause);
  }

  #booted(cause: BootRecord['cause']): void {
    const overridden = this.boot.enabled !== 'Disabled' && this.boot.target !== 'None';
    const device = overridden ? this.boot.target : 'Hdd';
    const cd = this.media.find((m) => m.types.includes('CD'));
    const counters = this.bmc.counters;
    counters.boots += 1;
    counters.bootLog.push({
      seq: counters.boots,
      at: this.bmc.now(),
      device,
      ...(device === 'UefiHttp' && this.boot.httpBootUri ? { httpBootUri: this.boot.httpBootUri } : {}),
      ...(cd?.inserted && cd.image ? { media: cd.image } : {}),
      cause,
      system: this.systemId,
    });
    if (this.boot.enabled === 'Once') {
      this.boot.enabled = 'Disabled';
      this.boot.target = 'None';
      this.bmc.bump(this.key('system'));
    }
    this.#activateBios();
    this.#applyPendingBios();
  }

  #activateBios(): void {
    if (this.stagedBiosVersion === undefined) return;
    this.biosVersion = this.stagedBiosVersion;
    this.stagedBiosVersion = undefined;
    this.ledger.biosFlashes += 1;
    this.bmc.bump(this.key('system'));
  }

  #applyPendingBios(): void {
    if (Object.keys(this.bios.pending).length === 0) return;
    // Dell: staged values without a scheduled job are never applied.
    if (this.bmc.profile.quirks.dellJobs && !this.bios.jobId) return;
    Object.assign(this.bios.current, this.bios.pending);
    this.bmc.counters.biosApplied.push({ ...this.bios.pending });
    this.ledger.biosSettingsApplied += 1;
    this.bios.pending = {};
    if (this.bios.jobId) {
      const job = this.bmc.tasks.get(this.bios.jobId);
      if (job) Object.assign(job, { state: 'Completed', percent: 100 });
      this.bios.jobId = undefined;
    }
    this.bmc.bump(this.key('bios'), this.key('biosSettings'));
  }
}

/** Id of the System in `slot`: the profile's id, then the next numbers (`1`, `2`, … or `Self2`). */
export function systemIdFor(first: string, slot: number): string {
  if (slot === 0) return first;
  const m = /^(.*?)(\d+)$/.exec(first);
  return m ? `${m[1]}${Number(m[2]) + slot}` : `${first}${slot + 1}`;
}
