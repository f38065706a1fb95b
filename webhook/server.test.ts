import { Writable } from 'node:stream';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { ServerDisruptionBudget } from '../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import { PolicyStore } from '../lib/policy/store.js';
import { DEFAULT_POLICY } from '../policies/schema.js';
import { Codes } from '../contract/codes.js';
import { MemoryBudgetStore } from '../contract/testing/memory-budget-store.js';
import { MemoryWorld } from './testing/memory-world.js';
import { createWebhookServer, oncePer, type WebhookServerOptions } from './server.js';
import { find, loadReview, loadWorld, NOW, request } from './testdata/load.js';
import type { WorldView } from './world.js';
import { type BudgetRef } from '../contract/budgets.js';
import { createGrantor } from './grants/reserve.js';

const FLEET: BudgetRef = { kind: 'ServerDisruptionBudget', name: 'fleet' };
const fleet = (max: number): ServerDisruptionBudget => ({
  metadata: { name: 'fleet', generation: 1 },
  spec: { serverSelector: {}, maxUnavailable: max },
  status: { observedGeneration: 1 },
});

function setup(over: Partial<WebhookServerOptions> & { budget?: number } = {}) {
  const world = loadWorld();
  // The world has three servers unavailable already (cordoned, Error, InMaintenance): 4 leaves one slot.
  world.serverBudgets = [fleet(over.budget ?? 4)];
  const store = new MemoryBudgetStore([{ ref: FLEET, budget: fleet(over.budget ?? 4) }]);
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  let ready = true;
  const server = createWebhookServer({
    world: new MemoryWorld(world),
    policies: new PolicyStore({ initial: DEFAULT_POLICY }),
    grant: createGrantor(store, { sleep: () => Promise.resolve() }),
    isReady: () => ready,
    clock: () => NOW,
    logger: pino({ name: 'webhook', level: 'debug' }, sink),
    registry: new Registry(),
    ...over,
  });
  return { ...server, store, lines, setReady: (r: boolean) => (ready = r) };
}

const post = (app: ReturnType<typeof setup>['app'], url: string, payload: unknown) =>
  app.inject({
    method: 'POST',
    url,
    payload: payload as string,
    headers: { 'content-type': 'application/json' },
  });

