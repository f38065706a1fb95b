// The Redfish edge of the boot controller: one cached connection (session) per BMC, one
// observation per decision that asks for it, and the Redfish actions of a decision. Every error
// leaves here as a coded, scrubbed ErrorView; credentials never leave this module.
import type { Logger } from '../../lib/log.js';
import {
  RedfishErrorCode,
  connectBmc,
  ejectMedia,
  findAction,
  findVirtualMedia,
  insertMedia,
  isRedfishError,
  restoreBootOverride,
  setBootOverride,
  unsupported,
  type Bmc,
  type BootOverride,
  type ComputerSystem,
  type ResetType,
  type TlsOptions,
} from '../../lib/redfish/index.js';
import { EdgeError, errorView } from './errors.js';
import type {
  BmcAccess,
  BmcObservation,
  BmcView,
  BootAction,
  ErrorView,
  MediaView,
  ServerBoot,
} from './model.js';

export interface RedfishEdgeOptions {
  tls: TlsOptions;
  /** Deadline of one Redfish call. */
  timeoutMs: number;
  logger: Logger;
  /** Called for every Redfish failure, with its code and the operation (metrics). */
  onError?: (code: string, operation: string) => void;
  /** Connections unused this long are closed (their session logged out). Default 5 min. */
  idleMs?: number;
}

interface Entry {
  bmc: Promise<Bmc>;
  lastUsed: number;
  /** `@odata.id` of the CD device, found once per connection. */
  mediaPath?: string;
}

/** Errors after which the cached connection is dropped and the next call connects afresh. */
const DROP_CODES = new Set<string>([
  RedfishErrorCode.Auth,
  RedfishErrorCode.Connection,
  RedfishErrorCode.Timeout,
]);

const RESET_FALLBACKS: Record<'On' | 'ForceRestart', ResetType[]> = {
  On: ['On', 'ForceOn', 'PushPowerButton'],
  ForceRestart: ['ForceRestart', 'PowerCycle', 'GracefulRestart'],
};

export class RedfishEdge {
  readonly #o: RedfishEdgeOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #sweeper: NodeJS.Timeout;

  constructor(options: RedfishEdgeOptions) {
    this.#o = options;
    const idle = options.idleMs ?? 5 * 60_000;
    this.#sweeper = setInterval(() => void this.#closeIdle(idle), Math.min(idle, 60_000));
    this.#sweeper.unref();
  }

  #entry(access: BmcAccess): Entry {
    let entry = this.#entries.get(access.key);
    if (!entry) {
      const bmc = connectBmc({
        endpoint: access.endpoint,
        credentials: access.credentials,
        tls: this.#o.tls,
        timeoutMs: this.#o.timeoutMs,
        readAttempts: 2,
        retryDelayMs: 100,
        logger: this.#o.logger,
        ...(access.systemId ? { systemId: access.systemId } : {}),
      });
      entry = { bmc, lastUsed: Date.now() };
      this.#entries.set(access.key, entry);
      // A failed connect must not stay cached.
      bmc.catch(() => {
        if (this.#entries.get(access.key) === entry) this.#entries.delete(access.key);
      });
    }
    entry.lastUsed = Date.now();
    return entry;
  }

