// The operations port of every binary: /healthz (the process works), /readyz (it can serve: caches
// synced, policy loaded), /metrics (Prometheus). Plain HTTP on loopback or the pod network: it
// carries no API traffic and no secrets.
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { Registry } from 'prom-client';

export interface HealthCheck {
  name: string;
  check: () => boolean | string;
}

export interface OpsServerOptions {
  host?: string;
  port: number;
  registry: Registry;
  liveness?: HealthCheck[];
  readiness?: HealthCheck[];
}

function evaluate(checks: HealthCheck[]): { ok: boolean; body: string } {
  const lines: string[] = [];
  let ok = true;
  for (const c of checks) {
    const r = c.check();
    const pass = r === true;
    ok &&= pass;
    lines.push(
      `[${pass ? '+' : '-'}]${c.name} ${pass ? 'ok' : typeof r === 'string' ? `failed: ${r}` : 'failed'}`,
    );
  }
  return { ok, body: `${lines.join('\n')}\n${ok ? 'ok' : 'not ok'}\n` };
}

export async function startOpsServer(
  options: OpsServerOptions,
): Promise<{ app: FastifyInstance; port: number }> {
  const app = Fastify({ logger: false });
  const probe = (checks: HealthCheck[]) => async (_req: unknown, reply: FastifyReply) => {
    const r = evaluate(checks);
    return reply
      .code(r.ok ? 200 : 503)
      .type('text/plain')
      .send(r.body);
  };
  app.get('/healthz', probe(options.liveness ?? []));
  app.get('/readyz', probe(options.readiness ?? []));
  app.get('/metrics', async (_req, reply) => {
    reply.type(options.registry.contentType);
    return options.registry.metrics();
  });
  await app.listen({ host: options.host ?? '127.0.0.1', port: options.port });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : options.port;
  return { app, port };
}