describe('webhook server: AdmissionReview in and out', () => {
  it('answers a denial with a well-formed AdmissionReview, uid copied, code and status set', async () => {
    const { app } = setup();
    const review = loadReview('claim-set-serverref-cordoned');
    const res = await post(app, '/validate/placement', review);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid: review.request.uid,
        allowed: false,
        status: {
          code: 403,
          reason: 'Forbidden',
          message: expect.stringMatching(
            /^METAL_ERR_SERVER_UNCLAIMABLE: binding claim tenant-a\/claim-new to server srv-cordoned/,
          ),
          details: { causes: [expect.objectContaining({ reason: Codes.SERVER_UNCLAIMABLE })] },
        },
      },
    });
  });

  it('returns warnings on an allowed review', async () => {
    const { app } = setup();
    const res = await post(app, '/validate/placement', loadReview('claim-create-cordoned'));
    expect(res.json().response).toMatchObject({
      allowed: true,
      warnings: [expect.stringContaining('stays unbound')],
    });
  });

  it('returns a base64 RFC 6902 patch on the mutating path', async () => {
    const { app } = setup();
    const res = await post(app, '/mutate/contract', loadReview('maintenance-legacy-policy'));
    const body = res.json();
    expect(body.response).toMatchObject({ allowed: true, patchType: 'JSONPatch' });
    expect(JSON.parse(Buffer.from(body.response.patch, 'base64').toString())).toEqual([
      { op: 'add', path: '/spec/approval', value: { required: true } },
    ]);
    expect(body.response.warnings[0]).toContain('deprecated');
  });

  it('takes budget room on the eviction path and counts it in the metrics', async () => {
    const { app, store } = setup();
    const res = await post(app, '/validate/eviction', loadReview('maintenance-to-inmaintenance'));
    expect(res.json().response).toEqual({
      uid: expect.any(String),
      allowed: true,
      auditAnnotations: { 'approval-source': 'NotRequired', grants: 'ServerDisruptionBudget/fleet' },
    });
    expect(store.current(FLEET)?.status?.grants?.map((g) => g.maintenanceUID)).toEqual(['uid-free']);
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toContain(
      'metal_webhook_decisions_total{type="validate",rule="eviction",result="allowed",code="METAL_OK"} 1',
    );
    expect(metrics).toContain('metal_webhook_grants_total{result="granted",dry_run="false"} 1');
    for (const le of ['0.005', '0.025', '0.1', '0.5', '1', '2.5', '10', '25']) {
      expect(metrics).toContain(
        `metal_webhook_admission_duration_seconds_bucket{le="${le}",type="validate",rule="eviction"}`,
      );
    }
  });

  it('answers a budget denial with 429, the budget, allowed and in use, and a retry hint', async () => {
    const { app } = setup({ budget: 0 });
    const res = await post(app, '/validate/eviction', loadReview('maintenance-to-inmaintenance'));
    expect(res.json().response).toMatchObject({
      allowed: false,
      status: { code: 429, reason: 'TooManyRequests', details: { retryAfterSeconds: 30 } },
    });
    expect(res.json().response.status.message).toMatch(
      /METAL_ERR_BUDGET_EXHAUSTED: ServerDisruptionBudget fleet: \d+ unavailable, 0 allowed/,
    );
  });

  it('reserves nothing on a dry run', async () => {
    const { app, store } = setup();
    const review = loadReview('maintenance-to-inmaintenance');
    review.request.dryRun = true;
    const res = await post(app, '/validate/eviction', review);
    expect(res.json().response).toMatchObject({
      allowed: true,
      warnings: [expect.stringContaining('dry run')],
      // Nothing holds it: the audit record names no grants.
      auditAnnotations: { 'approval-source': 'NotRequired' },
    });
    expect(store.writes).toBe(0);
  });

  it('counts grant conflicts and retries', async () => {
    const { app, store, registry } = setup();
    let bumps = 2;
    store.hooks.beforeReplace = (ref, s) => {
      if (bumps-- > 0) s.put(ref, s.current(ref)!);
    };
    await post(app, '/validate/eviction', loadReview('maintenance-to-inmaintenance'));
    expect(
      (await registry.getSingleMetric('metal_webhook_grant_conflicts_total')!.get()).values[0]!.value,
    ).toBe(2);
    expect(
      (await registry.getSingleMetric('metal_webhook_grant_retries_total')!.get()).values[0]!.value,
    ).toBe(2);
  });

  it('denies a malformed object in a valid review, naming the field', async () => {
    const { app } = setup();
    const review = loadReview('claim-create-cordoned');
    delete (review.request.object as { spec: { image?: string } }).spec.image;
    const res = await post(app, '/validate/placement', review);
    expect(res.statusCode).toBe(200);
    expect(res.json().response).toMatchObject({
      allowed: false,
      status: {
        code: 422,
        message: expect.stringContaining('spec.image'),
        details: { causes: [{ field: 'spec.image' }] },
      },
    });
  });

  it('fails closed with METAL_ERR_INTERNAL when a rule throws, and still answers the review', async () => {
    const broken = new Proxy({} as WorldView, {
      get: () => () => {
        throw new Error('cache exploded');
      },
    });
    const { app } = setup({ world: broken });
    const res = await post(app, '/validate/placement', loadReview('claim-set-serverref-cordoned'));
    expect(res.json().response).toMatchObject({
      allowed: false,
      status: { code: 500, message: expect.stringContaining('METAL_ERR_INTERNAL') },
    });
  });

  it('denies with a retry hint while no policy is loaded, but still validates the policy ConfigMap', async () => {
    const { app } = setup({ policies: new PolicyStore() });
    expect(
      (await post(app, '/validate/placement', loadReview('claim-create-cordoned'))).json().response.status
        .message,
    ).toContain(Codes.NO_POLICY);
    expect(
      (await post(app, '/validate/policy', loadReview('policy-configmap-invalid'))).json().response.status
        .message,
    ).toContain(Codes.POLICY_INVALID);
  });

  it('answers 400 for what is not an AdmissionReview, 404 for unknown paths, 413 for oversized bodies', async () => {
    const { app } = setup({ bodyLimit: 64 * 1024 });
    expect((await post(app, '/validate/placement', '{"apiVersion":')).statusCode).toBe(400);
    expect(
      (
        await post(app, '/validate/placement', {
          apiVersion: 'admission.k8s.io/v1beta1',
          kind: 'AdmissionReview',
          request: {},
        })
      ).statusCode,
    ).toBe(400);
    expect((await post(app, '/validate/placement', [])).statusCode).toBe(400);
    expect((await post(app, '/validate/nope', loadReview('claim-create-cordoned'))).statusCode).toBe(404);
    expect((await post(app, '/other/placement', loadReview('claim-create-cordoned'))).statusCode).toBe(404);
    const big = loadReview('claim-create-cordoned');
    (big.request.object as { metadata: { annotations?: object } }).metadata.annotations = {
      x: 'y'.repeat(70 * 1024),
    };
    expect((await post(app, '/validate/placement', big)).statusCode).toBe(413);
    const res = await app.inject({
      method: 'POST',
      url: '/validate/placement',
      payload: '<x/>',
      headers: { 'content-type': 'application/xml' },
    });
    expect(res.statusCode).toBe(415);
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toContain('metal_webhook_malformed_requests_total{reason="InvalidReview"} 2');
    expect(metrics).toContain(
      'metal_webhook_malformed_requests_total{reason="FST_ERR_CTP_BODY_TOO_LARGE"} 1',
    );
  });

  it('answers reviews that arrive together each with its own answer, whatever the others hold', async () => {
    const { app, store } = setup();
    const withUid = (name: string, uid: string) => {
      const review = loadReview(name);
      review.request.uid = uid;
      return review;
    };
    const [denied, warned, granted, broken, notReview, alsoDenied] = await Promise.all([
      post(app, '/validate/placement', withUid('claim-set-serverref-cordoned', 'u-denied')),
      post(app, '/validate/placement', withUid('claim-create-cordoned', 'u-warned')),
      post(app, '/validate/eviction', withUid('maintenance-to-inmaintenance', 'u-granted')),
      post(app, '/validate/placement', '{"apiVersion":'),
      post(app, '/validate/placement', []),
      post(app, '/validate/placement', withUid('claim-set-serverref-cordoned', 'u-denied-2')),
    ]);
    expect(denied.json().response).toMatchObject({ uid: 'u-denied', allowed: false });
    expect(warned.json().response).toMatchObject({ uid: 'u-warned', allowed: true });
    expect(granted.json().response).toMatchObject({ uid: 'u-granted', allowed: true });
    expect(store.current(FLEET)?.status?.grants).toHaveLength(1);
    expect(broken.statusCode).toBe(400);
    expect(broken.json()).toMatchObject({ reason: 'InvalidJSON', message: /^body is not valid JSON/ });
    expect(notReview.statusCode).toBe(400);
    expect(notReview.json()).toMatchObject({ reason: 'InvalidReview' });
    expect(alsoDenied.json().response).toMatchObject({ uid: 'u-denied-2', allowed: false });
  });

  it('answers 500 to a review whose handling throws, and its neighbours as usual', async () => {
    // A policy store that breaks on its first read: decide() reads it before any rule's own guard.
    const policies = new PolicyStore({ initial: DEFAULT_POLICY });
    const current = policies.current.bind(policies);
    let reads = 0;
    policies.current = () => {
      if (reads++ === 0) throw new Error('store exploded');
      return current();
    };
    const { app } = setup({ policies });
    const [first, second] = await Promise.all([
      post(app, '/validate/placement', loadReview('claim-set-serverref-cordoned')),
      post(app, '/validate/placement', loadReview('claim-create-cordoned')),
    ]);
    expect(first.statusCode).toBe(500);
    expect(first.json()).toEqual({ code: 500, reason: 'Error', message: 'internal error' });
    expect(second.json().response).toMatchObject({ allowed: true });
  });

  it('rejects prototype-poisoning bodies with 400', async () => {
    const { app } = setup();
    expect((await post(app, '/validate/placement', '{"__proto__": {"polluted": true}}')).statusCode).toBe(
      400,
    );
  });
});