  async #with<T>(
    access: BmcAccess,
    operation: string,
    fn: (bmc: Bmc, entry: Entry) => Promise<T>,
  ): Promise<T> {
    const entry = this.#entry(access);
    try {
      return await fn(await entry.bmc, entry);
    } catch (e) {
      const view = errorView(e, [access.credentials.password, access.credentials.username]);
      this.#o.onError?.(view.code, operation);
      // Not awaited: logging out of a BMC that does not answer would only add its timeout.
      if (isRedfishError(e) && DROP_CODES.has(e.code)) void this.forget(access.key);
      // Re-thrown with a message that went through scrub() with this BMC's secrets.
      throw new EdgeError(view);
    }
  }

  async #media(bmc: Bmc, entry: Entry): Promise<MediaView | null> {
    try {
      if (!entry.mediaPath) entry.mediaPath = (await findVirtualMedia(bmc, 'CD')).path;
      const m = await bmc.client.get<{ Image?: string | null; Inserted?: boolean }>(entry.mediaPath);
      return { device: entry.mediaPath, image: m.Image ?? null, inserted: m.Inserted === true };
    } catch (e) {
      if (isRedfishError(e, RedfishErrorCode.Unsupported)) return null;
      throw e;
    }
  }

  /** One look at the BMC: power, boot override and, for virtual media boots, the CD. */
  async observe(access: BmcAccess, boot: ServerBoot): Promise<BmcView> {
    try {
      const observation = await this.#with(access, 'observe', async (bmc, entry): Promise<BmcObservation> => {
        const system = await bmc.system();
        const b = system.Boot ?? {};
        return {
          powerState: system.PowerState,
          override: {
            enabled: b.BootSourceOverrideEnabled ?? 'Disabled',
            target: b.BootSourceOverrideTarget ?? 'None',
            ...(b.BootSourceOverrideMode ? { mode: b.BootSourceOverrideMode } : {}),
            ...(b.HttpBootUri !== undefined ? { httpBootUri: b.HttpBootUri } : {}),
          },
          targetAliases: bmc.vendor.boot.targetAliases,
          continuous: bmc.vendor.boot.continuous,
          ...(boot.spec.method === 'VirtualMedia' ? { media: await this.#media(bmc, entry) } : {}),
        };
      });
      return { ok: true, observation };
    } catch (e) {
      return { ok: false, error: viewOf(e) };
    }
  }

  /** Runs one Redfish action; throws an EdgeError (coded, scrubbed) on failure. */
  run(access: BmcAccess, action: BootAction): Promise<void> {
    return this.#with(access, action.kind, async (bmc, entry) => {
      switch (action.kind) {
        case 'insertMedia':
          await insertMedia(bmc, action.image);
          return;
        case 'ejectMedia': {
          const device = await findVirtualMedia(bmc, 'CD');
          entry.mediaPath = device.path;
          // Only our image: whatever someone inserted after us stays.
          if (device.media.Inserted && device.media.Image === action.image) await ejectMedia(bmc, 'CD');
          return;
        }
        case 'setOverride':
          await setBootOverride(bmc, action.request);
          return;
        case 'restoreOverride':
          await restoreBootOverride(bmc, action.previous as BootOverride);
          return;
        case 'reset':
          await resetWithFallback(bmc, action.resetType);
          return;
        default:
          throw new Error(`${action.kind} is not a Redfish action`);
      }
    });
  }

  async forget(key: string): Promise<void> {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    await entry.bmc.then((b) => b.close()).catch(() => undefined);
  }

  async #closeIdle(idleMs: number): Promise<void> {
    const now = Date.now();
    for (const [key, entry] of this.#entries) if (now - entry.lastUsed > idleMs) await this.forget(key);
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    await Promise.all([...this.#entries.keys()].map((k) => this.forget(k)));
  }
}

function viewOf(e: unknown): ErrorView {
  return e instanceof EdgeError ? e.view : errorView(e);
}

/** ComputerSystem.Reset with the first type of the family the BMC allows. */
async function resetWithFallback(bmc: Bmc, want: 'On' | 'ForceRestart'): Promise<void> {
  const system = await bmc.client.get<ComputerSystem>(bmc.systemPath);
  const action = await findAction(bmc.client, system, 'ComputerSystem.Reset', 'ResetType');
  const candidates = RESET_FALLBACKS[want];
  const type = action.allowable ? candidates.find((t) => action.allowable!.includes(t)) : candidates[0];
  if (!type) throw unsupported(`the BMC allows none of ${candidates.join(', ')}`);
  await bmc.client.post(action.target, { ResetType: type });
  bmc.client.log.info({ event: 'boot.reset', resetType: type }, 'system reset requested');
}
