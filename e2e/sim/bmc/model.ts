// SIMULATOR state and behaviour of one simulated BMC, independent of HTTP. Time is lazy: every
// access first runs the events that are due (power transitions, boots, task completion, the end
// of a BMC outage), so a thousand idle BMCs cost no timers.
import { FaultSet } from './faults.js';
import { SimHost, systemIdFor, type BootRecord, type MediaDevice, type PowerState } from './host.js';
import type { EtagMode, SimProfile } from './profiles.js';

export type { BootRecord, MediaDevice, PowerState } from './host.js';
export { SimHost } from './host.js';

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

export interface SimTask {
  id: string;
  kind: 'update' | 'job';
  startedAt: number;
  durationMs: number;
  outcome: 'success' | 'failure' | 'stuck';
  state: 'New' | 'Scheduled' | 'Running' | 'Completed' | 'Exception';
  percent: number;
  target: 'BIOS' | 'BMC';
  /** Host whose BIOS is flashed (BIOS tasks). */
  host?: SimHost;
  image: string;
  messages: { MessageId: string; Message: string }[];
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

const INITIAL_MANAGER_ATTRS: Record<string, unknown> = {
  'NTP.1.Server': 'pool.ntp.org',
  'Syslog.1.Enable': 'Disabled',
  'Session.1.Timeout': 1800,
  // Read-only in the Dell profile's ManagerAttributeRegistry: a PATCH naming it is refused.
  'Info.1.Product': 'Simulated Remote Access Controller',
};

/** What happened to the BMC itself, counted once per effect (see HostLedger for the servers). */
export interface BmcLedger {
  bmcUpdatesStarted: number;
  /** BMC images that became active (after the BMC restarted into them). */
  bmcFlashes: number;
  /** Accepted PATCHes of BMC (Manager) attributes. */
  bmcSettingsWrites: number;
  managerResets: number;
}

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
  ledger: BmcLedger = { bmcUpdatesStarted: 0, bmcFlashes: 0, bmcSettingsWrites: 0, managerResets: 0 };
  /** The servers behind this BMC; `hosts[0]` is the one the single-system accessors below mean. */
  readonly hosts: SimHost[];
  managerAttrs = { current: { ...INITIAL_MANAGER_ATTRS }, pending: {} as Record<string, unknown> };
  firmware = { BMC: '5.10.0', NIC: '22.31.6' };
  tasks = new Map<string, SimTask>();
  sessions = new Map<string, string>();
  outageUntil = 0;
  #versions = new Map<string, number>();
  #events: Event[] = [];
  #seq = 0;

  constructor(
    index: number,
    profile: SimProfile,
    etagMode: EtagMode,
    timing: SimTiming,
    now: () => number,
    systems = 1,
  ) {
    this.index = index;
    this.profile = profile;
    this.etagMode = etagMode;
    this.timing = timing;
    this.#now = now;
    this.hosts = Array.from(
      { length: Math.max(1, systems) },
      (_, k) => new SimHost(this, k, systemIdFor(profile.systemId, k)),
    );
  }

  now(): number {
    return this.#now();
  }

  nextId(): string {
    this.#seq += 1;
    return String(this.#seq);
  }

  host(systemId: string): SimHost | undefined {
    return this.hosts.find((h) => h.systemId === systemId);
  }

  // --- the first host, for single-system BMCs ------------------------------------------------

  get power(): PowerState {
    return this.hosts[0]!.power;
  }
  set power(state: PowerState) {
    this.hosts[0]!.power = state;
  }
  get boot(): SimHost['boot'] {
    return this.hosts[0]!.boot;
  }
  get bios(): SimHost['bios'] {
    return this.hosts[0]!.bios;
  }
  get media(): MediaDevice[] {
    return this.hosts[0]!.media;
  }
  get hostStuck(): boolean {
    return this.hosts[0]!.stuck;
  }
  set hostStuck(stuck: boolean) {
    this.hosts[0]!.stuck = stuck;
  }
  get transitioning(): boolean {
    return this.hosts[0]!.transitioning;
  }
  reset(type: string): boolean {
    return this.hosts[0]!.reset(type);
  }
  bmcInitiatedReboot(): void {
    this.hosts[0]!.bmcInitiatedReboot();
  }

  // --- time ---------------------------------------------------------------------------------

  schedule(inMs: number, run: () => void): void {
    const event = { at: this.now() + inMs, run };
    // Insert in order (events are few per BMC; no sort of the whole list per event).
    let i = this.#events.length;
    while (i > 0 && this.#events[i - 1]!.at > event.at) i -= 1;
    this.#events.splice(i, 0, event);
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

  // --- manager -------------------------------------------------------------------------------

  /** Manager.Reset, or the BMC restarting itself after a flash: an outage, sessions forgotten. */
  managerReset(type: string): void {
    this.counters.resets[`Manager.${type}`] = (this.counters.resets[`Manager.${type}`] ?? 0) + 1;
    this.counters.managerResets += 1;
    this.ledger.managerResets += 1;
    this.#restartBmc();
  }

  #restartBmc(then?: () => void): void {
    this.outageUntil = this.now() + this.timing.managerResetOutageMs;
    this.sessions.clear();
    this.schedule(this.timing.managerResetOutageMs, () => {
      then?.();
      this.bump('manager');
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

  /**
   * Starts a SimpleUpdate. The outcome: an armed task fault, else the image name (`fail` →
   * Exception, `stall` → never finishes), else success. A BIOS image becomes active at the host's
   * next boot; a BMC image when the BMC has restarted itself (an outage) after the task.
   */
  startUpdate(image: string, target: 'BIOS' | 'BMC', host: SimHost = this.hosts[0]!): SimTask {
    const armed = this.faults.takeTaskFault();
    const outcome =
      armed === 'taskStuck' || (!armed && image.includes('stall'))
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
      ...(target === 'BIOS' ? { host } : {}),
      image,
      messages: [],
    };
    this.tasks.set(task.id, task);
    this.counters.updatesStarted += 1;
    if (target === 'BIOS') host.ledger.biosUpdatesStarted += 1;
    else this.ledger.bmcUpdatesStarted += 1;
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
    const version = task.image.split('/').pop() ?? task.image;
    this.counters.updatesApplied.push({ target: task.target, image: task.image });
    if (task.target === 'BIOS') {
      task.messages.push({
        MessageId: 'Update.1.0.ActivateRequired',
        Message: 'The BIOS image is staged and becomes active at the next reset',
      });
      task.host!.stagedBiosVersion = version;
      return;
    }
    task.messages.push({ MessageId: 'Update.1.0.UpdateSuccessful', Message: 'The BMC restarts to activate' });
    this.#restartBmc(() => {
      this.firmware.BMC = version;
      this.ledger.bmcFlashes += 1;
    });
  }

  scheduleBiosJob(host: SimHost = this.hosts[0]!): SimTask {
    const job: SimTask = {
      id: `JID_${this.nextId().padStart(6, '0')}`,
      kind: 'job',
      startedAt: this.now(),
      durationMs: 0,
      outcome: 'success',
      state: 'Scheduled',
      percent: 0,
      target: 'BIOS',
      host,
      image: '',
      messages: [],
    };
    this.tasks.set(job.id, job);
    host.bios.jobId = job.id;
    return job;
  }
}
