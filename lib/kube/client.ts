// The Kubernetes API client every binary uses.
//
// kubeconfig.ts says where the API server is and how to prove who we are (static credentials read
// there, plugins through @kubernetes/client-node, loaded only when a kubeconfig needs one); the
// requests themselves go over one undici pool per API server.
// We need per-request content types (server-side apply, merge and JSON patch), the /status
// subresource and resourceVersion-preconditioned updates for custom resources, and watches with an
// inactivity deadline; a generic path-based client gives all of that uniformly.
import type { KubeConfig } from '@kubernetes/client-node';
import { Agent, request as undiciRequest, type Dispatcher } from 'undici';
import type { KubeObject } from '../../api/schema/meta.js';
import { KubeApiError, KubeTransportError, type KubeStatus } from './errors.js';
import type { ResourceType } from './resources.js';
import { CONTENT_TYPES, ResourceClient } from './resource-client.js';
import {
  accessFromClientNode,
  accessFromEnvironment,
  accessFromFile,
  type ClusterAccess,
} from './kubeconfig.js';

// The typed per-resource client lives beside this one; most callers import both from here.
export {
  ResourceClient,
  type DeleteOptions,
  type ListOptions,
  type ObjectList,
  type PatchType,
  type WriteOptions,
} from './resource-client.js';

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface KubeClientOptions {
  /** Default per-request timeout. */
  timeoutMs?: number;
  /** How often auth material (e.g. a rotating service-account token) is re-read. */
  authRefreshMs?: number;
  /** Sent as User-Agent so the API server's audit log names the binary. */
  userAgent?: string;
}

/** One finished request, for metrics: what, on which resource, with which status, how long. */
export interface RequestRecord {
  /** GET, LIST, POST, PUT, PATCH, APPLY (server-side apply), DELETE. */
  verb: string;
  /** Plural resource, with `/status` for the subresource. */
  resource: string;
  /** HTTP status; 0 when no answer came. */
  code: number;
  ms: number;
}

/** `plural[/subresource]` and whether a collection was addressed, from an API path. */
export function resourceOfPath(path: string): { resource: string; collection: boolean } {
  const parts = path.split('?')[0]!.split('/').filter(Boolean);
  // /api/v1/... or /apis/group/version/...
  let rest = parts[0] === 'api' ? parts.slice(2) : parts.slice(3);
  if (rest[0] === 'namespaces' && rest.length > 2) rest = rest.slice(2);
  const [plural = '', name, sub] = rest;
  return { resource: sub ? `${plural}/${sub}` : plural, collection: name === undefined };
}

interface AuthState {
  headers: Record<string, string>;
  loadedAt: number;
}

export class KubeClient {
  readonly server: string;
  readonly #access: ClusterAccess;
  readonly #agent: Agent;
  readonly #timeoutMs: number;
  readonly #authRefreshMs: number;
  readonly #userAgent: string;
  #auth: Promise<AuthState> | undefined;
  #observers: ((r: RequestRecord) => void)[] = [];

