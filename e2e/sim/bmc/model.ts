// SIMULATOR state and behaviour of one simulated BMC, independent of HTTP. Time is lazy: every
// access first runs the events that are due (power transitions, boots, task completion, the end
// of a BMC outage), so a thousand idle BMCs cost no timers.
import { FaultSet } from './faults.js';
import type { EtagMode, SimProfile } from './profiles.js';

export interface SimTiming {
  /** Off → On. */
  powerOnMs: number;
  /** ForceOff. */
  forceOffMs: number;
  /** GracefulShutdown. */
  gracefulShutdownMs: number;
  /** Off phase of a restart before the system is On again. */
  restartMs: number;
  /** SimpleUpdate from start to a terminal state. */
  updateMs: number;
  /** BMC unreachable after Manager.Reset. */
  managerResetOutageMs: number;
  /** Retry-After (seconds) on a running task monitor. */
  taskRetryAfterS: number;
}

export const DEFAULT_TIMING: SimTiming = {
  powerOnMs: 300,
  forceOffMs: 100,
  gracefulShutdownMs: 300,
  restartMs: 300,
  updateMs: 500,
  managerResetOutageMs: 1_000,
  taskRetryAfterS: 0,
};

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
}

export interface SimTask {
  id: string;
  kind: 'update' | 'job';
  startedAt: number;
  durationMs: number;
  outcome: 'success' | 'failure' | 'stuck';
  state: 'New' | 'Scheduled' | 'Running' | 'Completed' | 'Exception';
  percent: number;
  target: 'BIOS' | 'BMC';
  image: string;
  messages: { MessageId: string; Message: string }[];
}

export interface MediaDevice {
  id: string;
  types: string[];
  image: string | null;
  inserted: boolean;
  writeProtected: boolean;
}

export interface Counters {
  requests: number;
  logins: number;
  logouts: number;
  authFailures: number;
  resets: Record<string, number>;
  boots: number;
  bootLog: BootRecord[];
  bootPatches: number;
  biosPatches: number;
  biosApplied: Record<string, unknown>[];
  managerPatches: number;
  managerApplied: Record<string, unknown>[];
  managerResets: number;
  mediaInserts: number;
  mediaInsertRejects: number;
  mediaEjects: number;
  updatesStarted: number;
  updatesApplied: { target: string; image: string }[];
  updatesFailed: number;
  ifMatchOnActions: number;
  preconditionFailed: number;
  preconditionRequired: number;
  faultsHit: number;
}

function newCounters(): Counters {
  return {
    requests: 0,
    logins: 0,
    logouts: 0,
    authFailures: 0,
    resets: {},
    boots: 0,
    bootLog: [],
    bootPatches: 0,
    biosPatches: 0,
    biosApplied: [],
    managerPatches: 0,
    managerApplied: [],
    managerResets: 0,
    mediaInserts: 0,
    mediaInsertRejects: 0,
    mediaEjects: 0,
    updatesStarted: 0,
    updatesApplied: [],
    updatesFailed: 0,
    ifMatchOnActions: 0,
    preconditionFailed: 0,
    preconditionRequired: 0,
    faultsHit: 0,
  };
}

const INITIAL_BIOS: Record<string, unknown> = {
  BootMode: 'Uefi',
  ProcTurboMode: 'Enabled',
  SriovGlobalEnable: 'Disabled',
  NumaNodes: 2,
  AdminPhone: '',
};

const INITIAL_MANAGER_ATTRS: Record<string, unknown> = {
  'NTP.1.Server': 'pool.ntp.org',
  'Syslog.1.Enable': 'Disabled',
  'Session.1.Timeout': 1800,
};

interface Event {
  at: number;
  run: () => void;
}

export class SimBmc {
  readonly index: number;
  readonly profile: SimProfile;
  readonly etagMode: EtagMode;
  readonly timing: SimTiming;
  readonly faults = new FaultSet();
  readonly #now: () => number;
  counters = newCounters();

