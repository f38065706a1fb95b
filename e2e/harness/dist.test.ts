// What keeps the suites from running a stale or half-isolated build of the image's files: the digest
// of the build's inputs (scripts/build-dist.sh --digest, run on a copy of the checkout so nothing
// here edits the real one) and the refusal of a directory below a node_modules. The build itself
// is exercised by test/integration/install/dist.int.test.ts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { REPO_ROOT } from './control-plane.js';
import { enclosingNodeModules, inputsDigest, prepareDist } from './dist.js';

let copy: string;
const digest = () =>
  execFileSync('bash', [join(copy, 'scripts', 'build-dist.sh'), '--digest'], { encoding: 'utf8' }).trim();

beforeAll(() => {
  copy = join(mkdtempSync(join(tmpdir(), 'dist-digest-')), 'checkout');
  const skip = new Set(['node_modules', '.git', '.tmp', 'dist', 'coverage']);
  cpSync(REPO_ROOT, copy, {
    recursive: true,
    filter: (src) =>
      !relative(REPO_ROOT, src)
        .split('/')
        .some((part) => skip.has(part)),
  });
});

afterAll(() => {
  if (copy) rmSync(join(copy, '..'), { recursive: true, force: true });
});

describe('the digest of the build inputs', () => {
  it('is the checkout’s wherever the checkout lies (paths are relative)', () => {
    expect(digest()).toMatch(/^[0-9a-f]{64}$/);
    expect(digest()).toBe(inputsDigest());
  });

  it.each([
    ['an edited source', () => appendFileSync(join(copy, 'lib', 'errors.ts'), '\n// edited\n')],
    ['an added source', () => writeFileSync(join(copy, 'controllers', 'new-file.ts'), 'export {};\n')],
    ['a removed source', () => rmSync(join(copy, 'cli', 'kubectl-metal.ts'))],
    ['a renamed source', () => renameSync(join(copy, 'api', 'render.ts'), join(copy, 'api', 'render2.ts'))],
    ['an edited lockfile', () => appendFileSync(join(copy, 'package-lock.json'), '\n')],
    ['an edited Dockerfile', () => appendFileSync(join(copy, 'Dockerfile'), '\n# edited\n')],
  ])('changes with %s', (_what, edit) => {
    const before = digest();
    edit();
    expect(digest()).not.toBe(before);
  });

  it('does not change with a file the image does not copy (a test suite, a doc)', () => {
    const before = digest();
    appendFileSync(join(copy, 'docs', 'testing.md'), '\nedited\n');
    writeFileSync(join(copy, 'test', 'integration', 'new.int.test.ts'), 'export {};\n');
    expect(digest()).toBe(before);
  });
});

describe('where the image files may be', () => {
  it('not below a node_modules: there a dependency the image lacks would still resolve', async () => {
    expect(enclosingNodeModules(join(REPO_ROOT, '.tmp', 'app'))).toBe(join(REPO_ROOT, 'node_modules'));
    const before = process.env.METAL_TEST_DIST;
    process.env.METAL_TEST_DIST = join(REPO_ROOT, '.tmp', 'app');
    try {
      await expect(prepareDist()).rejects.toThrow(`lies below ${join(REPO_ROOT, 'node_modules')}`);
    } finally {
      if (before === undefined) delete process.env.METAL_TEST_DIST;
      else process.env.METAL_TEST_DIST = before;
    }
  });

  it('anywhere outside a Node project', () => {
    expect(enclosingNodeModules(join(mkdtempSync(join(tmpdir(), 'dist-where-')), 'app'))).toBeUndefined();
  });
});
