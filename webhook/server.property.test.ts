// Property-based tests of the HTTP handlers: whatever arrives, the answer is a well-formed
// AdmissionReview for the request's uid (HTTP 200) or a 4xx for what is not a review; never a 5xx,
// never a crash or a hang.
import fc from 'fast-check';
import { Registry } from 'prom-client';
import type { ServerDisruptionBudget } from '../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import { PolicyStore } from '../lib/policy/store.js';
import { DEFAULT_POLICY } from '../policies/schema.js';
import { MemoryBudgetStore } from '../contract/testing/memory-budget-store.js';
import { MemoryWorld } from './testing/memory-world.js';
import { createWebhookServer } from './server.js';
import { loadReview, loadWorld, NOW } from './testdata/load.js';
import { createGrantor } from './grants/reserve.js';

const FIXTURES = [
  'claim-set-serverref-cordoned',
  'claim-create-cordoned',
  'maintenance-to-inmaintenance',
  'maintenance-legacy-policy',
  'policy-configmap-invalid',
  'claim-approve',
];
const PATHS = [
  '/validate/placement',
  '/validate/eviction',
  '/validate/contract',
  '/validate/policy',
  '/validate/legacy-labels',
  '/mutate/contract',
];
const BODY_LIMIT = 256 * 1024;

const budget: ServerDisruptionBudget = {
  metadata: { name: 'fleet', generation: 1 },
  spec: { serverSelector: {}, maxUnavailable: '50%' },
  status: { observedGeneration: 1 },
};
const world = loadWorld();
world.serverBudgets = [budget];
const { app } = createWebhookServer({
  world: new MemoryWorld(world),
  policies: new PolicyStore({ initial: DEFAULT_POLICY }),
  grant: createGrantor(
    new MemoryBudgetStore([{ ref: { kind: 'ServerDisruptionBudget', name: 'fleet' }, budget }]),
    { sleep: () => Promise.resolve() },
  ),
  isReady: () => true,
  clock: () => NOW,
  registry: new Registry(),
  bodyLimit: BODY_LIMIT,
});

afterAll(() => app.close());

async function send(path: string, payload: string, contentType = 'application/json') {
  // A hang fails the property instead of the whole suite timing out.
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error('no answer within 5s')), 5000)),
  );
  try {
    return await Promise.race([
      app.inject({ method: 'POST', url: path, payload, headers: { 'content-type': contentType } }),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Asserts the HTTP answer is a well-formed AdmissionReview for `uid`, or a 4xx. */
function expectWellFormed(res: { statusCode: number; body: string }, uid: unknown) {
  expect(res.statusCode).toBeLessThan(500);
  if (res.statusCode !== 200) {
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    return;
  }
  const body = JSON.parse(res.body) as {
    apiVersion: string;
    kind: string;
    response: Record<string, unknown>;
  };
  expect(body.apiVersion).toBe('admission.k8s.io/v1');
  expect(body.kind).toBe('AdmissionReview');
  expect(body.response.uid).toBe(uid);
  expect(typeof body.response.allowed).toBe('boolean');
  if (!body.response.allowed) {
    const status = body.response.status as { code: number; message: string };
    expect(status.code).toBeGreaterThanOrEqual(400);
    expect(status.message).toMatch(/^METAL_ERR_[A-Z_]+: /);
    // A rule that throws is answered (fail closed), but it is a bug: input must never make one throw.
    expect(status.message).not.toMatch(/^METAL_ERR_INTERNAL/);
  }
  if (body.response.patch !== undefined) {
    expect(body.response.patchType).toBe('JSONPatch');
    expect(Array.isArray(JSON.parse(Buffer.from(body.response.patch as string, 'base64').toString()))).toBe(
      true,
    );
  }
  for (const w of (body.response.warnings as string[] | undefined) ?? []) expect(typeof w).toBe('string');
}

/** Every JSON path of a value (arrays by index), root excluded. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== 'object' || value === null) return [];
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [i, v])
    : Object.entries(value);
  return entries.flatMap(([k, v]) => [[...prefix, k], ...paths(v, [...prefix, k])]);
}

function mutateAt(root: unknown, path: (string | number)[], value: unknown, remove: boolean): void {
  let node = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (remove) delete node[last];
  else node[last] = value;
}

const anyPath = fc.constantFrom(...PATHS);

describe('webhook handlers (property-based)', () => {
  it('answers any JSON value with a 4xx or a well-formed review', async () => {
    await fc.assert(
      fc.asyncProperty(anyPath, fc.jsonValue({ maxDepth: 4 }), async (path, value) => {
        const res = await send(path, JSON.stringify(value));
        expectWellFormed(res, (value as { request?: { uid?: unknown } } | null)?.request?.uid);
      }),
      { numRuns: 200 },
    );
  });

  it('answers malformed JSON and arbitrary text with a 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(anyPath, fc.string({ unit: 'binary', maxLength: 200 }), async (path, text) => {
        let valid = true;
        try {
          JSON.parse(text);
        } catch {
          valid = false;
        }
        const res = await send(path, text);
        if (!valid) expect(res.statusCode).toBe(400);
        else expectWellFormed(res, undefined);
      }),
      { numRuns: 200 },
    );
  });

  it('answers reviews with fields removed or replaced by values of any type', async () => {
    const edit = fc.tuple(fc.nat(), fc.jsonValue({ maxDepth: 3 }), fc.boolean());
    await fc.assert(
      fc.asyncProperty(
        anyPath,
        fc.constantFrom(...FIXTURES),
        fc.array(edit, { minLength: 1, maxLength: 3 }),
        async (path, fixture, edits) => {
          const review = loadReview(fixture);
          for (const [pick, value, remove] of edits) {
            const all = paths(review);
            if (all.length > 0) mutateAt(review, all[pick % all.length]!, value, remove);
          }
          const res = await send(path, JSON.stringify(review));
          expectWellFormed(res, (review as { request?: { uid?: unknown } }).request?.uid);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('admits kinds and resources no rule knows, with a well-formed answer', async () => {
    const name = fc.stringMatching(/^[a-z][a-z0-9.-]{0,20}$/);
    await fc.assert(
      fc.asyncProperty(
        anyPath,
        name,
        name,
        fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT'),
        async (path, group, resource, operation) => {
          const review = loadReview('claim-create-cordoned');
          review.request.kind = { group, version: 'v1', kind: resource };
          review.request.resource = { group, version: 'v1', resource };
          review.request.operation = operation;
          const res = await send(path, JSON.stringify(review));
          expect(res.statusCode).toBe(200);
          expectWellFormed(res, review.request.uid);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('refuses bodies over the limit with 413, whatever their content', async () => {
    await fc.assert(
      fc.asyncProperty(
        anyPath,
        fc.integer({ min: BODY_LIMIT + 1, max: BODY_LIMIT * 3 }),
        async (path, size) => {
          const res = await send(path, `"${'a'.repeat(size)}"`);
          expect(res.statusCode).toBe(413);
        },
      ),
      { numRuns: 20 },
    );
  });
});