  power: PowerState = 'On';
  /** Power state after the running transition. */
  #powerTarget: 'On' | 'Off' | undefined;
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
  managerAttrs = { current: { ...INITIAL_MANAGER_ATTRS }, pending: {} as Record<string, unknown> };
  media: MediaDevice[] = [
    { id: 'CD1', types: ['CD', 'DVD'], image: null, inserted: false, writeProtected: true },
    { id: 'USB1', types: ['USBStick'], image: null, inserted: false, writeProtected: true },
  ];
  firmware = { BIOS: '1.0.0', BMC: '5.10.0', NIC: '22.31.6' };
  tasks = new Map<string, SimTask>();
  sessions = new Map<string, string>();
  outageUntil = 0;
  /** The host never comes back on (a board stuck in POST, a dead PSU): power-ons end in Off. */
  hostStuck = false;
  #versions = new Map<string, number>();
  #events: Event[] = [];
  #seq = 0;
  /** Bumped when a transition is superseded; its pending events then do nothing. */
  #generation = 0;

  constructor(index: number, profile: SimProfile, etagMode: EtagMode, timing: SimTiming, now: () => number) {
    this.index = index;
    this.profile = profile;
    this.etagMode = etagMode;
    this.timing = timing;
    this.#now = now;
  }

  now(): number {
    return this.#now();
  }

