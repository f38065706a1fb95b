// Every kind ships an example in manifests/examples/, and every example is valid for its kind:
// the examples double as documentation and as the objects the e2e harness applies.
import { join } from 'node:path';
import { ALL_KINDS, kindFor } from './registry.js';
import { validateObject, formatFieldErrors } from './schema/validate.js';
import { loadYamlDir } from './testdata/load.js';

const examples = loadYamlDir(join(import.meta.dirname, '..', 'manifests', 'examples'));

describe('manifests/examples', () => {
  it('has at least one example of every kind', () => {
    const covered = new Set(examples.map((d) => `${d.object.apiVersion}/${d.object.kind}`));
    const missing = ALL_KINDS.map((k) => `${k.apiVersion}/${k.kind}`).filter((k) => !covered.has(k));
    expect(missing).toEqual([]);
  });

  it('names every object once', () => {
    const ids = examples.map(
      (d) =>
        `${d.object.apiVersion}/${d.object.kind}/${d.object.metadata.namespace ?? ''}/${d.object.metadata.name}`,
    );
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  it.each(
    examples.map((d) => [`${d.file}#${d.index} ${d.object.kind}/${d.object.metadata.name}`, d] as const),
  )('%s is valid', (_id, doc) => {
    const def = kindFor(String(doc.object.apiVersion), String(doc.object.kind));
    expect(def).toBeDefined();
    const result = validateObject(def!, doc.object);
    expect(result.ok ? 'valid' : formatFieldErrors(result.errors)).toBe('valid');
    // Namespaced kinds live in a namespace; cluster-scoped ones must not claim one.
    if (def!.scope === 'Namespaced') expect(doc.object.metadata.namespace).toBeTruthy();
    else expect(doc.object.metadata.namespace).toBeUndefined();
  });
});
