// One BMC's HTTP transport: an undici Agent with a connection cap and the TLS policy of that
// BMC, a deadline on every call, and low-level failures mapped to coded errors. Knows nothing of
// authentication or Redfish semantics.
import { EventEmitter } from 'node:events';
import { Agent } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { RedfishError, RedfishErrorCode } from './errors.js';

export interface TlsOptions {
  /** PEM CA bundle the BMC certificate must chain to. */
  ca?: string | Buffer;
  /** Skip certificate verification. Must be asked for explicitly; never the default. */
  insecure?: boolean;
  /** Name to verify the certificate against when it differs from the URL host. */
  servername?: string;
}

export interface TransportOptions {
  /** `https://host:port` plus an optional path prefix in front of `/redfish/v1` (simulators). */
  endpoint: string;
  tls?: TlsOptions;
  /** Most connections kept open to this BMC at once (BMCs fall over easily). Default 2. */
  maxConnections?: number;
  /** Deadline of one HTTP call, in ms. Default 30 s. */
  timeoutMs?: number;
}

export interface RawRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';
  /** Absolute path on the BMC (an `@odata.id` or a path the client built). */
  path: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_HAS_EXPIRED',
]);

function errorCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  const causeCode = (e as { cause?: { code?: unknown } } | null)?.cause?.code;
  if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
  return typeof causeCode === 'string' ? causeCode : typeof code === 'string' ? code : undefined;
}

/**
 * Call deadlines on one coarse sweeper instead of a timer per request: `AbortSignal.timeout`
 * costs a timer each, which is a fifth of the client's throughput on a busy poller. Deadlines
 * fire within SWEEP_MS of their time.
 */
const SWEEP_MS = 25;

/**
 * One call's deadline, handed to undici as the request's `signal`. undici takes an EventEmitter
 * with `aborted` and `reason` as readily as an AbortSignal, and building one costs a fraction of an
 * AbortController plus its EventTarget listener: on a busy poller that difference was a sixth of the
 * client's CPU per request.
 */
class Deadline extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;
  /** True when the deadline itself fired (not the caller's signal). */
  expired = false;

  constructor(readonly at: number) {
    super();
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

class DeadlineSweeper {
  readonly #pending = new Set<Deadline>();
  #timer: NodeJS.Timeout | undefined;

  add(ms: number): Deadline {
    const d = new Deadline(performance.now() + ms);
    this.#pending.add(d);
    this.#timer ??= setInterval(() => this.#sweep(), Math.min(SWEEP_MS, ms)).unref();
    return d;
  }

  done(d: Deadline): void {
    this.#pending.delete(d);
    if (this.#pending.size === 0 && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  #sweep(): void {
    const now = performance.now();
    for (const d of this.#pending) {
      if (d.at <= now) {
        this.#pending.delete(d);
        d.expired = true;
        d.abort(new DOMException('deadline passed', 'TimeoutError'));
      }
    }
  }
}

const deadlines = new DeadlineSweeper();

export class Transport {
  readonly origin: string;
  /** Path prefix in front of `/redfish/v1` (empty for a real BMC). */
  readonly prefix: string;
  readonly #agent: Agent;
  readonly #timeoutMs: number;
  #closed = false;

  constructor(opts: TransportOptions) {
    const url = new URL(opts.endpoint);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new RedfishError(RedfishErrorCode.Invalid, `unsupported endpoint scheme ${url.protocol}`);
    }
    if (url.protocol === 'https:' && !opts.tls?.ca && !opts.tls?.insecure) {
      // Node's default CA store would apply; BMC certificates are almost never in it, and
      // silently trusting the public store for a BMC is not a decision to make implicitly.
      throw new RedfishError(
        RedfishErrorCode.Invalid,
        'an https endpoint needs tls.ca (pinned CA) or tls.insecure=true',
      );
    }
    this.origin = url.origin;
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
    this.#agent = new Agent({
      connections: opts.maxConnections ?? 2,
      pipelining: 1,
      keepAliveTimeout: 10_000,
      connect: {
        ca: opts.tls?.ca,
        rejectUnauthorized: !opts.tls?.insecure,
        servername: opts.tls?.servername,
      },
    });
  }

  /** Path of the service root, e.g. `/redfish/v1/` or `/bmc/7/redfish/v1/`. */
  get rootPath(): string {
    return `${this.prefix}/redfish/v1/`;
  }

  async request(req: RawRequest): Promise<RawResponse> {
    if (this.#closed) throw new RedfishError(RedfishErrorCode.Aborted, 'client is closed');
    const ms = req.timeoutMs ?? this.#timeoutMs;
    const deadline = deadlines.add(ms);
    // The caller's signal ends the call through the same emitter as the deadline.
    const caller = req.signal;
    const onCallerAbort = (): void => deadline.abort(caller?.reason);
    if (caller?.aborted) onCallerAbort();
    else caller?.addEventListener('abort', onCallerAbort, { once: true });
    try {
      const res = await this.#agent.request({
        origin: this.origin,
        path: req.path,
        method: req.method,
        headers: req.headers,
        body: req.body,
        signal: deadline,
      });
      const text = await res.body.text();
      return { status: res.statusCode, headers: res.headers, text };
    } catch (e) {
      throw this.#mapError(e, req, ms, deadline.expired);
    } finally {
      caller?.removeEventListener('abort', onCallerAbort);
      deadlines.done(deadline);
    }
  }

  #mapError(e: unknown, req: RawRequest, ms: number, timedOut: boolean): RedfishError {
    const where = { method: req.method, path: req.path };
    if (e instanceof RedfishError) return e;
    if (timedOut) {
      return new RedfishError(
        RedfishErrorCode.Timeout,
        `${req.method} ${req.path} got no answer within ${ms} ms`,
        where,
      );
    }
    if (req.signal?.aborted) {
      return new RedfishError(RedfishErrorCode.Aborted, `${req.method} ${req.path} aborted`, where);
    }
    const code = errorCode(e);
    if (code && TLS_CODES.has(code)) {
      return new RedfishError(
        RedfishErrorCode.Connection,
        `TLS verification of ${this.origin} failed (${code})`,
        { ...where, tls: true, errno: code },
        e,
      );
    }
    const what = e instanceof Error ? e.message : String(e);
    return new RedfishError(
      RedfishErrorCode.Connection,
      `${req.method} ${req.path} failed: ${code ?? what}`,
      { ...where, errno: code },
      e,
    );
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#agent.close();
  }
}
