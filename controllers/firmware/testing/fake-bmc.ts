// An in-memory BMC behind the FirmwarePort, for the decision tests: versions, update tasks that
// succeed, fail or stall, attributes with pending values applied at reset, an outage after a
// reset, and counters of every write (to prove exactly-once).
import type { BmcAccess } from '../../shared/bmc-access.js';
import type { ImageRequest, Target } from '../model.js';
import type { ActionResult, FirmwareObservation, FirmwarePort, ObserveRequest, TaskView } from '../port.js';

export class BmcDown extends Error {
  readonly code = 'METAL_ERR_REDFISH_CONNECTION';
}

export interface FakeBmcOptions {
  bios?: string;
  bmc?: string;
  attributes?: Record<string, unknown>;
  readOnly?: string[];
  /** What the next update task does. */
  taskOutcome?: 'success' | 'failure' | 'stuck';
  /** The update is active only after a reset (BIOS usually). */
  activateOnReset?: boolean;
  /** Observations that fail after a reset. */
  outageObservations?: number;
}

export class FakeBmc implements FirmwarePort {
  versions: Record<Target, string>;
  attributes: Record<string, unknown>;
  pending: Record<string, unknown> = {};
  readonly readOnly: string[];
  readonly tasks: (TaskView & { target: Target; polls: number; version: string })[] = [];
  taskOutcome: 'success' | 'failure' | 'stuck';
  readonly activateOnReset: boolean;
  outageObservations: number;
  #down = 0;
  #staged: Partial<Record<Target, string>> = {};
  readonly counters = {
    updates: 0,
    resets: 0,
    writes: 0,
    written: [] as Record<string, string>[],
    discarded: [] as string[][],
  };

  constructor(o: FakeBmcOptions = {}) {
    this.versions = { BIOS: o.bios ?? '1.0.0', BMC: o.bmc ?? '5.0.0' };
    this.attributes = { ...(o.attributes ?? {}) };
    this.readOnly = o.readOnly ?? [];
    this.taskOutcome = o.taskOutcome ?? 'success';
    this.activateOnReset = o.activateOnReset ?? false;
    this.outageObservations = o.outageObservations ?? 0;
  }

  async observe(_access: BmcAccess, r: ObserveRequest): Promise<FirmwareObservation> {
    await Promise.resolve();
    if (this.#down > 0) {
      this.#down--;
      throw new BmcDown('connection refused');
    }
    for (const t of this.tasks) this.#progress(t);
    const obs: FirmwareObservation = { reachable: true, powerState: 'On' };
    if (r.version) obs.version = this.versions[r.target];
    if (r.tasks) obs.tasks = this.tasks.map((t) => this.#view(t));
    if (r.taskUri) {
      const t = this.tasks.find((x) => x.uri === r.taskUri);
      if (t) obs.task = this.#view(t);
    }
    if (r.attributes) {
      obs.attributes = {
        current: { ...this.attributes },
        pending: { ...this.pending },
        readOnly: this.readOnly.filter((n) => r.attributes!.includes(n)),
        unknown: r.attributes.filter((n) => !(n in this.attributes)),
        etag: `"attrs-${this.counters.writes}"`,
        uri: '/redfish/v1/Systems/1/Bios',
      };
    }
    return obs;
  }

  #view(t: TaskView): TaskView {
    return { uri: t.uri, state: t.state, percent: t.percent, image: t.image, message: t.message };
  }

  #progress(t: FakeBmc['tasks'][number]): void {
    if (t.state === 'Completed' || t.state === 'Exception') return;
    t.polls++;
    if (t.message === 'stuck') {
      t.state = 'Running';
      t.percent = 50;
      return;
    }
    if (t.polls < 2) {
      t.state = 'Running';
      t.percent = 40;
      return;
    }
    if (t.message === 'failure') {
      Object.assign(t, { state: 'Exception', percent: 99, message: 'Applying the image failed' });
      return;
    }
    Object.assign(t, { state: 'Completed', percent: 100, message: 'The update completed' });
    if (this.activateOnReset) this.#staged[t.target] = t.version;
    else this.versions[t.target] = t.version;
  }

  async simpleUpdate(_a: BmcAccess, target: Target, image: ImageRequest): Promise<ActionResult> {
    await Promise.resolve();
    this.counters.updates++;
    const uri = `/redfish/v1/TaskService/Tasks/${this.tasks.length + 1}`;
    const version = image.uri.split('/').pop() ?? image.uri;
    this.tasks.push({
      uri,
      state: 'New',
      percent: 0,
      image: image.uri,
      message: this.taskOutcome,
      target,
      polls: 0,
      version,
    });
    return { taskUri: uri };
  }

  async reset(_a: BmcAccess, target: Target): Promise<void> {
    await Promise.resolve();
    this.counters.resets++;
    const staged = this.#staged[target];
    if (staged) this.versions[target] = staged;
    delete this.#staged[target];
    Object.assign(this.attributes, this.pending);
    this.pending = {};
    this.#down = this.outageObservations;
  }

  async writeAttributes(_a: BmcAccess, _t: Target, attributes: Record<string, string>): Promise<void> {
    await Promise.resolve();
    this.counters.writes++;
    this.counters.written.push({ ...attributes });
    Object.assign(this.pending, attributes);
  }

  async discardStaged(_a: BmcAccess, _t: Target, attributes: string[]): Promise<void> {
    await Promise.resolve();
    this.counters.discarded.push([...attributes]);
    for (const name of attributes) delete this.pending[name];
  }

  async close(): Promise<void> {}
}
