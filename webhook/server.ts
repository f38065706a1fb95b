// The webhook's HTTPS server (fastify). Paths, one per rule (see docs/webhook.md):
//   POST /validate/{placement,eviction,contract,policy,legacy-labels}   POST /mutate/contract
//   GET /healthz, /readyz (ready: caches synced and a policy loaded), /metrics
// A body that is not an AdmissionReview v1 gets a 4xx; every review we can read gets HTTP 200 with a
// well-formed AdmissionReview whose response.uid is the request's. Dependencies come in by injection
// so the wiring step can plug informer caches, the API-server BudgetStore and the policy informer in.
import type { Server as TlsServer, TLSSocket } from 'node:tls';
import {
  fastify,
  LogController,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { Registry } from 'prom-client';
import secureJson from 'secure-json-parse';
import { errorMessage, isMetalError } from '../lib/errors.js';
import { silentLogger, type Logger } from '../lib/log.js';
import type { PolicyStore } from '../lib/policy/store.js';
import {
  parseAdmissionReview,
  resourceKey,
  toAdmissionResponse,
  type AdmissionRequest,
} from './admission.js';
import { Codes } from '../contract/codes.js';
import { unauthenticated } from './errors.js';
import type { Decision } from '../contract/denial.js';
import { countEntries, createMetrics, type RouteMetrics, type WebhookMetrics } from './metrics.js';
import { reviewLogger } from './log.js';
import {
  DEFAULT_LOG_SAMPLING,
  EVERY_LINE,
  lineSampler,
  type LineSampler,
  type LogSampling,
} from '../lib/log-sampling.js';
import { perTurn } from './per-turn.js';
import { decide, RULES, type ReviewDeps, type ReviewOutcome, type ReviewType } from './review.js';
import type { PolicyConfigMapRef } from './rules/common.js';
import { secureContextOf, type CertPair, type CertReloader } from './tls.js';
import type { WorldView } from './world.js';
import { type GrantFunction } from './grants/plan.js';

/** An UPDATE review carries object and oldObject, each up to etcd's 1.5 MiB: 6 MiB leaves room. */
export const DEFAULT_BODY_LIMIT = 6 * 1024 * 1024;

export interface WebhookServerOptions {
  world: WorldView;
  policies: PolicyStore;
  grant: GrantFunction;
  /** Whether the informer caches are synced (the wiring step's); readiness also needs a policy. */
  isReady: () => boolean;
  clock?: () => Date;
  logger?: Logger;
  registry?: Registry;
  /** Serve HTTPS with this pair; without it the server speaks plain HTTP (inject() tests). */
  tls?: CertPair;
  bodyLimit?: number;
  policyConfigMap?: PolicyConfigMapRef;
  /** Above the API server's idle timeout, so it reuses connections (Pepr uses 90 s). */
  keepAliveTimeoutMs?: number;
  /** Denial lines sampled per route and code (log-sampling.ts; default 100:100); false: every line. */
  logSampling?: LogSampling | false;
}

export interface WebhookServer {
  app: FastifyInstance;
  metrics: WebhookMetrics;
  registry: Registry;
  /** Swaps the serving certificate for new connections; existing ones keep theirs. */
  setCertificate(pair: CertPair): void;
  /** Polls a CertReloader and swaps every valid new pair in (stopped on close). */
  watchCertificates(reloader: CertReloader): void;
}

interface ReviewParams {
  type: ReviewType;
  rule: string;
}

// These denials quote values from the object (a bad policy value, a malformed field): the client gets
// them, the log gets the code and the field names only.
const QUOTES_OBJECT = new Set<string>([Codes.POLICY_INVALID, Codes.OBJECT_INVALID]);

function logMessage(decision: Decision): string {
  if (decision.allowed) return 'admitted';
  return QUOTES_OBJECT.has(decision.code) ? `denied (${decision.code})` : `denied: ${decision.message}`;
}

/** The fields of a review's log line; type and rule are bound on the route's logger. */
function reviewLine(admission: AdmissionRequest, decision: Decision, seconds: number, unlogged: number) {
  // Field names only when a cause names one (most denials name none: leave the key out).
  const fields = decision.causes?.flatMap((c) => (c.field ? [c.field] : []));
  return {
    uid: admission.uid,
    resource: resourceKey(admission),
    operation: admission.operation,
    // `namespace/name` under its own key: `name` is the logger's (pino writes both, and a reader of the
    // line keeps one).
    object: admission.namespace ? `${admission.namespace}/${admission.name ?? ''}` : admission.name,
    user: admission.userInfo.username,
    dryRun: admission.dryRun === true,
    allowed: decision.allowed,
    code: decision.code,
    fields: fields && fields.length > 0 ? fields : undefined,
    retryAfterSeconds: decision.retryAfterSeconds,
    ms: Math.round(seconds * 1000),
    // Denials of this route and code since its previous line that sampling left out.
    unlogged: unlogged > 0 ? unlogged : undefined,
  };
}

/**
 * HTTPS options for a pair. With a client CA, clients are asked for a certificate; the onRequest check
 * refuses a request whose connection did not present one the CA signed, with a 401 that says so (the
 * API server logs it), before its body is read. Probes and metrics are served on the plain ops port.
 */
function httpsOptions(pair: CertPair) {
  return pair.clientCA
    ? { ...secureContextOf(pair), requestCert: true, rejectUnauthorized: false }
    : secureContextOf(pair);
}

/** A gate that opens at most once per `ms`; when it opens, it tells how many calls it kept shut since. */
export function oncePer(ms: number, now: () => number = () => performance.now()): () => number | undefined {
  let last = -Infinity;
  let shut = 0;
  return () => {
    const t = now();
    if (t - last < ms) {
      shut++;
      return undefined;
    }
    last = t;
    const since = shut;
    shut = 0;
    return since;
  };
}

function fourHundred(
  reply: FastifyReply,
  metrics: WebhookMetrics,
  status: number,
  reason: string,
  message: string,
) {
  metrics.malformed.inc({ reason });
  return reply.code(status).send({ code: status, reason, message });
}

/**
 * Leaves JSON bodies as text, for the per-turn batch to parse next to the decisions (parseJsonBody).
 * fastify still enforces the body limit (413) and refuses other content types (415) as it reads a body.
 */
export function keepJsonBodiesAsText(app: Pick<FastifyInstance, 'addContentTypeParser'>): void {
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) =>
    done(null, body),
  );
}

