// Lease-based leader election with client-go's semantics (tools/leaderelection):
// - a candidate may take the Lease only when the holder has not renewed it for leaseDuration,
//   measured on the candidate's own clock from the moment it last saw the record change (so clock
//   skew between nodes does not matter);
// - every write carries the Lease's resourceVersion, so two candidates can never both win;
// - the leader renews every retryPeriod and gives up when it could not renew for renewDeadline.
// Losing the lease is fatal to the caller (onStoppedLeading should exit the process), because a
// controller that keeps acting after another one took over is the failure this guards against.
import type { Logger } from 'pino';
import { silentLogger } from '../log.js';
import type { KubeClient, ResourceClient } from './client.js';
import { isAlreadyExists, isConflict, isNotFound } from './errors.js';
import { Core } from './resources.js';
import { sleep } from './backoff.js';
import { withDefaults } from '../options.js';
import type { KubeObject } from '../../api/schema/meta.js';

export interface Lease extends KubeObject {
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

export interface LeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
  onNewLeader?: (identity: string) => void;
  logger?: Logger;
  now?: () => number;
}

/** RFC 3339 with microseconds, as metav1.MicroTime serialises. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class LeaderElector {
  readonly #o: Required<Omit<LeaderElectionOptions, 'onNewLeader'>> &
    Pick<LeaderElectionOptions, 'onNewLeader'>;
  readonly #leases: ResourceClient<Lease>;
  readonly #log: Logger;
  #observed: Lease | undefined;
  #observedAt = 0;
  #lastRenew = 0;
  #leading = false;
  #knownLeader = '';
  #stopped = false;
  /** The acquire or renew attempt in flight; release() waits for it so its write is not stale. */
  #attempt: Promise<boolean> = Promise.resolve(false);

  constructor(options: LeaderElectionOptions) {
    this.#o = withDefaults(
      {
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
        logger: silentLogger,
        now: Date.now,
      },
      options,
    );
    if (this.#o.leaseDurationMs <= this.#o.renewDeadlineMs)
      throw new Error('leaseDuration must exceed renewDeadline');
    if (this.#o.renewDeadlineMs <= this.#o.retryPeriodMs * 1.2)
      throw new Error('renewDeadline must exceed retryPeriod * 1.2');
    this.#leases = options.client.resource<Lease>(Core.Lease);
    this.#log = this.#o.logger.child({
      lease: `${options.namespace}/${options.name}`,
      identity: options.identity,
    });
  }

  /** Each API call is bounded so a hung request cannot outlive the renew deadline. */
  get #requestTimeoutMs(): number {
    return Math.max(1000, Math.floor(this.#o.renewDeadlineMs / 2));
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  get leader(): string {
    return this.#knownLeader;
  }

  /** Campaigns until leading, then renews until the lease is lost or `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted && !this.#stopped && !(await this.#attemptOnce())) {
      await sleep(this.#o.retryPeriodMs * (1 + Math.random() * 0.2), signal);
    }
    if (signal.aborted || this.#stopped) return;
    this.#leading = true;
    this.#log.info('became leader');
    this.#o.onStartedLeading();
    while (!signal.aborted && !this.#stopped) {
      await sleep(this.#o.retryPeriodMs, signal);
      if (signal.aborted || this.#stopped) break;
      const renewed = await this.#attemptOnce();
      if (renewed) continue;
      if (this.#o.now() - this.#lastRenew >= this.#o.renewDeadlineMs) {
        this.#leading = false;
        this.#log.error(
          { sinceLastRenewMs: this.#o.now() - this.#lastRenew },
          'failed to renew lease within the renew deadline',
        );
        this.#o.onStoppedLeading();
        return;
      }
    }
  }

  /**
   * Gives the lease up so a standby takes over at once instead of after leaseDuration. Waits for an
   * attempt in flight first: a renewal that lands after we read the Lease would otherwise make this
   * write conflict and leave the lease held by a process that is gone. On a conflict it re-reads
   * once and releases only a lease that is still ours.
   */
  async release(): Promise<void> {
    this.#stopped = true;
    await this.#attempt;
    this.#leading = false;
    let lease = this.#observed;
    let failure = '';
    for (let tries = 0; tries < 2 && lease?.spec?.holderIdentity === this.#o.identity; tries++) {
      const now = microTime(this.#o.now());
      const released = { holderIdentity: '', leaseDurationSeconds: 1, renewTime: now, acquireTime: now };
      try {
        await this.#leases.replace(
          { ...lease, spec: { ...lease.spec, ...released } },
          { timeoutMs: this.#requestTimeoutMs },
        );
        this.#log.info('released lease');
        return;
      } catch (e) {
        failure = (e as Error).message;
        if (!isConflict(e)) break;
        try {
          lease = await this.#leases.get(this.#o.name, this.#o.namespace, {
            timeoutMs: this.#requestTimeoutMs,
          });
        } catch (readError) {
          failure = (readError as Error).message;
          break;
        }
        // Someone else holds it now: nothing of ours is left to release.
        if (lease.spec?.holderIdentity !== this.#o.identity) failure = '';
      }
    }
    if (failure) this.#log.warn({ err: failure }, 'could not release lease; it will expire');
  }

  #attemptOnce(): Promise<boolean> {
    this.#attempt = this.#tryAcquireOrRenew().catch(() => false);
    return this.#attempt;
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const now = this.#o.now();
    const current = await this.#readOrCreate(now);
    if (current === 'created') return true;
    if (current === undefined) return false;
    if (!this.#observed || JSON.stringify(this.#observed.spec) !== JSON.stringify(current.spec))
      this.#record(current, now);
    if (this.#heldByAnother(current, now)) return false;
    try {
      const updated = await this.#leases.replace(this.#claim(current, now), {
        timeoutMs: this.#requestTimeoutMs,
      });
      this.#record(updated, now);
      this.#lastRenew = now;
      return true;
    } catch (e) {
      if (!isConflict(e)) this.#log.warn({ err: (e as Error).message }, 'updating lease failed');
      return false;
    }
  }

  /** The current Lease; 'created' if it did not exist and we created it (and so lead). */
  async #readOrCreate(now: number): Promise<Lease | 'created' | undefined> {
    try {
      return await this.#leases.get(this.#o.name, this.#o.namespace, { timeoutMs: this.#requestTimeoutMs });
    } catch (e) {
      if (!isNotFound(e)) {
        this.#log.warn({ err: (e as Error).message }, 'reading lease failed');
        return undefined;
      }
    }
    try {
      const created = await this.#leases.create(
        {
          metadata: { name: this.#o.name, namespace: this.#o.namespace },
          spec: { ...this.#mine(now), acquireTime: microTime(now), leaseTransitions: 0 },
        },
        { timeoutMs: this.#requestTimeoutMs },
      );
      this.#record(created, now);
      this.#lastRenew = now;
      return 'created';
    } catch (e) {
      if (!isAlreadyExists(e)) this.#log.warn({ err: (e as Error).message }, 'creating lease failed');
      return undefined;
    }
  }

  /** Held by someone else who renewed within their lease duration, as measured on our clock. */
  #heldByAnother(lease: Lease, now: number): boolean {
    const holder = lease.spec?.holderIdentity ?? '';
    if (holder === '' || holder === this.#o.identity) return false;
    const leaseMs = (lease.spec?.leaseDurationSeconds ?? this.#o.leaseDurationMs / 1000) * 1000;
    return this.#observedAt + leaseMs > now;
  }

  #mine(now: number): NonNullable<Lease['spec']> {
    return {
      holderIdentity: this.#o.identity,
      leaseDurationSeconds: Math.ceil(this.#o.leaseDurationMs / 1000),
      renewTime: microTime(now),
    };
  }

  /** The Lease with us as holder: a renewal keeps acquireTime, a takeover counts a transition. */
  #claim(current: Lease, now: number): Lease {
    const spec = current.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const takingOver = holder !== this.#o.identity;
    return {
      ...current,
      spec: {
        ...this.#mine(now),
        acquireTime: takingOver ? microTime(now) : (spec.acquireTime ?? microTime(now)),
        leaseTransitions: (spec.leaseTransitions ?? 0) + (takingOver && holder !== '' ? 1 : 0),
      },
    };
  }

  #record(lease: Lease, now: number): void {
    this.#observed = lease;
    this.#observedAt = now;
    const holder = lease.spec?.holderIdentity ?? '';
    if (holder && holder !== this.#knownLeader) {
      this.#knownLeader = holder;
      this.#o.onNewLeader?.(holder);
    }
  }
}
