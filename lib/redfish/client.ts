// The Redfish client of one BMC: authenticated JSON requests over the transport, bounded retries
// of idempotent reads, coded errors for every failure. Resource-level operations (power, boot,
// media, settings, update) are separate modules built on `RedfishClient`.
import { silentLogger, type Logger } from '../log.js';
import { RedfishError, RedfishErrorCode, httpError, isRedfishError, scrub } from './errors.js';
import { Authenticator, type AuthMode, type Credentials } from './session.js';
import { Transport, type RawResponse, type TransportOptions } from './transport.js';

export interface RedfishClientOptions extends TransportOptions {
  credentials: Credentials;
  /** Default `auto`: a session when offered, Basic otherwise. */
  auth?: AuthMode;
  logger?: Logger;
  /** Attempts of an idempotent read on 502/503/504 or a dropped connection. Default 3. */
  readAttempts?: number;
  /** First back-off between read attempts, doubled each time. Default 250 ms. */
  retryDelayMs?: number;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface RedfishResponse<T = unknown> {
  status: number;
  /** Parsed JSON body; undefined for an empty body. */
  body: T | undefined;
  /** ETag header, or `@odata.etag` of the body. */
  etag?: string;
  /** `Location` header as a path on the BMC. */
  location?: string;
  /** `Retry-After` in ms, when the BMC sent one. */
  retryAfterMs?: number;
  headers: RawResponse['headers'];
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

const RETRYABLE_READ_STATUS = new Set([502, 503, 504]);

function header(headers: RawResponse['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new RedfishError(RedfishErrorCode.Aborted, 'aborted'));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new RedfishError(RedfishErrorCode.Aborted, 'aborted'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export class RedfishClient {
  readonly transport: Transport;
  readonly log: Logger;
  readonly #auth: Authenticator;
  readonly #readAttempts: number;
  readonly #retryDelayMs: number;
  readonly #extraSecrets = new Set<string>();

  constructor(opts: RedfishClientOptions) {
    this.transport = new Transport(opts);
    this.log = (opts.logger ?? silentLogger).child({ bmc: this.transport.origin + this.transport.prefix });
    this.#auth = new Authenticator(this.transport, opts.credentials, opts.auth ?? 'auto', this.log);
    this.#readAttempts = Math.max(1, opts.readAttempts ?? 3);
    this.#retryDelayMs = opts.retryDelayMs ?? 250;
  }

  /** Service root path of this BMC, e.g. `/redfish/v1/`. */
  get rootPath(): string {
    return this.transport.rootPath;
  }

  /** How the client is authenticated right now: `none` before the first call. */
  get authKind(): 'none' | 'basic' | 'session' {
    return this.#auth.kind;
  }

  /** Turns an `@odata.id`, an absolute URL or a root-relative name into a path on this BMC. */
  resolve(ref: string): string {
    if (/^https?:\/\//.test(ref)) {
      const u = new URL(ref);
      return u.pathname + u.search;
    }
    if (ref.startsWith('/')) return ref;
    return this.rootPath + ref;
  }

  /** Strings to scrub from anything this client reports. */
  secrets(): string[] {
    return [...this.#auth.secrets(), ...this.#extraSecrets];
  }

  /** Adds a secret the client must scrub too (image-server or update credentials). */
  registerSecret(secret: string): void {
    this.#extraSecrets.add(secret);
  }

  async get<T>(path: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.request<T>('GET', path, undefined, opts);
    if (res.body === undefined) {
      throw new RedfishError(RedfishErrorCode.Malformed, `GET ${res.status} ${path} returned no body`, {
        path,
      });
    }
    return res.body;
  }

  /** GET returning the body together with its ETag. */
  getWithEtag<T>(path: string, opts: RequestOptions = {}): Promise<RedfishResponse<T>> {
    return this.request<T>('GET', path, undefined, opts);
  }

  patch<T = unknown>(path: string, body: unknown, opts: RequestOptions = {}): Promise<RedfishResponse<T>> {
    return this.request<T>('PATCH', path, body, opts);
  }

  /** POST, for actions and creations. Never carries If-Match (iDRAC answers 412 to that). */
  post<T = unknown>(path: string, body: unknown, opts: RequestOptions = {}): Promise<RedfishResponse<T>> {
    const headers = { ...opts.headers };
    delete headers['if-match'];
    delete headers['If-Match'];
    return this.request<T>('POST', path, body, { ...opts, headers });
  }

  delete(path: string, opts: RequestOptions = {}): Promise<RedfishResponse> {
    return this.request('DELETE', path, undefined, opts);
  }

  /**
   * One request with authentication, a re-login on 401 and, for GET, bounded retries on
   * transient failures. Statuses >= 400 throw coded errors.
   */
  async request<T>(
    method: Method,
    path: string,
    body: unknown,
    opts: RequestOptions = {},
  ): Promise<RedfishResponse<T>> {
    const target = this.resolve(path);
    const attempts = method === 'GET' ? this.#readAttempts : 1;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#authenticated<T>(method, target, body, opts);
      } catch (e) {
        const delay = this.#retryDelay(e, attempt, attempts);
        if (delay === undefined) throw e;
        this.log.debug(
          { event: 'redfish.retry', method, path: target, attempt, code: (e as RedfishError).code },
          'retrying read',
        );
        await sleep(delay, opts.signal);
      }
    }
  }

  #retryDelay(e: unknown, attempt: number, attempts: number): number | undefined {
    if (attempt >= attempts || !isRedfishError(e)) return undefined;
    const transient =
      e.code === RedfishErrorCode.Connection ||
      (e.code === RedfishErrorCode.Http && RETRYABLE_READ_STATUS.has(e.status ?? 0));
    if (!transient || e.details.tls) return undefined;
    const hinted = typeof e.details.retryAfterMs === 'number' ? e.details.retryAfterMs : undefined;
    return Math.min(hinted ?? this.#retryDelayMs * 2 ** (attempt - 1), 5_000);
  }

  async #authenticated<T>(
    method: Method,
    path: string,
    body: unknown,
    opts: RequestOptions,
  ): Promise<RedfishResponse<T>> {
    for (let relogged = false; ; relogged = true) {
      const generation = this.#auth.generation;
      const authHeaders = await this.#auth.headers();
      const raw = await this.transport.request({
        method,
        path,
        headers: {
          accept: 'application/json',
          'accept-encoding': 'identity',
          'odata-version': '4.0',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...opts.headers,
          ...authHeaders,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        timeoutMs: opts.timeoutMs,
        signal: opts.signal,
      });
      if (raw.status === 401 && !relogged && (await this.#auth.refresh(generation))) continue;
      return this.#interpret<T>(method, path, raw);
    }
  }

  #interpret<T>(method: Method, path: string, raw: RawResponse): RedfishResponse<T> {
    const retryAfterMs = parseRetryAfter(header(raw.headers, 'retry-after'));
    if (raw.status >= 400) {
      const err = httpError(raw.status, method, path, raw.text, this.secrets());
      if (retryAfterMs !== undefined) err.details.retryAfterMs = retryAfterMs;
      throw err;
    }
    const parsed = this.#parse<T>(method, path, raw);
    const location = header(raw.headers, 'location');
    const bodyEtag =
      parsed && typeof parsed === 'object'
        ? (parsed as { '@odata.etag'?: unknown })['@odata.etag']
        : undefined;
    return {
      status: raw.status,
      body: parsed,
      etag: header(raw.headers, 'etag') ?? (typeof bodyEtag === 'string' ? bodyEtag : undefined),
      location: location ? this.resolve(location) : undefined,
      retryAfterMs,
      headers: raw.headers,
    };
  }

  #parse<T>(method: Method, path: string, raw: RawResponse): T | undefined {
    // An empty or blank body; /\S/ stops at the first character instead of copying the text as trim() would.
    if (!/\S/.test(raw.text)) return undefined;
    try {
      return JSON.parse(raw.text) as T;
    } catch {
      // A write may legitimately answer with text; a read must be JSON.
      if (method !== 'GET') return undefined;
      const preview = scrub(raw.text.slice(0, 80), this.secrets());
      throw new RedfishError(
        RedfishErrorCode.Malformed,
        `GET ${path} returned a body that is not JSON (${JSON.stringify(preview)})`,
        { method, path, status: raw.status },
      );
    }
  }

  /** Logs out (best effort) and closes the connections. */
  async close(): Promise<void> {
    await this.#auth.logout();
    await this.transport.close();
  }
}
