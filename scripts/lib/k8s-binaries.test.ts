// The binary resolver's refusals: no half-built cache is used, and without Go or assets it says
// what to install.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const script = join(import.meta.dirname, 'k8s-binaries.sh');
// A PATH with the base system but without the Go toolchain.
const PATH_WITHOUT_GO = '/usr/bin:/bin';

async function resolve(
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run('bash', [script], { env: { HOME: tmpdir(), PATH: PATH_WITHOUT_GO, ...env } });
    return { code: 0, ...r };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe('k8s-binaries.sh', () => {
  test('without Go and without assets it fails and says what to install', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'k8s-cache-'));
    const r = await resolve({ METAL_CACHE_DIR: cache });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/install Go/);
    expect(r.stderr).toMatch(/KUBEBUILDER_ASSETS/);
  });

  test('a half-built cache (no completion marker) is never used', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'k8s-cache-'));
    const probe = await resolve({ METAL_CACHE_DIR: cache });
    expect(probe.code).not.toBe(0);
    // Put binaries where a complete cache would be, but without `.complete`.
    const { stdout } = await run('bash', ['-c', `grep -E '^(K8S_VERSION|ETCD_VERSION|RECIPE)=' ${script}`]);
    const v = Object.fromEntries(
      stdout
        .trim()
        .split('\n')
        .map((l) => l.replace(/"\$\{[A-Z_]+:-([^}]*)\}"/, '$1').split('=')),
    );
    const dir = join(cache, `k8s-${v.K8S_VERSION}-etcd-${v.ETCD_VERSION}-r${v.RECIPE}`);
    mkdirSync(dir, { recursive: true });
    for (const b of ['kube-apiserver', 'etcd']) {
      writeFileSync(join(dir, b), '#!/bin/sh\n');
      chmodSync(join(dir, b), 0o755);
    }
    const r = await resolve({ METAL_CACHE_DIR: cache });
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
  });

  test('KUBEBUILDER_ASSETS is used when it holds both binaries, and refused when it does not', async () => {
    const assets = mkdtempSync(join(tmpdir(), 'assets-'));
    let r = await resolve({ KUBEBUILDER_ASSETS: assets });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/no executable 'kube-apiserver'/);
    for (const b of ['kube-apiserver', 'etcd']) {
      writeFileSync(join(assets, b), '#!/bin/sh\n');
      chmodSync(join(assets, b), 0o755);
    }
    r = await resolve({ KUBEBUILDER_ASSETS: assets });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(assets);
  });
});
