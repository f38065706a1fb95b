// The kind path (scripts/kind-e2e.sh and .github/workflows/e2e-kind.yaml) needs a container engine,
// which this machine lacks; what can be checked without one is checked here: ShellCheck passes the
// script, the workflow validates against GitHub's workflow schema (check-jsonschema's built-in one)
// with every action pinned by commit, the kind config is a kind Cluster, and the script's render step
// produces the install an operator applies with only the loaded image's tag changed. The image's
// build steps are the Dockerfile's, which scripts/build-dist.sh runs for every suite that starts a
// binary (test/integration/install/dist.int.test.ts).
import { beforeAll, describe, expect, it } from '@jest/globals';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { REPO_ROOT } from '../../../e2e/harness/control-plane.js';
import { preparedDir } from '../../../e2e/harness/k8s-tools.js';
import { MANIFESTS, kubectlPath, ok, tool } from './tools.js';

const SCRIPT = join(REPO_ROOT, 'scripts', 'kind-e2e.sh');
const WORKFLOW = join(REPO_ROOT, '.github', 'workflows', 'e2e-kind.yaml');
const KIND_CONFIG = join(REPO_ROOT, 'e2e', 'kind', 'kind-config.yaml');

let lint: string;
beforeAll(() => {
  // Fails saying what to install when Python's venv is missing (scripts/lib/lint-tools.sh).
  lint = preparedDir('lint-tools.sh');
}, 300_000);

const shellcheck = (args: string[]) => tool(join(lint, 'bin', 'shellcheck'), args, undefined, REPO_ROOT);
const jsonschema = (file: string) =>
  tool(
    join(lint, 'bin', 'python'),
    ['-m', 'check_jsonschema', '--builtin-schema', 'vendor.github-workflows', file],
    undefined,
    REPO_ROOT,
  );