/** A body as fastify's own JSON parser reads it: prototype poisoning (`__proto__`, `constructor`) refused. */
export function parseJsonBody(body: string): unknown {
  return secureJson.parse(body, undefined, { protoAction: 'error', constructorAction: 'error' });
}

/** A rule's route: its log line's bindings, its denial lines' sampler and its counters. */
interface Route {
  type: ReviewType;
  rule: string;
  log: Logger;
  sample: LineSampler;
  counts: RouteMetrics;
}

/** A review from its arrival to its answer; the batch fills in what it found. */
interface PendingReview {
  route: Route;
  body: unknown;
  reply: FastifyReply;
  started: number;
  admission?: AdmissionRequest;
  outcome?: ReviewOutcome | Promise<ReviewOutcome>;
  refusal?: { reason: string; message: string };
  error?: unknown;
}

export function createWebhookServer(options: WebhookServerOptions): WebhookServer {
  const logger = options.logger ?? silentLogger;
  const registry = options.registry ?? new Registry();
  const metrics = createMetrics(registry);
  const clock = options.clock ?? (() => new Date());
  const app = fastify({
    loggerInstance: logger,
    // Our own line per review carries the uid; fastify's per-request lines would add nothing.
    logController: new LogController({ disableRequestLogging: true }),
    // Each review logs its own line through `logger`; nothing uses request.log, so spare the child
    // logger fastify would otherwise create for every request.
    childLoggerFactory: (parent) => parent,
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 90_000,
    return503OnClosing: true,
    // HTTPS over HTTP/1.1 only (Node's https server offers just that in ALPN; tls.test.ts holds it): the
    // API server's webhook client asks for nothing else, and HTTP/2 would cost more per request and open
    // the port to stream-reset floods (docs/webhook.md, "Why HTTP/1.1").
    ...(options.tls ? { https: httpsOptions(options.tls) } : {}),
  }) as unknown as FastifyInstance;

  /** Logs what broke, and answers 500 unless an answer already went out. */
  const failed = (reply: FastifyReply, error: unknown) => {
    const code = (error as FastifyError | undefined)?.code;
    logger.error({ err: errorMessage(error), code }, 'unexpected error');
    return reply.sent ? reply : fourHundred(reply, metrics, 500, code ?? 'Error', 'internal error');
  };
  app.setErrorHandler((error: FastifyError, _request, reply) => {
    // Oversized bodies, wrong content types: not an AdmissionReview, so a 4xx.
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500)
      return fourHundred(reply, metrics, error.statusCode, error.code ?? 'Error', error.message);
    return failed(reply, error);
  });
  keepJsonBodiesAsText(app);

  const deps: ReviewDeps = {
    world: options.world,
    policies: options.policies,
    grant: options.grant,
    clock,
    ...(options.policyConfigMap ? { policyConfigMap: options.policyConfigMap } : {}),
  };
  // The review line carries names, codes and numbers only (see below), none of them under a redacted
  // path: the child skips the redaction pass, which would otherwise run on every field of every line.
  // log.test.ts checks that the line is the same as the redacting logger writes.
  const reviewLog = reviewLogger(logger);

  const answer = (
    { route: { log, sample, counts }, started, reply }: PendingReview,
    admission: AdmissionRequest,
    { decision, grant, audit }: ReviewOutcome,
  ) => {
    const seconds = (performance.now() - started) / 1000;
    const result = decision.allowed ? 'allowed' : decision.status >= 500 ? 'error' : 'denied';
    counts.decided(result, decision.code, seconds);
    if (grant) {
      counts.granted(grant.granted, grant.dryRun);
      if (grant.conflicts > 0) metrics.grantConflicts.inc(grant.conflicts);
      if (grant.retries > 0) metrics.grantRetries.inc(grant.retries);
      if (!grant.dryRun) countEntries(metrics, grant);
    }
    // Names and codes only: never object bodies (they may hold secrets) nor patches. Admissions log at
    // debug: skip building the line when that level is off (most reviews are admissions). Denials are
    // sampled per code; at debug, every admission is written.
    const level = decision.allowed ? 'debug' : 'info';
    if (log.isLevelEnabled(level)) {
      const unlogged = decision.allowed ? 0 : sample(decision.code);
      if (unlogged === undefined) counts.unlogged(decision.code);
      else log[level](reviewLine(admission, decision, seconds, unlogged), logMessage(decision));
    }
    return reply.code(200).send(toAdmissionResponse(admission.uid, decision, audit));
  };

  /** The review parsed and decided; what goes wrong is kept for its answer. Never throws. */
  const settle = (pending: PendingReview) => {
    let json: unknown;
    try {
      json = typeof pending.body === 'string' ? parseJsonBody(pending.body) : pending.body;
    } catch (e) {
      pending.refusal = { reason: 'InvalidJSON', message: `body is not valid JSON: ${errorMessage(e)}` };
      return;
    }
    try {
      pending.admission = parseAdmissionReview(json);
    } catch (e) {
      pending.refusal = {
        reason: 'InvalidReview',
        message: isMetalError(e) ? e.message : 'not an AdmissionReview v1',
      };
      return;
    }
    const { type, rule } = pending.route;
    try {
      // Synchronous unless the rule has a grant to execute: a pure decision costs no promise.
      pending.outcome = decide(type, rule, pending.admission, deps);
    } catch (e) {
      pending.error = e;
    }
  };

  const respond = (pending: PendingReview) => {
    const { admission, outcome, reply } = pending;
    if (pending.refusal)
      return fourHundred(reply, metrics, 400, pending.refusal.reason, pending.refusal.message);
    if (!admission || !outcome) return failed(reply, pending.error);
    if (!(outcome instanceof Promise)) return answer(pending, admission, outcome);
    return outcome.then((o) => answer(pending, admission, o)).catch((e: unknown) => failed(reply, e));
  };

  // One batch per event-loop turn (per-turn.ts): every review read in the turn is parsed and decided,
  // then every one is answered. Each review is answered, whatever another one in its batch does.
  const enqueue = perTurn<PendingReview>((batch) => {
    for (const pending of batch) settle(pending);
    for (const pending of batch) {
      try {
        void respond(pending);
      } catch (e) {
        failed(pending.reply, e);
      }
    }
  });

  const sampling = options.logSampling ?? DEFAULT_LOG_SAMPLING;
  const handlerFor = (type: ReviewType, rule: string) => {
    // type and rule bound once per route: pino serialises a child's bindings when it is created.
    const route: Route = {
      type,
      rule,
      log: reviewLog.child({ type, rule }),
      // On the decisions' clock: tests fix it, so their windows do not move.
      sample: sampling ? lineSampler(sampling, () => clock().getTime()) : EVERY_LINE,
      counts: metrics.route(type, rule),
    };
    // Returns nothing: a returned reply is a thenable, and fastify would wait on it with end-of-stream
    // listeners on every response still in the batch.
    return (request: FastifyRequest, reply: FastifyReply): void => {
      enqueue({ route, body: request.body, reply, started: performance.now() });
    };
  };

  // One static route per rule (the router's cheapest lookup), and the parametric route for the rest:
  // an unknown type or rule gets its 404 there, and a path the router did not match statically (say,
  // percent-encoded) is still served by its rule.
  const handlers = new Map<string, ReturnType<typeof handlerFor>>();
  for (const type of Object.keys(RULES) as ReviewType[])
    for (const rule of Object.keys(RULES[type])) {
      const handler = handlerFor(type, rule);
      handlers.set(`${type}/${rule}`, handler);
      app.post(`/${type}/${rule}`, handler);
    }
  app.post<{ Params: ReviewParams }>('/:type/:rule', (request, reply) => {
    const { type, rule } = request.params;
    if (type !== 'validate' && type !== 'mutate')
      return fourHundred(reply, metrics, 404, 'NotFound', 'no such path');
    const handler = handlers.get(`${type}/${rule}`);
    if (!handler)
      return fourHundred(reply, metrics, 404, 'UnknownRule', `no ${type} rule ${JSON.stringify(rule)}`);
    return handler(request, reply);
  });

  app.get('/healthz', async (_request, reply) => reply.code(200).send('ok'));
  app.get('/readyz', async (_request, reply) => {
    const cachesSynced = options.isReady();
    const policyLoaded = options.policies.isLoaded();
    const ready = cachesSynced && policyLoaded;
    return reply.code(ready ? 200 : 503).send({ ready, cachesSynced, policyLoaded });
  });
  app.get('/metrics', async (_request, reply) =>
    reply.header('content-type', registry.contentType).send(await registry.metrics()),
  );

  const setCertificate = (pair: CertPair) => {
    (app.server as unknown as TlsServer).setSecureContext(secureContextOf(pair));
  };
  if (options.tls?.clientCA) {
    // An API server that presents no certificate fails every guarded write: say so at warn, but once a
    // minute (with how many more), not once per refused request.
    const warnNow = oncePer(60_000);
    // Before the body is read: a caller without the API server's certificate costs one header parse.
    app.addHook('onRequest', (request, reply, done) => {
      const socket = request.raw.socket as TLSSocket;
      if (socket.authorized) return done();
      const reason = socket.getPeerCertificate()?.raw ? 'UntrustedClientCertificate' : 'NoClientCertificate';
      metrics.unauthenticated.inc({ reason });
      const skipped = warnNow();
      if (skipped !== undefined)
        logger.warn(
          { reason, tlsError: socket.authorizationError, remote: socket.remoteAddress, alsoRefused: skipped },
          'refused a request without a trusted client certificate (401): does the API server present one? ' +
            '(docs/webhook.md, "Authenticating the API server")',
        );
      const refusal = unauthenticated(
        reason === 'NoClientCertificate'
          ? 'no client certificate'
          : 'client certificate not signed by the client CA',
      );
      void reply
        .code(401)
        .header('connection', 'close')
        .send({ code: 401, reason: 'Unauthorized', message: errorMessage(refusal) });
    });
  }
  let reloaders: CertReloader[] = [];
  app.addHook('onClose', (_instance, done) => {
    for (const r of reloaders) r.stop();
    reloaders = [];
    done();
  });

  return {
    app,
    metrics,
    registry,
    setCertificate,
    watchCertificates(reloader) {
      reloaders.push(reloader);
      reloader.start(setCertificate, (result) => metrics.tlsReloads.inc({ result }));
    },
  };
}
