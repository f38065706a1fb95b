// The table of invalid objects in api/testdata/invalid/ (format: README.md there). Cases marked
// `schema` must be refused by our own validator naming the same field the API server names;
// cases marked `cel` must pass it (only the API server's CEL rules catch them), so the marking
// stays honest. A case's expect-message must appear in our refusal of its field. The integration
// suite sends the same table to a real API server and holds its messages to the same text.
import { join } from 'node:path';
import { ALL_KINDS, kindFor } from './registry.js';
import { validateObject, formatFieldErrors } from './schema/validate.js';
import { loadInvalidTable, messageMatches } from './testdata/load.js';

const table = loadInvalidTable(join(import.meta.dirname, 'testdata', 'invalid'));

function definition(apiVersion: unknown, kind: unknown) {
  const def = kindFor(String(apiVersion), String(kind));
  if (!def) throw new Error(`no registered kind ${String(apiVersion)}/${String(kind)}`);
  return def;
}

describe('api/testdata/invalid', () => {
  it('covers every kind and both sources', () => {
    const kinds = new Set(table.cases.map((c) => `${c.doc.object.apiVersion}/${c.doc.object.kind}`));
    expect(ALL_KINDS.map((k) => `${k.apiVersion}/${k.kind}`).filter((k) => !kinds.has(k))).toEqual([]);
    expect(table.cases.some((c) => c.expectSource === 'schema')).toBe(true);
    expect(table.cases.some((c) => c.expectSource === 'cel')).toBe(true);
    expect(table.cases.some((c) => c.expectOn === 'update')).toBe(true);
  });

  it('names every case once', () => {
    const ids = table.cases.map((c) => `${c.doc.object.kind}/${c.doc.object.metadata.name}`);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  it.each(table.setup.map((d) => [`${d.file}#${d.index} ${d.object.metadata.name}`, d] as const))(
    'setup object %s is valid',
    (_id, doc) => {
      const result = validateObject(definition(doc.object.apiVersion, doc.object.kind), doc.object);
      expect(result.ok ? 'valid' : formatFieldErrors(result.errors)).toBe('valid');
    },
  );

  const schemaCases = table.cases.filter((c) => c.expectSource === 'schema');
  it.each(schemaCases.map((c) => [`${c.id} ${c.doc.object.metadata.name}`, c] as const))(
    'schema case %s is refused naming its field',
    (_id, c) => {
      const result = validateObject(definition(c.doc.object.apiVersion, c.doc.object.kind), c.doc.object);
      expect(result.ok).toBe(false);
      const errors = result.ok ? [] : result.errors;
      expect(errors.map((e) => e.field)).toContain(c.expectField);
      const messages = errors.filter((e) => e.field === c.expectField).map((e) => e.message);
      expect(messageMatches(messages, c.expectMessage) ? c.expectMessage : messages).toEqual(c.expectMessage);
    },
  );

  const celCases = table.cases.filter((c) => c.expectSource === 'cel');
  it.each(celCases.map((c) => [`${c.id} ${c.doc.object.metadata.name}`, c] as const))(
    'cel case %s passes the structural validator',
    (_id, c) => {
      const result = validateObject(definition(c.doc.object.apiVersion, c.doc.object.kind), c.doc.object);
      expect(result.ok ? 'valid' : formatFieldErrors(result.errors)).toBe('valid');
    },
  );
});