describe('webhook server: health, readiness, logs', () => {
  it('is healthy always and ready only with synced caches and a loaded policy', async () => {
    const s = setup();
    expect((await s.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await s.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({
      ready: true,
      cachesSynced: true,
      policyLoaded: true,
    });
    s.setReady(false);
    expect((await s.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
    const noPolicy = setup({ policies: new PolicyStore() });
    expect((await noPolicy.app.inject({ method: 'GET', url: '/readyz' })).json()).toMatchObject({
      ready: false,
      policyLoaded: false,
    });
  });

  it('logs why a budget denied, with the retry hint', async () => {
    const { app, lines } = setup({ budget: 0 });
    await post(app, '/validate/eviction', loadReview('maintenance-to-inmaintenance'));
    expect(lines.at(-1)).toMatchObject({
      type: 'validate',
      rule: 'eviction',
      uid: expect.any(String),
      code: Codes.BUDGET_EXHAUSTED,
      retryAfterSeconds: 30,
      msg: expect.stringContaining('ServerDisruptionBudget fleet'),
      // The DisruptionBudget cause names the budget (refKey), for the controllers and for grep.
      fields: ['ServerDisruptionBudget//fleet'],
    });
    // A cordoned server's denial has a cause without a field: the key is left out, not logged empty.
    await post(app, '/validate/placement', loadReview('claim-set-serverref-cordoned'));
    expect(lines.at(-1)).toMatchObject({ rule: 'placement', code: Codes.SERVER_UNCLAIMABLE });
    expect(lines.at(-1)).not.toHaveProperty('fields');
  });

  it('logs one line per review with the request uid and never the object body', async () => {
    const { app, lines } = setup();
    const review = loadReview('policy-configmap-invalid');
    await post(app, '/validate/policy', review);
    const line = lines.find((l) => l.uid === review.request.uid);
    expect(line).toMatchObject({
      rule: 'policy',
      allowed: false,
      code: Codes.POLICY_INVALID,
      resource: '/configmaps',
      operation: 'UPDATE',
      fields: ['data["policy.yaml"].grants.ttl', 'data["policy.yaml"].legacyLabels.mode'],
      // The object under its own key: a `name` of its own would duplicate the logger's in the JSON line.
      object: `${review.request.namespace}/${review.request.name}`,
      name: 'webhook',
    });
    const all = JSON.stringify(lines);
    expect(all).not.toContain('two minutes');
    expect(all).not.toContain('ignore');
    expect(all).not.toContain('grants:');
  });

  it('samples denial lines per rule and code, says how many it left out, and counts them', async () => {
    const { app, lines } = setup({ logSampling: { initial: 1, thereafter: 3 } });
    const cordoned = loadReview('claim-set-serverref-cordoned');
    for (let i = 0; i < 5; i++) await post(app, '/validate/placement', cordoned);
    // Another code on the same rule has its own window.
    const tainted = structuredClone(cordoned);
    (tainted.request.object as { spec: { serverRef: { name: string } } }).spec.serverRef.name = 'srv-tainted';
    await post(app, '/validate/placement', tainted);
    const denials = lines.filter((l) => l.rule === 'placement' && l.allowed === false);
    // Lines 1 and 4 of the cordoned server's; the tainted one's first.
    expect(denials.map((l) => [l.code, l.unlogged])).toEqual([
      [Codes.SERVER_UNCLAIMABLE, undefined],
      [Codes.SERVER_UNCLAIMABLE, 2],
      [Codes.SERVER_TAINTED, undefined],
    ]);
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toContain(
      `metal_webhook_review_lines_unlogged_total{type="validate",rule="placement",code="${Codes.SERVER_UNCLAIMABLE}"} 3`,
    );
    expect(metrics).toContain(
      `metal_webhook_decisions_total{type="validate",rule="placement",result="denied",code="${Codes.SERVER_UNCLAIMABLE}"} 5`,
    );
  });

  it('writes every denial line with sampling off', async () => {
    const { app, lines } = setup({ logSampling: false });
    for (let i = 0; i < 150; i++)
      await post(app, '/validate/placement', loadReview('claim-set-serverref-cordoned'));
    expect(lines.filter((l) => l.code === Codes.SERVER_UNCLAIMABLE)).toHaveLength(150);
  });
});

/** The answer to a review refused as malformed (422), with a cause naming `field`. */
const refusedNaming = (field: string) => ({
  allowed: false,
  status: { code: 422, details: { causes: expect.arrayContaining([expect.objectContaining({ field })]) } },
});

describe('webhook server: object checks', () => {
  it('still admits deleting a stored object that does not match its schema', async () => {
    const { app } = setup();
    const review = loadReview('claim-create-cordoned');
    review.request.operation = 'DELETE';
    review.request.oldObject = {
      metadata: { name: 'claim-new', namespace: 'tenant-a' },
      spec: { power: 42 },
    };
    review.request.object = null;
    const res = await post(app, '/validate/contract', review);
    expect(res.json().response).toMatchObject({ allowed: true });
  });

  it('denies an update whose stored object is malformed, naming the oldObject field', async () => {
    const { app } = setup();
    const review = loadReview('claim-approve');
    (review.request.oldObject as { spec: { power: unknown } }).spec.power = 42;
    const res = await post(app, '/validate/contract', review);
    expect(res.json().response).toMatchObject(refusedNaming('oldObject.spec.power'));
  });

  type ServerParts = { spec: Record<string, unknown>; status: Record<string, unknown> };

  /** A binding of srv-maint (in maintenance by its typed status), its old and new Server changed by `edit`. */
  const bindMaint = (edit: (server: ServerParts) => void) => {
    const server = find(loadWorld().servers, 'srv-maint');
    const old = structuredClone(server);
    const next = structuredClone(server);
    next.spec.serverClaimRef = { namespace: 'tenant-a', name: 'claim-a' };
    for (const s of [old, next]) edit(s as unknown as ServerParts);
    return {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: request({ kind: 'Server', operation: 'UPDATE', object: next, oldObject: old }),
    };
  };

  // No rule reads these fields: a shape other than our model's must not stop the decision.
  it.each<[string, (server: ServerParts) => void]>([
    [
      'its inventory does not match our model',
      ({ status }) => {
        status.processors = 'two sockets';
        status.networkInterfaces = [{ name: 7 }];
      },
    ],
    [
      'spec fields placement does not read do not match our model',
      ({ spec }) => {
        spec.bootOrder = 'disk first';
        spec.power = 42;
        delete spec.systemUUID;
      },
    ],
  ])('judges a Server on its merits when %s', async (_what, edit) => {
    const { app } = setup();
    const res = await post(app, '/validate/placement', bindMaint(edit));
    expect(res.json().response).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(res.json().response.status.message).toContain(Codes.SERVER_IN_MAINTENANCE);
  });

  it.each<[string, (server: ServerParts) => void]>([
    [
      'spec.taints',
      ({ spec }) => {
        spec.taints = 'NoBind';
      },
    ],
    [
      'status.maintenance',
      ({ status }) => {
        status.maintenance = 'InMaintenance';
      },
    ],
  ])('refuses a Server whose %s, which placement reads, has the wrong shape', async (field, edit) => {
    const { app } = setup();
    const res = await post(app, '/validate/placement', bindMaint(edit));
    expect(res.json().response).toMatchObject(refusedNaming(field));
  });
});

describe('oncePer', () => {
  it('opens at most once per interval and tells how many calls it kept shut since', () => {
    let t = 0;
    const gate = oncePer(60_000, () => t);
    expect(gate()).toBe(0);
    t = 1_000;
    expect(gate()).toBeUndefined();
    t = 59_999;
    expect(gate()).toBeUndefined();
    t = 60_000;
    expect(gate()).toBe(2);
    expect(gate()).toBeUndefined();
  });
});
