// The webhook server end to end in-process: AdmissionReviews in and out for every route.
import { PolicyStore } from '../lib/policy/store.js';
import { DEFAULT_POLICY } from '../policies/schema.js';
import { Codes } from '../contract/codes.js';
import { loadReview } from './testdata/load.js';
import type { WorldView } from './world.js';
import { FLEET, post, setup } from './testing/server.js';

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
