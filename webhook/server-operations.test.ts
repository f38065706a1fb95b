// The webhook server's operations side: health, readiness, logs and sampling, and the object checks
// every route runs before a rule.
import { PolicyStore } from '../lib/policy/store.js';
import { Codes } from '../contract/codes.js';
import { oncePer } from './server.js';
import { find, loadReview, loadWorld, request } from './testdata/load.js';
import { post, setup } from './testing/server.js';

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
