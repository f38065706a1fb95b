// Every code the contract can answer with is documented, with its HTTP status, in docs/webhook.md's
// "Denial codes" table, and the table documents no code the contract lacks (the way fastify checks
// its error catalogue against its docs).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { CODE_STATUS, Codes } from './codes.js';

function documented(): Map<string, number> {
  const doc = readFileSync(new URL('../docs/webhook.md', import.meta.url), 'utf8');
  const section = doc.slice(
    doc.indexOf('## Denial codes'),
    doc.indexOf('\n## ', doc.indexOf('## Denial codes') + 1),
  );
  const rows = new Map<string, number>();
  for (const m of section.matchAll(/^\| `(METAL_[A-Z_]+)` \| (\d{3}) \|/gm)) rows.set(m[1]!, Number(m[2]));
  return rows;
}

describe('the denial codes catalogue (docs/webhook.md)', () => {
  const rows = documented();
  const codes = Object.values(Codes).filter((c) => c !== Codes.OK);

  it.each(codes)('%s is documented with its HTTP status', (code) => {
    expect(rows.get(code)).toBe(CODE_STATUS[code]);
  });

  it('documents no code that the contract does not have', () => {
    expect([...rows.keys()].filter((c) => !(codes as string[]).includes(c))).toEqual([]);
  });
});
