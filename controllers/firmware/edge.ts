// The firmware port over Redfish (lib/redfish): one cached connection per BMC and System, the
// observations a decision asks for (running version, a task, the task list, attributes with their
// registry flags), SimpleUpdate, resets and attribute writes. Errors leave as coded, scrubbed
// errors; image-server and BMC credentials never leave this module.
import type { Logger } from '../../lib/log.js';
import {
  RedfishErrorCode,
  biosVersion,
  bmcVersion,
  connectBmc,
  discardPending,
  interpretMonitor,
  isRedfishError,
  linkOf,
  members,
  readBios,
  readOnlyAmong,
  readManagerAttributes,
  reset as resetSystem,
  resetManager,
  setBiosAttributes,
  setManagerAttributes,
  simpleUpdate,
  type Bmc,
  type SettingsState,
  type Task,
  type TlsOptions,
} from '../../lib/redfish/index.js';
import type { BmcAccess } from '../shared/bmc-access.js';
import type { ImageRequest, Target } from './model.js';
import type {
  ActionResult,
  AttributeView,
  FirmwareObservation,
  FirmwarePort,
  ObserveRequest,
  TaskView,
} from './port.js';

export interface RedfishFirmwareOptions {
  tls: TlsOptions;
  timeoutMs: number;
  logger: Logger;
  onError?: (code: string, operation: string) => void;
}

/** Errors after which the cached connection is dropped and the next call connects afresh. */
const DROP_CODES = new Set<string>([
  RedfishErrorCode.Auth,
  RedfishErrorCode.Connection,
  RedfishErrorCode.Timeout,
]);

interface TaskBody extends Task {
  Payload?: { JsonBody?: string; TargetUri?: string };
}

function taskView(
  uri: string,
  body: TaskBody | undefined,
  state: string,
  percent?: number,
  status?: string,
): TaskView {
  let image: string | undefined;
  let targets: string[] = [];
  try {
    const json = body?.Payload?.JsonBody
      ? (JSON.parse(body.Payload.JsonBody) as { ImageURI?: string; Targets?: string[] })
      : {};
    image = json.ImageURI;
    targets = json.Targets ?? [];
  } catch {
    image = undefined;
  }
  const messages = (body?.Messages ?? []) as { Message?: string; MessageId?: string }[];
  const message = messages
    .map((m) => m.Message ?? m.MessageId)
    .filter(Boolean)
    .join('; ')
    .slice(0, 300);
  return {
    uri,
    state,
    percent,
    status,
    image,
    message: message || undefined,
    ...(targets.length ? { targets } : {}),
  };
}

