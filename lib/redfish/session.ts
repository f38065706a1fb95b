// Authentication against one BMC: a Redfish session (SessionService) when the BMC offers one,
// HTTP Basic otherwise; one re-login after a 401; logout on close.
//
// The password lives in a private field only. It is never part of a message, a log line or
// `details`; `secrets()` hands the strings to scrub to the error builder.
import type { Logger } from '../log.js';
import { RedfishError, RedfishErrorCode, httpError } from './errors.js';
import type { Transport } from './transport.js';
import type { ServiceRoot } from './types.js';

export interface Credentials {
  username: string;
  password: string;
}

/** `auto`: try a session, fall back to Basic when the BMC has no usable SessionService. */
export type AuthMode = 'auto' | 'session' | 'basic';

interface Session {
  token: string;
  /** Location of the session resource, DELETEd on logout. */
  location?: string;
}

type AuthState = { kind: 'none' } | { kind: 'basic' } | { kind: 'session'; session: Session };

/** Statuses of a session POST that mean "no sessions here", not "wrong credentials". */
const NO_SESSION_SERVICE = new Set([400, 404, 405, 501]);

export class Authenticator {
  readonly #transport: Transport;
  readonly #username: string;
  readonly #password: string;
  readonly #basic: string;
  readonly #mode: AuthMode;
  readonly #log: Logger;
  #state: AuthState = { kind: 'none' };
  #login: Promise<AuthState> | undefined;
  /** Bumped on every login, so concurrent 401s trigger a single re-login. */
  #generation = 0;

  constructor(transport: Transport, credentials: Credentials, mode: AuthMode, log: Logger) {
    this.#transport = transport;
    this.#username = credentials.username;
    this.#password = credentials.password;
    this.#basic =
      'Basic ' + Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64');
    this.#mode = mode;
    this.#log = log;
  }

  /** Strings that must never leave this module in clear text. */
  secrets(): string[] {
    const out = [this.#password, this.#basic.slice(6)];
    if (this.#state.kind === 'session') out.push(this.#state.session.token);
    return out;
  }

  get kind(): 'none' | 'basic' | 'session' {
    return this.#state.kind;
  }

  get generation(): number {
    return this.#generation;
  }

  /** Headers that authenticate a request, logging in first when needed. */
  async headers(): Promise<Record<string, string>> {
    const state = this.#state.kind === 'none' ? await this.#ensureLogin() : this.#state;
    return this.#headersFor(state);
  }

  #headersFor(state: AuthState): Record<string, string> {
    if (state.kind === 'session') return { 'x-auth-token': state.session.token };
    return { authorization: this.#basic };
  }

  /**
   * Called after a 401 on a request made at `generation`. Returns true when the request is worth
   * retrying with fresh headers: a newer login already happened, or a new session was opened.
   */
  async refresh(generation: number): Promise<boolean> {
    if (generation !== this.#generation) return true;
    if (this.#state.kind === 'basic') return false;
    this.#log.info({ event: 'redfish.relogin' }, 'session rejected by the BMC; logging in again');
    this.#state = { kind: 'none' };
    await this.#ensureLogin();
    return true;
  }

  #ensureLogin(): Promise<AuthState> {
    this.#login ??= this.#doLogin().finally(() => {
      this.#login = undefined;
    });
    return this.#login;
  }

  async #doLogin(): Promise<AuthState> {
    const state = this.#mode === 'basic' ? ({ kind: 'basic' } as const) : await this.#openSession();
    this.#state = state;
    this.#generation++;
    return state;
  }

  async #sessionsPath(): Promise<string | undefined> {
    const res = await this.#transport.request({ method: 'GET', path: this.#transport.rootPath });
    if (res.status !== 200) return undefined;
    try {
      const root = JSON.parse(res.text) as ServiceRoot;
      return root.Links?.Sessions?.['@odata.id'];
    } catch {
      return undefined;
    }
  }

  async #openSession(): Promise<AuthState> {
    const path = await this.#sessionsPath();
    if (!path) return this.#fallBack('the service root links no SessionService');
    const res = await this.#transport.request({
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ UserName: this.#username, Password: this.#password }),
    });
    if (res.status === 401 || res.status === 403) return this.#refused(res.status, path, res.text);
    if (NO_SESSION_SERVICE.has(res.status)) return this.#fallBack(`session login answered ${res.status}`);
    if (res.status >= 300) throw httpError(res.status, 'POST', path, res.text, this.secrets());
    const token = res.headers['x-auth-token'];
    if (typeof token !== 'string' || token === '') return this.#fallBack('session login returned no token');
    const location = res.headers.location;
    return {
      kind: 'session',
      session: { token, location: typeof location === 'string' ? this.#pathOf(location) : undefined },
    };
  }

  /**
   * A refused session login. Some BMCs (metal-operator's mock) guard the session collection with
   * Basic auth itself, so in `auto` mode Basic is tried next; wrong credentials then fail on the
   * first request, after one re-login, as METAL_ERR_REDFISH_AUTH.
   */
  #refused(status: number, path: string, text: string): AuthState {
    const err = httpError(status, 'POST', path, text, this.secrets());
    if (this.#mode === 'session') {
      throw new RedfishError(
        RedfishErrorCode.Auth,
        `login to ${this.#transport.origin} refused (HTTP ${status})`,
        {
          ...err.details,
        },
      );
    }
    this.#log.debug(
      { event: 'redfish.session.refused', status, reason: err.message },
      'session refused; trying Basic',
    );
    return { kind: 'basic' };
  }

  #fallBack(why: string): AuthState {
    if (this.#mode === 'session') {
      throw new RedfishError(RedfishErrorCode.Unsupported, `no usable session service: ${why}`);
    }
    this.#log.debug({ event: 'redfish.auth.basic', why }, 'using HTTP Basic authentication');
    return { kind: 'basic' };
  }

  #pathOf(location: string): string {
    return location.startsWith('http') ? new URL(location).pathname : location;
  }

  /** Deletes the session, if one is open. Best effort: a BMC that is gone has no session. */
  async logout(): Promise<void> {
    const state = this.#state;
    this.#state = { kind: 'none' };
    if (state.kind !== 'session' || !state.session.location) return;
    try {
      await this.#transport.request({
        method: 'DELETE',
        path: state.session.location,
        headers: this.#headersFor(state),
        timeoutMs: 5_000,
      });
    } catch (e) {
      this.#log.debug({ event: 'redfish.logout.failed', code: (e as RedfishError).code }, 'logout failed');
    }
  }
}
