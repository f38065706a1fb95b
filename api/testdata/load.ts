// Reads the YAML fixtures (manifests/examples, api/testdata/invalid) the way kubectl does, so a
// unit test sees the same values the API server would: YAML 1.1 booleans (On, yes), but
// timestamps stay strings (sigs.k8s.io/yaml never turns them into dates).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, type Tags } from 'yaml';
import type { KubeObject } from '../schema/meta.js';

export const EXPECT_FIELD = 'test.metal.ironcore.dev/expect-field';
export const EXPECT_SOURCE = 'test.metal.ironcore.dev/expect-source';
export const EXPECT_ON = 'test.metal.ironcore.dev/expect-on';
export const EXPECT_MESSAGE = 'test.metal.ironcore.dev/expect-message';

export interface YamlDoc {
  file: string;
  /** 0-based position of the document in its file. */
  index: number;
  object: KubeObject & Record<string, unknown>;
}

const withoutTimestamps = (tags: Tags) =>
  tags.filter((t) => (typeof t === 'string' ? t !== 'timestamp' : t.tag !== 'tag:yaml.org,2002:timestamp'));

export function parseYamlDocuments(text: string, file = '<inline>'): YamlDoc[] {
  const docs: YamlDoc[] = [];
  parseAllDocuments(text, { version: '1.1', customTags: withoutTimestamps }).forEach((doc, index) => {
    if (!('errors' in doc)) throw new Error(`${file}: not a YAML stream`);
    if (doc.errors.length > 0)
      throw new Error(`${file}#${index}: ${doc.errors.map((e) => e.message).join('; ')}`);
    const object: unknown = doc.toJS();
    if (object === null || object === undefined) return;
    if (typeof object !== 'object' || Array.isArray(object))
      throw new Error(`${file}#${index}: not an object`);
    docs.push({ file, index, object: object as YamlDoc['object'] });
  });
  return docs;
}

/** Every document of every *.yaml file in dir, in file-name order. */
export function loadYamlDir(dir: string): YamlDoc[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .flatMap((f) => parseYamlDocuments(readFileSync(join(dir, f), 'utf8'), f));
}

export type ExpectSource = 'schema' | 'cel';

export interface InvalidCase {
  /** file#index, for messages. */
  id: string;
  doc: YamlDoc;
  /** Field path as the API server reports it, e.g. spec.maxUnavailable or spec.variables[0].key. */
  expectField: string;
  /** schema: our ajv validator rejects it too; cel: only the API server does. */
  expectSource: ExpectSource;
  /**
   * Texts (one per line of the annotation) the refusal of expectField must contain: in the API
   * server's cause, and for schema cases in our validator's message too; usually the value given and
   * what would be valid. Empty: the field alone is checked.
   */
  expectMessage: string[];
  expectOn: 'create' | 'update';
  /** For update cases: the object to create first (the nearest preceding setup document of that name). */
  original?: YamlDoc;
}

export interface InvalidTable {
  cases: InvalidCase[];
  /** Documents without expectations: valid objects to create first (originals of update cases). */
  setup: YamlDoc[];
}

const identity = (o: KubeObject) =>
  `${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** Whether one of `messages` contains every expected text. */
export function messageMatches(
  messages: readonly (string | undefined)[],
  expected: readonly string[],
): boolean {
  return messages.some((m) => m !== undefined && expected.every((t) => m.includes(t)));
}

/** Parses api/testdata/invalid (format: README.md there). Throws on a malformed table. */
export function loadInvalidTable(dir: string): InvalidTable {
  const cases: InvalidCase[] = [];
  const setup: YamlDoc[] = [];
  for (const doc of loadYamlDir(dir)) {
    const id = `${doc.file}#${doc.index}`;
    const annotations = doc.object.metadata?.annotations ?? {};
    const expectField = annotations[EXPECT_FIELD];
    const expectSource = annotations[EXPECT_SOURCE];
    const expectOn = annotations[EXPECT_ON] ?? 'create';
    if (expectField === undefined) {
      if ([EXPECT_SOURCE, EXPECT_ON, EXPECT_MESSAGE].some((a) => annotations[a] !== undefined)) {
        throw new Error(`${id}: expect-source/expect-on/expect-message without expect-field`);
      }
      setup.push(doc);
      continue;
    }
    if (expectSource !== 'schema' && expectSource !== 'cel')
      throw new Error(`${id}: expect-source must be schema or cel`);
    if (expectOn !== 'create' && expectOn !== 'update')
      throw new Error(`${id}: expect-on must be create or update`);
    let original: YamlDoc | undefined;
    if (expectOn === 'update') {
      original = [...setup]
        .reverse()
        .find((s) => s.file === doc.file && identity(s.object) === identity(doc.object));
      if (!original)
        throw new Error(`${id}: update case without a preceding original of the same name in ${doc.file}`);
    }
    const expectMessage = (annotations[EXPECT_MESSAGE] ?? '')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    cases.push({ id, doc, expectField, expectSource, expectOn, original, expectMessage });
  }
  return { cases, setup };
}