  nextId(): string {
    this.#seq += 1;
    return String(this.#seq);
  }

  // --- time ---------------------------------------------------------------------------------

  schedule(inMs: number, run: () => void): void {
    this.#events.push({ at: this.now() + inMs, run });
    this.#events.sort((a, b) => a.at - b.at);
  }

  /** Runs every event that is due, in order (events may schedule more). */
  advance(): void {
    const now = this.now();
    while (this.#events.length > 0 && this.#events[0]!.at <= now) this.#events.shift()!.run();
  }

  get inOutage(): boolean {
    return this.now() < this.outageUntil;
  }

  // --- ETags ---------------------------------------------------------------------------------

  version(key: string): number {
    return this.#versions.get(key) ?? 1;
  }

  bump(...keys: string[]): void {
    for (const key of keys) this.#versions.set(key, this.version(key) + 1);
  }

  etag(key: string): string | undefined {
    return this.etagMode === 'none' ? undefined : `"${key}-${this.version(key)}"`;
  }

  // --- power and boot ------------------------------------------------------------------------

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
    this.counters.resets[type] = (this.counters.resets[type] ?? 0) + 1;
    const t = this.timing;
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
    this.#restart('bmc');
  }

  #transition(to: 'On' | 'Off', ms: number, cause: BootRecord['cause']): void {
    this.#powerTarget = to;
    this.power = to === 'On' ? 'PoweringOn' : 'PoweringOff';
    this.bump('system');
    const generation = this.#generation;
    this.schedule(ms, () => {
      if (generation !== this.#generation) return;
      this.#powerTarget = undefined;
      this.bump('system');
      if (to === 'On') this.#cameUp(cause);
      else this.power = 'Off';
    });
  }

  #restart(cause: BootRecord['cause']): void {
    this.#powerTarget = 'On';
    this.power = 'PoweringOff';
    this.bump('system');
    const generation = this.#generation;
    this.schedule(this.timing.restartMs / 2, () => {
      if (generation !== this.#generation) return;
      this.power = 'PoweringOn';
      this.bump('system');
    });
    this.schedule(this.timing.restartMs, () => {
      if (generation !== this.#generation) return;
      this.#powerTarget = undefined;
      this.bump('system');
      this.#cameUp(cause);
    });
  }

  /** End of a power-on: the host boots, unless it is stuck and falls back to Off. */
  #cameUp(cause: BootRecord['cause']): void {
    if (this.hostStuck) {
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
    this.counters.boots += 1;
    this.counters.bootLog.push({
      seq: this.counters.boots,
      at: this.now(),
      device,
      ...(device === 'UefiHttp' && this.boot.httpBootUri ? { httpBootUri: this.boot.httpBootUri } : {}),
      ...(cd?.inserted && cd.image ? { media: cd.image } : {}),
      cause,
    });
    if (this.boot.enabled === 'Once') {
      this.boot.enabled = 'Disabled';
      this.boot.target = 'None';
      this.bump('system');
    }
    this.#applyPendingBios();
  }

  #applyPendingBios(): void {
    if (Object.keys(this.bios.pending).length === 0) return;
    // Dell: staged values without a scheduled job are never applied.
    if (this.profile.quirks.dellJobs && !this.bios.jobId) return;
    Object.assign(this.bios.current, this.bios.pending);
    this.counters.biosApplied.push({ ...this.bios.pending });
    this.bios.pending = {};
    if (this.bios.jobId) {
      const job = this.tasks.get(this.bios.jobId);
      if (job) Object.assign(job, { state: 'Completed', percent: 100 });
      this.bios.jobId = undefined;
    }
    this.bump('bios', 'biosSettings');
  }

  // --- manager -------------------------------------------------------------------------------

  managerReset(type: string): void {
    this.counters.resets[`Manager.${type}`] = (this.counters.resets[`Manager.${type}`] ?? 0) + 1;
    this.counters.managerResets += 1;
    this.outageUntil = this.now() + this.timing.managerResetOutageMs;
    this.sessions.clear();
    this.schedule(this.timing.managerResetOutageMs, () => {
      if (Object.keys(this.managerAttrs.pending).length === 0) return;
      Object.assign(this.managerAttrs.current, this.managerAttrs.pending);
      this.counters.managerApplied.push({ ...this.managerAttrs.pending });
      this.managerAttrs.pending = {};
      this.bump('manager', 'managerSettings');
    });
  }

  applyManagerAttrsNow(attrs: Record<string, unknown>): void {
    Object.assign(this.managerAttrs.current, attrs);
    this.counters.managerApplied.push({ ...attrs });
    this.bump('manager', 'managerSettings');
  }

  // --- tasks ---------------------------------------------------------------------------------

  startUpdate(image: string, target: 'BIOS' | 'BMC'): SimTask {
    const armed = this.faults.takeTaskFault();
    const outcome =
      armed === 'taskStuck'
        ? 'stuck'
        : armed === 'taskFail' || image.includes('fail')
          ? 'failure'
          : 'success';
    const task: SimTask = {
      id: this.nextId(),
      kind: 'update',
      startedAt: this.now(),
      durationMs: this.timing.updateMs,
      outcome,
      state: 'New',
      percent: 0,
      target,
      image,
      messages: [],
    };
    this.tasks.set(task.id, task);
    this.counters.updatesStarted += 1;
    if (outcome !== 'stuck') this.schedule(task.durationMs, () => this.#finishUpdate(task));
    return task;
  }

  /** Refreshes the progress of a running task from the clock. */
  progress(task: SimTask): SimTask {
    if (task.kind !== 'update' || task.state === 'Completed' || task.state === 'Exception') return task;
    const elapsed = this.now() - task.startedAt;
    const fraction = task.outcome === 'stuck' ? 0.5 : Math.min(elapsed / task.durationMs, 0.99);
    task.state = elapsed > 0 ? 'Running' : 'New';
    task.percent = Math.floor(fraction * 100);
    return task;
  }

  #finishUpdate(task: SimTask): void {
    if (task.outcome === 'failure') {
      Object.assign(task, { state: 'Exception', percent: 99 });
      task.messages.push({ MessageId: 'Update.1.0.ApplyFailed', Message: `Applying ${task.image} failed` });
      this.counters.updatesFailed += 1;
      return;
    }
    Object.assign(task, { state: 'Completed', percent: 100 });
    task.messages.push({ MessageId: 'Update.1.0.UpdateSuccessful', Message: 'The update completed' });
    this.firmware[task.target] = task.image.split('/').pop() ?? task.image;
    this.counters.updatesApplied.push({ target: task.target, image: task.image });
    this.bump('system', 'manager');
  }

  scheduleBiosJob(): SimTask {
    const job: SimTask = {
      id: `JID_${this.nextId().padStart(6, '0')}`,
      kind: 'job',
      startedAt: this.now(),
      durationMs: 0,
      outcome: 'success',
      state: 'Scheduled',
      percent: 0,
      target: 'BIOS',
      image: '',
      messages: [],
    };
    this.tasks.set(job.id, job);
    this.bios.jobId = job.id;
    return job;
  }
}