describe('scripts/kind-e2e.sh', () => {
  it('passes ShellCheck, which does catch a flaw planted in a copy', async () => {
    const clean = await shellcheck(['-x', 'scripts/kind-e2e.sh', 'scripts/lib/lint-tools.sh']);
    expect(clean).toMatchObject({ code: 0, stdout: '' });
    const dir = mkdtempSync(join(tmpdir(), 'metal-kind-lint-'));
    try {
      const flawed = join(dir, 'kind-e2e.sh');
      writeFileSync(flawed, `${readFileSync(SCRIPT, 'utf8')}\nrm -rf $ARTIFACTS/old\n`);
      const r = await shellcheck([flawed]);
      expect(r.code).not.toBe(0);
      expect(r.stdout).toContain('SC2086');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('renders the install with the loaded image, otherwise exactly as manifests/ renders it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'metal-kind-render-'));
    try {
      const r = await tool('bash', [SCRIPT, '--render', dir], undefined, REPO_ROOT);
      expect(r.code).toBe(0);
      expect(parse(readFileSync(join(dir, 'kind-config.yaml'), 'utf8'))).toEqual(
        parse(readFileSync(KIND_CONFIG, 'utf8')),
      );
      type Doc = { kind?: string };
      const docs = parseAllDocuments(readFileSync(join(dir, 'install.yaml'), 'utf8')).map(
        (d) => d.toJS() as Doc,
      );
      const shipped = parseAllDocuments(await ok(kubectlPath(), ['kustomize', MANIFESTS])).map(
        (d) => d.toJS() as Doc,
      );
      const images = (o: unknown) => JSON.stringify(o).match(/"image":"[^"]*"/g) ?? [];
      const deployments = docs.filter((d) => d.kind === 'Deployment');
      expect(deployments.length).toBeGreaterThanOrEqual(7);
      expect(new Set(deployments.flatMap(images))).toEqual(new Set(['"image":"metal-maintenance:kind-e2e"']));
      // Only the tag differs from the operator's install.
      const retag = (o: Doc): Doc =>
        JSON.parse(
          JSON.stringify(o).replace(/"image":"metal-maintenance"/g, '"image":"metal-maintenance:kind-e2e"'),
        ) as Doc;
      expect(docs).toEqual(shipped.map(retag));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('without a container engine, says what it needs instead of starting', async () => {
    const r = await tool('bash', [SCRIPT], undefined, REPO_ROOT);
    // This machine has no container engine (nor kind): the script stops at its checks, before it
    // creates anything, naming what is missing and how to get it.
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^kind-e2e: (docker not found: install Docker|kind not found: go install sigs\.k8s\.io\/kind@v[\d.]+|docker cannot reach its daemon)/,
    );
    expect(r.stderr).not.toContain('==> creating kind cluster');
  });

  it('runs by default the files e2e/cluster-mode.files names, each of which exists', () => {
    const files = readFileSync(join(REPO_ROOT, 'e2e', 'cluster-mode.files'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('#'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(existsSync(join(REPO_ROOT, f))).toBe(true);
    expect(readFileSync(SCRIPT, 'utf8')).toContain('e2e/cluster-mode.files');
  });
});

describe('e2e/kind/kind-config.yaml', () => {
  it('is a kind Cluster with a control-plane node and a worker', () => {
    const cfg = parse(readFileSync(KIND_CONFIG, 'utf8')) as {
      kind: string;
      apiVersion: string;
      nodes: { role: string }[];
    };
    expect(cfg.kind).toBe('Cluster');
    expect(cfg.apiVersion).toBe('kind.x-k8s.io/v1alpha4');
    expect(cfg.nodes.map((n) => n.role).sort()).toEqual(['control-plane', 'worker']);
  });
});

describe('.github/workflows/e2e-kind.yaml', () => {
  it("validates against GitHub's workflow schema, which does refuse a broken copy", async () => {
    const good = await jsonschema(WORKFLOW);
    expect(good.code).toBe(0);
    expect(good.stdout).toContain('ok -- validation done');
    const dir = mkdtempSync(join(tmpdir(), 'metal-kind-workflow-'));
    try {
      const broken = join(dir, 'e2e-kind.yaml');
      copyFileSync(WORKFLOW, broken);
      writeFileSync(
        broken,
        readFileSync(broken, 'utf8').replace('runs-on: ubuntu-24.04', 'runs-on: [ 1, 2 ]\n    steps: {}'),
      );
      const bad = await jsonschema(broken);
      expect(bad.code).not.toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('pins every action by a full commit SHA, with its tag beside it, and runs the script', () => {
    const text = readFileSync(WORKFLOW, 'utf8');
    const uses = [...text.matchAll(/uses:\s*(\S+)(.*)$/gm)];
    expect(uses.length).toBeGreaterThanOrEqual(3);
    for (const [, ref, comment] of uses) {
      expect(ref).toMatch(/^[\w.-]+\/[\w.-]+@[0-9a-f]{40}$/);
      expect(comment).toMatch(/# v\d+\.\d+\.\d+/);
    }
    expect(text).toContain('bash scripts/kind-e2e.sh');
    expect(text).toMatch(/KIND_VERSION: v\d+\.\d+\.\d+/);
  });
});

describe('scripts/lib/lint-tools.sh', () => {
  it('says what to install when Python with venv is missing', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'metal-cache-'));
    try {
      const r = await tool(
        'bash',
        [join(REPO_ROOT, 'scripts', 'lib', 'lint-tools.sh')],
        undefined,
        REPO_ROOT,
      );
      expect(r.code).toBe(0);
      const missing = await tool(
        'env',
        [
          `METAL_CACHE_DIR=${cache}`,
          'LINT_TOOLS_PYTHON=/nonexistent/python3',
          'bash',
          'scripts/lib/lint-tools.sh',
        ],
        undefined,
        REPO_ROOT,
      );
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(
        /MISSING TOOL: '\/nonexistent\/python3'[\s\S]*apt-get install python3 python3-venv/,
      );
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