/** Converts a requested string to the type of the running value (BIOS registries type them). */
function typed(value: string, current: unknown): unknown {
  if (typeof current === 'number' && value.trim() !== '' && Number.isFinite(Number(value)))
    return Number(value);
  if (typeof current === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

/** The attribute resources of a target: the BIOS's one, or the BMC's (Manager, DellAttributes). */
async function settingsStates(bmc: Bmc, target: Target): Promise<SettingsState[]> {
  return target === 'BIOS' ? [await readBios(bmc)] : await readManagerAttributes(bmc);
}

export class RedfishFirmware implements FirmwarePort {
  readonly #o: RedfishFirmwareOptions;
  readonly #bmcs = new Map<string, Promise<Bmc>>();

  constructor(options: RedfishFirmwareOptions) {
    this.#o = options;
  }

  #connect(access: BmcAccess): Promise<Bmc> {
    const key = `${access.key}#${access.systemId ?? ''}`;
    let bmc = this.#bmcs.get(key);
    if (!bmc) {
      bmc = connectBmc({
        endpoint: access.endpoint,
        credentials: access.credentials,
        tls: this.#o.tls,
        timeoutMs: this.#o.timeoutMs,
        readAttempts: 2,
        retryDelayMs: 100,
        logger: this.#o.logger,
        ...(access.systemId ? { systemId: access.systemId } : {}),
      });
      this.#bmcs.set(key, bmc);
      bmc.catch(() => this.#bmcs.get(key) === bmc && this.#bmcs.delete(key));
    }
    return bmc;
  }

  async #with<T>(access: BmcAccess, operation: string, fn: (bmc: Bmc) => Promise<T>): Promise<T> {
    try {
      return await fn(await this.#connect(access));
    } catch (e) {
      const code = isRedfishError(e) ? e.code : 'METAL_ERR_UNKNOWN';
      this.#o.onError?.(code, operation);
      if (isRedfishError(e) && DROP_CODES.has(e.code)) this.#forget(access);
      throw e;
    }
  }

  #forget(access: BmcAccess): void {
    const key = `${access.key}#${access.systemId ?? ''}`;
    const bmc = this.#bmcs.get(key);
    this.#bmcs.delete(key);
    void bmc?.then((b) => b.close()).catch(() => undefined);
  }

  observe(access: BmcAccess, r: ObserveRequest): Promise<FirmwareObservation> {
    return this.#with(access, 'observe', async (bmc) => {
      const obs: FirmwareObservation = { reachable: true };
      if (r.version)
        obs.version = (r.target === 'BIOS' ? await biosVersion(bmc) : await bmcVersion(bmc)).version;
      if (r.taskUri) obs.task = await this.#task(bmc, r.taskUri);
      if (r.tasks) obs.tasks = await this.#tasks(bmc, r.target);
      if (r.attributes) obs.attributes = await this.#attributes(bmc, r.target, r.attributes);
      return obs;
    });
  }

  async #task(bmc: Bmc, uri: string): Promise<TaskView> {
    const res = await bmc.client.request<TaskBody>('GET', uri, undefined, {});
    const poll = interpretMonitor(res);
    if (poll.done)
      return taskView(
        uri,
        res.body,
        poll.done.state,
        poll.done.percent ?? (poll.done.state === 'Completed' ? 100 : undefined),
        poll.done.status,
      );
    return taskView(uri, res.body, poll.running?.state ?? 'Running', poll.running?.percent);
  }

  /** The BMC's update tasks for this target (a System's BIOS, or the Manager). */
  async #tasks(bmc: Bmc, target: Target): Promise<TaskView[]> {
    const service = linkOf(bmc.root, 'Tasks') ?? linkOf(bmc.root, 'TaskService');
    if (!service) return [];
    const collection = linkOf(await bmc.client.get<object>(service), 'Tasks');
    if (!collection) return [];
    const mine = target === 'BIOS' ? bmc.systemPath : bmc.requireManager();
    const out: TaskView[] = [];
    for (const t of await members<TaskBody>(bmc.client, collection)) {
      const view = taskView(t['@odata.id'] ?? '', t, t.TaskState ?? 'Running', t.PercentComplete);
      const targets = view.targets;
      // A task for another System behind the same BMC is not ours to adopt.
      if (targets && !targets.some((x) => x.endsWith(mine))) continue;
      out.push(view);
    }
    return out;
  }

  async #attributes(bmc: Bmc, target: Target, names: string[]): Promise<AttributeView> {
    const states = await settingsStates(bmc, target);
    const current: Record<string, unknown> = {};
    const pending: Record<string, unknown> = {};
    for (const s of states) {
      Object.assign(current, s.current);
      Object.assign(pending, s.pending);
    }
    // The registries the resources name (the BIOS's; Dell's ManagerAttributeRegistry for the BMC).
    const readOnly = await readOnlyAmong(bmc, states, names);
    const holder = states.find((s) => names.some((n) => n in s.current)) ?? states[0];
    return {
      current,
      pending,
      readOnly,
      unknown: names.filter((n) => !(n in current)),
      etag: holder?.etag,
      uri: holder?.path,
    };
  }

  simpleUpdate(
    access: BmcAccess,
    target: Target,
    image: ImageRequest,
    credentials?: { username: string; password: string },
  ): Promise<ActionResult> {
    return this.#with(access, 'simpleUpdate', async (bmc) => {
      const handle = await simpleUpdate(bmc, {
        imageUri: image.uri,
        targets: [target === 'BIOS' ? bmc.systemPath : bmc.requireManager()],
        ...(image.transferProtocol ? { transferProtocol: image.transferProtocol } : {}),
        ...(image.force ? { forceUpdate: true } : {}),
        ...(credentials ? { credentials } : {}),
      });
      return { taskUri: handle?.monitor };
    });
  }

  reset(access: BmcAccess, target: Target): Promise<void> {
    return this.#with(access, 'reset', async (bmc) => {
      if (target === 'BIOS') await resetSystem(bmc, 'ForceRestart');
      else {
        await resetManager(bmc, 'GracefulRestart');
        this.#forget(access);
      }
    });
  }

  writeAttributes(access: BmcAccess, target: Target, attributes: Record<string, string>): Promise<void> {
    return this.#with(access, 'writeAttributes', async (bmc) => {
      const states = await settingsStates(bmc, target);
      const current = Object.assign({}, ...states.map((s) => s.current)) as Record<string, unknown>;
      const values = Object.fromEntries(
        Object.entries(attributes).map(([k, v]) => [k, typed(v, current[k])]),
      );
      if (target === 'BIOS') await setBiosAttributes(bmc, values, { applyTime: 'OnReset' });
      else await setManagerAttributes(bmc, values);
    });
  }

  discardStaged(access: BmcAccess, target: Target, attributes: string[]): Promise<void> {
    return this.#with(access, 'discardStaged', async (bmc) => {
      const states = await settingsStates(bmc, target);
      for (const state of states)
        await discardPending(bmc.client, state, attributes, { applyTime: 'OnReset' });
    });
  }

  async close(): Promise<void> {
    const all = [...this.#bmcs.values()];
    this.#bmcs.clear();
    await Promise.all(all.map((b) => b.then((x) => x.close()).catch(() => undefined)));
  }
}
