// Writes manifests/crds/ from the schema source in api/. `--check` fails instead of writing when
// the committed CRDs are stale (the unit test api/crds.test.ts does the same).
import { readFileSync, writeFileSync, readdirSync, unlinkSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { renderCRDs } from '../api/render.js';

const dir = join(import.meta.dirname, '..', 'manifests', 'crds');
const check = process.argv.includes('--check');
const wanted = renderCRDs();
mkdirSync(dir, { recursive: true });
const existing = new Set(readdirSync(dir).filter((f) => f.endsWith('.yaml')));
const stale: string[] = [];
for (const [file, text] of wanted) {
  existing.delete(file);
  let current: string | undefined;
  try {
    current = readFileSync(join(dir, file), 'utf8');
  } catch {
    current = undefined;
  }
  if (current === text) continue;
  stale.push(file);
  if (!check) writeFileSync(join(dir, file), text);
}
for (const extra of existing) {
  stale.push(`${extra} (no longer generated)`);
  if (!check) unlinkSync(join(dir, extra));
}
if (check && stale.length > 0) {
  console.error(`manifests/crds is stale: ${stale.join(', ')}. Run: npm run gen:crds`);
  process.exit(1);
}
console.log(check ? 'manifests/crds is up to date' : `wrote ${wanted.size} CRDs (${stale.length} changed)`);
