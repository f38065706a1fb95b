// The binary resolvers' refusals: no half-built cache is used, and without Go (or assets) each
// says what to install.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const here = import.meta.dirname;
// A PATH with the base system but without the Go toolchain.
const PATH_WITHOUT_GO = '/usr/bin:/bin';

async function resolve(
  script: string,
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run('bash', [join(here, script)], {
      env: { HOME: tmpdir(), PATH: PATH_WITHOUT_GO, ...env },
    });
    return { code: 0, ...r };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/** The default of each `NAME="${NAME:-default}"` or `NAME=value` line in the given scripts. */
function defaults(...scripts: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of scripts)
    for (const m of readFileSync(join(here, s), 'utf8').matchAll(
      /^([A-Z0-9_]+)="?(?:\$\{[A-Z0-9_]+:-)?([^}"\s]*)/gm,
    ))
      out[m[1]!] = m[2]!;
  return out;
}

function fakeBinaries(dir: string, names: string[]): void {
  mkdirSync(dir, { recursive: true });
  for (const b of names) {
    writeFileSync(join(dir, b), '#!/bin/sh\n');
    chmodSync(join(dir, b), 0o755);
  }
}

const k8s = defaults('k8s-module.sh', 'k8s-binaries.sh');
const tools = defaults('k8s-module.sh', 'k8s-tools.sh');
const kwok = defaults('kwok.sh');

// Each resolver, where a complete cache of it would be, and what it holds.
const resolvers = [
  {
    script: 'k8s-binaries.sh',
    cacheDir: `k8s-${k8s.K8S_VERSION}-etcd-${k8s.ETCD_VERSION}-r${k8s.RECIPE}`,
    binaries: ['kube-apiserver', 'etcd'],
    missingGo: [/install Go/, /KUBEBUILDER_ASSETS/],
  },
  {
    script: 'k8s-tools.sh',
    cacheDir: `k8s-tools-${tools.K8S_VERSION}-r${tools.RECIPE}`,
    binaries: ['kubectl', 'kube-controller-manager', 'kube-scheduler'],
    missingGo: [/MISSING TOOL/, /Install Go/],
  },
  {
    script: 'kwok.sh',
    cacheDir: `kwok-${kwok.VERSION}-r${kwok.RECIPE}`,
    binaries: ['kwok', 'stages.yaml'],
    missingGo: [/MISSING TOOL/, /Install Go >= 1\.26/],
  },
];

describe.each(resolvers)('$script', ({ script, cacheDir, binaries, missingGo }) => {
  test('without Go and without a cache it fails and says what to install', async () => {
    const r = await resolve(script, { METAL_CACHE_DIR: mkdtempSync(join(tmpdir(), 'k8s-cache-')) });
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    for (const m of missingGo) expect(r.stderr).toMatch(m);
  });

  test('a half-built cache (no completion marker) is never used; a complete one is', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'k8s-cache-'));
    const dir = join(cache, cacheDir);
    fakeBinaries(dir, binaries);
    const half = await resolve(script, { METAL_CACHE_DIR: cache });
    expect(half.code).not.toBe(0);
    expect(half.stdout).toBe('');
    writeFileSync(join(dir, '.complete'), '');
    const done = await resolve(script, { METAL_CACHE_DIR: cache });
    expect(done).toMatchObject({ code: 0, stdout: `${dir}\n` });
  });

  test('a complete marker without every binary is not a cache', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'k8s-cache-'));
    const dir = join(cache, cacheDir);
    fakeBinaries(dir, binaries.slice(1));
    writeFileSync(join(dir, '.complete'), '');
    const r = await resolve(script, { METAL_CACHE_DIR: cache });
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
  });
});

describe('k8s-binaries.sh', () => {
  test('KUBEBUILDER_ASSETS is used when it holds both binaries, and refused when it does not', async () => {
    const assets = mkdtempSync(join(tmpdir(), 'assets-'));
    let r = await resolve('k8s-binaries.sh', { KUBEBUILDER_ASSETS: assets });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/no executable 'kube-apiserver'/);
    fakeBinaries(assets, ['kube-apiserver', 'etcd']);
    r = await resolve('k8s-binaries.sh', { KUBEBUILDER_ASSETS: assets });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(assets);
  });
});

describe('k8s-module.sh', () => {
  test('pins every staging module to the release matching k8s.io/kubernetes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'k8s-module-'));
    await run(
      'bash',
      ['-c', `source ${join(here, 'k8s-module.sh')} && k8s_write_module "$1" probe a/b c/d`, '_', dir],
      {
        env: { PATH: PATH_WITHOUT_GO, K8S_VERSION: 'v1.31.7' },
      },
    );
    const gomod = readFileSync(join(dir, 'go.mod'), 'utf8');
    expect(gomod).toMatch(/^require k8s\.io\/kubernetes v1\.31\.7$/m);
    const pins = [...gomod.matchAll(/^\tk8s\.io\/(\S+) => k8s\.io\/\1 (\S+)$/gm)];
    expect(pins.map((p) => p[1])).toEqual(
      expect.arrayContaining(['api', 'client-go', 'kubectl', 'kube-scheduler']),
    );
    expect(new Set(pins.map((p) => p[2]))).toEqual(new Set(['v0.31.7']));
    expect(readFileSync(join(dir, 'tools.go'), 'utf8')).toMatch(/import _ "a\/b"\nimport _ "c\/d"/);
  });
});
