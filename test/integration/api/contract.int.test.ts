// The API contract against a real API server: every CRD installs, every example is accepted, and
// every invalid object in api/testdata/invalid is refused naming the expected field.
import { join } from 'node:path';
import { ALL_KINDS, kindFor } from '../../../api/registry.js';
import { crdName } from '../../../api/schema/crd.js';
import { loadInvalidTable, loadYamlDir, messageMatches, type YamlDoc } from '../../../api/testdata/load.js';
import { adminClient, freshNamespace } from '../../../e2e/harness/env.js';
import { REPO_ROOT } from '../../../e2e/harness/control-plane.js';
import { KubeApiError, isAlreadyExists, isNotFound } from '../../../lib/kube/errors.js';
import { Core, resourceOf } from '../../../lib/kube/resources.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import type { KubeObject } from '../../../api/schema/meta.js';

interface CRD extends KubeObject {
  spec: { versions: { name: string; served: boolean; subresources?: { status?: object } }[] };
  status?: { conditions?: { type: string; status: string }[] };
}

function clientFor(admin: KubeClient, obj: KubeObject) {
  const def = kindFor(obj.apiVersion ?? '', obj.kind ?? '');
  if (!def) throw new Error(`no kind definition for ${obj.apiVersion} ${obj.kind}`);
  return { def, res: admin.resource<KubeObject>(resourceOf(def)) };
}

/** Namespaced examples go to the test's namespace; cluster-scoped ones keep their names. */
function place(doc: YamlDoc, ns: string): KubeObject {
  const obj = structuredClone(doc.object);
  if (obj.metadata.namespace !== undefined) obj.metadata.namespace = ns;
  return obj;
}

async function createOrKeep(admin: KubeClient, obj: KubeObject): Promise<void> {
  const { res } = clientFor(admin, obj);
  try {
    await res.create(obj);
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
  }
}

/**
 * Deletes what a test created outside its namespace. The examples include a ServerDisruptionBudget
 * that selects every server: left behind, it would hold every later test's servers to its budget.
 */
async function deleteClusterScoped(admin: KubeClient, objects: readonly KubeObject[]): Promise<void> {
  for (const obj of objects.filter((o) => o.metadata.namespace === undefined)) {
    const { res } = clientFor(admin, obj);
    try {
      await res.delete(obj.metadata.name!);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}

describe('API contract on a real API server', () => {
  let admin: KubeClient;
  beforeAll(async () => {
    admin = await adminClient();
  });
  afterAll(async () => {
    await admin.close();
  });

  test('every kind has an Established CRD serving its version with a status subresource', async () => {
    const crds = admin.resource<CRD>(Core.CustomResourceDefinition);
    for (const def of ALL_KINDS) {
      const crd = await crds.get(crdName(def));
      expect(crd.status?.conditions?.find((c) => c.type === 'Established')?.status).toBe('True');
      const version = crd.spec.versions.find((v) => v.name === def.version);
      expect(version?.served).toBe(true);
      expect(version?.subresources?.status).toBeDefined();
    }
  });

  test('every example is accepted, status included', async () => {
    const ns = await freshNamespace(admin, 'examples');
    const docs = loadYamlDir(join(REPO_ROOT, 'manifests', 'examples'));
    expect(docs.length).toBeGreaterThanOrEqual(ALL_KINDS.length);
    const failures: string[] = [];
    const placed = docs.map((doc) => place(doc, ns));
    try {
      for (const [i, obj] of placed.entries()) {
        const doc = docs[i]!;
        const { def, res } = clientFor(admin, obj);
        try {
          const created = await res.create(obj);
          const status = (doc.object as { status?: unknown }).status;
          if (status !== undefined && def.statusSubresource) {
            await res.replaceStatus({ ...created, status } as KubeObject);
          }
        } catch (e) {
          failures.push(`${doc.file}#${doc.index} ${obj.kind}/${obj.metadata.name}: ${(e as Error).message}`);
        }
      }
    } finally {
      await deleteClusterScoped(admin, placed);
    }
    expect(failures).toEqual([]);
  });

  test('every invalid object is refused, naming the expected field', async () => {
    const ns = await freshNamespace(admin, 'invalid');
    const table = loadInvalidTable(join(REPO_ROOT, 'api', 'testdata', 'invalid'));
    expect(table.cases.length).toBeGreaterThan(50);
    const setup = table.setup.map((doc) => place(doc, ns));
    try {
      for (const obj of setup) await createOrKeep(admin, obj);
      expect(await invalidCasesNotRefused(admin, table.cases, ns)).toEqual([]);
    } finally {
      await deleteClusterScoped(admin, setup);
    }
  });
});

/** The cases the API server did not refuse as expected, each with what happened instead. */
async function invalidCasesNotRefused(
  admin: KubeClient,
  cases: ReturnType<typeof loadInvalidTable>['cases'],
  ns: string,
): Promise<string[]> {
  const wrong: string[] = [];
  for (const c of cases) {
    const obj = place(c.doc, ns);
    const { res } = clientFor(admin, obj);
    try {
      if (c.expectOn === 'update') {
        const current = await res.get(obj.metadata.name!, obj.metadata.namespace);
        await res.replace({
          ...obj,
          metadata: { ...obj.metadata, resourceVersion: current.metadata.resourceVersion },
        });
      } else {
        await res.create(obj, { dryRun: true });
      }
      wrong.push(`${c.id}: accepted, expected a refusal naming ${c.expectField}`);
    } catch (e) {
      if (!(e instanceof KubeApiError) || e.statusCode !== 422) {
        wrong.push(`${c.id}: expected 422 Invalid, got ${(e as Error).message}`);
        continue;
      }
      const causes = e.status.details?.causes ?? [];
      const fields = causes.map((cause) => cause.field);
      if (!fields.includes(c.expectField)) {
        wrong.push(`${c.id}: refused naming ${JSON.stringify(fields)}, expected ${c.expectField}`);
        continue;
      }
      const messages = causes.filter((cause) => cause.field === c.expectField).map((cause) => cause.message);
      if (!messageMatches(messages, c.expectMessage))
        wrong.push(
          `${c.id}: refused with ${JSON.stringify(messages)}, expected a message with ${JSON.stringify(c.expectMessage)}`,
        );
    }
  }
  return wrong;
}
