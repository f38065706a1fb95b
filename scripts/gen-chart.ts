// Writes what is generated from the install's one source:
//   manifests/policy/policy.yaml   the policy ConfigMap, from policies/default-policy.yaml (kustomize
//                                  reads nothing outside manifests/)
//   charts/metal-maintenance/      the Helm chart, from `kubectl kustomize manifests` (scripts/lib/chart.ts)
// `--check` fails instead of writing when a committed file is stale. Needs the cached kubectl
// (scripts/lib/k8s-tools.sh, built on first use).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { chartFiles, CHART_NAME } from './lib/chart.js';

const root = join(import.meta.dirname, '..');
const check = process.argv.includes('--check');
const stale: string[] = [];

function sync(path: string, text: string): void {
  let current: string | undefined;
  try {
    current = readFileSync(path, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === text) return;
  stale.push(relative(root, path));
  if (check) return;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

function filesUnder(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => relative(dir, join(e.parentPath, e.name)));
  } catch {
    return [];
  }
}

const policy = readFileSync(join(root, 'policies', 'default-policy.yaml'), 'utf8');
sync(
  join(root, 'manifests', 'policy', 'policy.yaml'),
  '# Generated from policies/default-policy.yaml by `npm run gen:chart`. Do not edit.\n' + policy,
);

const kubectlDir = execFileSync('bash', [join(root, 'scripts', 'lib', 'k8s-tools.sh')], {
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
}).trim();
const rendered = execFileSync(join(kubectlDir, 'kubectl'), ['kustomize', join(root, 'manifests')], {
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
});
const docs = parseAllDocuments(rendered).map((d) => d.toJS() as unknown);
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

const chartDir = join(root, 'charts', CHART_NAME);
const wanted = chartFiles(docs, version);
const existing = new Set(filesUnder(chartDir));
for (const [file, text] of wanted) {
  existing.delete(file);
  sync(join(chartDir, file), text);
}
for (const extra of existing) {
  stale.push(`${relative(root, join(chartDir, extra))} (no longer generated)`);
  if (!check) rmSync(join(chartDir, extra));
}

if (check && stale.length > 0) {
  console.error(`stale generated files: ${stale.join(', ')}. Run: npm run gen:chart`);
  process.exit(1);
}
console.log(
  check
    ? 'manifests/policy and charts/ are up to date'
    : `wrote ${wanted.size} chart files and the policy ConfigMap (${stale.length} changed)`,
);