  private constructor(access: ClusterAccess, options: KubeClientOptions) {
    this.server = access.server;
    this.#access = access;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#authRefreshMs = options.authRefreshMs ?? 30_000;
    this.#userAgent = options.userAgent ?? 'metal-maintenance';
    const { tls } = access;
    this.#agent = new Agent({
      connect: {
        ca: tls.ca,
        cert: tls.cert,
        key: tls.key,
        rejectUnauthorized: tls.rejectUnauthorized,
        servername: tls.servername,
      },
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 120_000,
    });
  }

  static fromAccess(access: ClusterAccess, options: KubeClientOptions = {}): KubeClient {
    return new KubeClient(access, options);
  }

  /** Through client-node's KubeConfig (the CLI: merged files, --context, auth plugins). */
  static async fromKubeConfig(kc: KubeConfig, options: KubeClientOptions = {}): Promise<KubeClient> {
    return new KubeClient(await accessFromClientNode(kc), options);
  }

  static async fromFile(path: string, options: KubeClientOptions = {}): Promise<KubeClient> {
    return new KubeClient(await accessFromFile(path), options);
  }

  /** $KUBECONFIG, else ~/.kube/config, else the in-cluster service account. */
  static async fromEnvironment(options: KubeClientOptions = {}): Promise<KubeClient> {
    return new KubeClient(await accessFromEnvironment(), options);
  }

  /** Where this client goes and with which TLS material (the tests write kubeconfigs from it). */
  get access(): ClusterAccess {
    return this.#access;
  }

  resource<T extends KubeObject>(rt: ResourceType): ResourceClient<T> {
    return new ResourceClient<T>(this, rt);
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  /** Calls `fn` after every request (not watches) with what it was and how it ended. */
  observe(fn: (r: RequestRecord) => void): void {
    this.#observers.push(fn);
  }

  #record(method: string, path: string, options: RequestOptions, code: number, startedAt: number): void {
    if (this.#observers.length === 0) return;
    const { resource, collection } = resourceOfPath(path);
    const verb =
      method === 'GET' && collection
        ? 'LIST'
        : method === 'PATCH' && options.contentType === CONTENT_TYPES.apply
          ? 'APPLY'
          : method;
    const r = { verb, resource, code, ms: Date.now() - startedAt };
    for (const fn of this.#observers) fn(r);
  }

  async #authHeaders(): Promise<Record<string, string>> {
    const now = Date.now();
    const current = this.#auth;
    if (current) {
      const state = await current;
      if (now - state.loadedAt < this.#authRefreshMs) return state.headers;
    }
    const next = (async () => ({ headers: await this.#access.credentials(), loadedAt: Date.now() }))();
    this.#auth = next;
    // A failed read (a token file not yet rotated in) is tried again by the next request.
    next.catch(() => {
      if (this.#auth === next) this.#auth = undefined;
    });
    return (await next).headers;
  }

  #url(path: string, query?: RequestOptions['query']): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    return `${this.server}${path}${qs ? `?${qs}` : ''}`;
  }

  async #dispatch(
    method: Dispatcher.HttpMethod,
    path: string,
    options: RequestOptions,
    bodyTimeout: number,
  ): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': this.#userAgent,
      ...(await this.#authHeaders()),
    };
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = options.contentType ?? 'application/json';
    }
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    try {
      return await undiciRequest(this.#url(path, options.query), {
        method,
        headers,
        body,
        dispatcher: this.#agent,
        headersTimeout: timeoutMs,
        bodyTimeout,
        signal: options.signal,
      });
    } catch (e) {
      throw new KubeTransportError(method, path, e);
    }
  }

  /** One request; non-2xx answers become KubeApiError carrying the Status. */
  async request<T>(method: Dispatcher.HttpMethod, path: string, options: RequestOptions = {}): Promise<T> {
    const text = await this.requestText(method, path, options);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** One request whose answer is text, not JSON (pods/log); non-2xx answers become KubeApiError. */
  async requestText(
    method: Dispatcher.HttpMethod,
    path: string,
    options: RequestOptions = {},
  ): Promise<string> {
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    const startedAt = Date.now();
    let res: Dispatcher.ResponseData;
    let text: string;
    try {
      res = await this.#dispatch(method, path, options, timeoutMs);
      text = await res.body.text();
    } catch (e) {
      this.#record(method, path, options, 0, startedAt);
      if (e instanceof KubeTransportError) throw e;
      throw new KubeTransportError(method, path, e);
    }
    this.#record(method, path, options, res.statusCode, startedAt);
    if (res.statusCode >= 200 && res.statusCode < 300) return text;
    throw new KubeApiError(method, path, res.statusCode, parseStatus(text, res.statusCode));
  }

  /**
   * A streaming GET (watch): yields one parsed JSON value per line. The stream fails with a
   * KubeTransportError if no byte arrives for `inactivityMs`.
   */
  async *stream(path: string, options: RequestOptions & { inactivityMs: number }): AsyncGenerator<unknown> {
    const res = await this.#dispatch('GET', path, options, options.inactivityMs);
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const text = await res.body.text().catch(() => '');
      throw new KubeApiError('GET', path, res.statusCode, parseStatus(text, res.statusCode));
    }
    let buffered = '';
    try {
      for await (const chunk of res.body) {
        buffered += (chunk as Buffer).toString('utf8');
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl).trim();
          buffered = buffered.slice(nl + 1);
          if (line) yield JSON.parse(line);
        }
      }
    } catch (e) {
      if (options.signal?.aborted) return;
      throw new KubeTransportError('GET', path, e);
    } finally {
      res.body.destroy();
    }
    const rest = buffered.trim();
    if (rest) yield JSON.parse(rest);
  }
}

function parseStatus(text: string, statusCode: number): KubeStatus {
  try {
    const parsed = JSON.parse(text) as KubeStatus;
    if (parsed && typeof parsed === 'object') return parsed;
  } catch {
    // not JSON: fall through
  }
  return {
    kind: 'Status',
    status: 'Failure',
    code: statusCode,
    message: text.slice(0, 512),
    reason: 'Unknown',
  };
}
