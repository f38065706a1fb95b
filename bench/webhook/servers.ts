// bench:webhook's servers: the webhook as deployed, the limit (a bare fastify answering "allowed"),
// and the ladder of servers that each do a longer prefix of the webhook's work.
import { fastify, type FastifyReply } from 'fastify';
import type { PolicyStore } from '../../lib/policy/store.js';
import { parseAdmissionReview, toAdmissionResponse, type AdmissionRequest } from '../../webhook/admission.js';
import {
  checkObject,
  decide,
  type ReviewDeps,
  type ReviewOutcome,
  type ReviewType,
} from '../../webhook/review.js';
import {
  createWebhookServer,
  DEFAULT_BODY_LIMIT,
  keepJsonBodiesAsText,
  parseJsonBody,
} from '../../webhook/server.js';
import { perTurn } from '../../webhook/per-turn.js';
import { bufferedLogger } from '../../webhook/log.js';
import { type LogSampling } from '../../lib/log-sampling.js';
import { createGrantor } from '../../webhook/grants/reserve.js';

import { type Fleet } from './fleet.js';
import { shuffled, type Measured } from './measure.js';

// ------------------------------------------------------------------ the limit

/** A fastify HTTPS server as the limit runs: the webhook's TLS, keep-alive and body limit, nothing else. */
export const bareServer = (tls: { key: Buffer; cert: Buffer }) =>
  fastify({ https: tls, keepAliveTimeout: 90_000, bodyLimit: DEFAULT_BODY_LIMIT });

/** The limit's fixed answer. */
export const ALLOWED = (uid: string) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response: { uid, allowed: true },
});

// ------------------------------------------------------------------ where the webhook's time goes

/**
 * Servers that each do a longer prefix of the webhook's work per review, from the envelope alone up to
 * the decision's own answer; the next step is the webhook itself (metrics, timing, the denial log
 * line). Measured against the limit in the same round, each step's ratio shows what the work it adds
 * costs under load, cache effects included (an in-process loop keeps caches warm and shows far less).
 */
export const LADDER = [
  { step: 'envelope', adds: 'AdmissionReview envelope checked, a fixed "allowed" with its uid' },
  { step: '+ object check', adds: "the object's shape against its kind's schema" },
  { step: '+ rules', adds: 'the rule decides from the world (eviction: its dry-run grant)' },
  { step: '+ answer', adds: "the decision's own answer (denial status, warnings, audit)" },
] as const;

/**
 * After a 1 s warm-up of each step, each round: the limit, then every step in random order; a
 * step's ratio is over its own round's limit. Returns the runs per step (in the order of `urls`)
 * and the failed requests.
 */
export async function ladderRounds(
  urls: string[],
  limitUrl: string,
  rounds: number,
  closed: (url: string, durationMs?: number) => Promise<Measured>,
): Promise<{ runs: { ratio: number; cpuUs: number }[][]; errors: number }> {
  for (const url of urls) await closed(url, 1000);
  const runs = urls.map(() => [] as { ratio: number; cpuUs: number }[]);
  let errors = 0;
  for (let round = 0; round < rounds; round++) {
    const l = await closed(limitUrl);
    errors += l.errors;
    for (const k of shuffled(urls.map((_, k) => k))) {
      const m = await closed(urls[k]!);
      runs[k]!.push({ ratio: m.rps / l.rps, cpuUs: m.cpuUsPerRequest });
      errors += m.errors;
    }
  }
  return { runs, errors };
}

export interface LadderReview {
  type: ReviewType;
  rule: string;
  body: string;
  reply: FastifyReply;
  request?: AdmissionRequest;
  outcome?: ReviewOutcome | Promise<ReviewOutcome>;
}

export async function ladderServer(level: number, deps: ReviewDeps, tls: { key: Buffer; cert: Buffer }) {
  const app = bareServer(tls);
  // As the webhook does it: bodies parsed, then decided, then answered in one batch per turn. A pure
  // decision costs no promise.
  keepJsonBodiesAsText(app);
  const enqueue = perTurn<LadderReview>((batch) => {
    for (const r of batch) {
      r.request = parseAdmissionReview(parseJsonBody(r.body));
      if (level === 1) checkObject(r.request);
      if (level >= 2) r.outcome = decide(r.type, r.rule, r.request, deps);
    }
    for (const { request, outcome, reply } of batch) {
      const uid = request!.uid;
      const answer = ({ decision, audit }: ReviewOutcome) =>
        reply.send(level === 3 ? toAdmissionResponse(uid, decision, audit) : ALLOWED(uid));
      if (!outcome) void reply.send(ALLOWED(uid));
      else if (outcome instanceof Promise) void outcome.then(answer);
      else void answer(outcome);
    }
  });
  app.post<{ Params: { type: ReviewType; rule: string } }>('/:type/:rule', (req, reply) => {
    enqueue({ type: req.params.type, rule: req.params.rule, body: req.body as string, reply });
    return reply;
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return app;
}

// ------------------------------------------------------------------ the servers under test

/** The webhook as deployed and the limit, listening on 127.0.0.1 with the same certificate. */
export async function startServers(
  served: Fleet,
  policies: PolicyStore,
  tls: { key: Buffer; cert: Buffer },
  logSampling: LogSampling | false,
) {
  // The webhook's buffered info-level logger (denials are logged, sampled as in the binary), into /dev/null.
  const log = bufferedLogger('webhook', { level: 'info', dest: '/dev/null' });
  // One grantor over the served store, for the webhook and the ladder's steps alike.
  const grant = createGrantor(served.store);
  const webhook = createWebhookServer({
    world: served.world,
    policies,
    grant,
    isReady: () => true,
    logger: log.logger,
    tls,
    logSampling,
  });
  await webhook.app.listen({ host: '127.0.0.1', port: 0 });
  const limit = bareServer(tls);
  limit.post('/:type/:rule', (req, reply) =>
    reply.send(ALLOWED((req.body as { request: { uid: string } }).request.uid)),
  );
  await limit.listen({ host: '127.0.0.1', port: 0 });
  const urlOf = (app: { server: { address(): unknown } }) =>
    `https://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  return { webhook, limit, log, grant, urlOf };
}
