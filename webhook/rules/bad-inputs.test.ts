// The table of bad inputs only the webhook judges (webhook/testdata/bad-inputs.yaml), run through the
// rules against the fixture world: every row's verdict, code, status and text.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { ruleInput } from '../testdata/helpers.js';
import { request, type RequestSpec } from '../testdata/load.js';
import { RULES } from '../review.js';

interface Row {
  case: string;
  path: string;
  request: RequestSpec;
  expect: {
    allowed: boolean;
    code?: string;
    status?: number;
    message?: string;
    warning?: string;
    warnings?: number;
  };
}

const rows = parseAllDocuments(
  readFileSync(new URL('../testdata/bad-inputs.yaml', import.meta.url), 'utf8'),
).map((d) => d.toJS() as Row);

describe('webhook/testdata/bad-inputs.yaml', () => {
  it('has rows, each named once', () => {
    const names = rows.map((r) => r.case);
    expect(names.length).toBeGreaterThan(5);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  it.each(rows.map((r) => [r.case, r] as const))('%s', (_name, row) => {
    const rule = RULES.validate[row.path];
    if (typeof rule !== 'function') throw new Error(`no synchronous rule at path ${row.path}`);
    const d = rule(ruleInput(request(row.request)));
    expect(d.allowed).toBe(row.expect.allowed);
    if (row.expect.code) expect(d.code).toBe(row.expect.code);
    if (row.expect.status) expect(d.status).toBe(row.expect.status);
    if (!row.expect.allowed) expect(d.status).not.toBe(429);
    if (row.expect.message) expect(d.message).toContain(row.expect.message);
    if (row.expect.warning) expect(d.warnings).toEqual([expect.stringContaining(row.expect.warning)]);
    if (row.expect.warnings !== undefined) expect(d.warnings).toHaveLength(row.expect.warnings);
  });
});
