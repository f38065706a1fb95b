// Where upstream metal-operator's source (the pinned release scripts/lib/metal-operator.sh builds) is
// in the Go module cache, and its files the tests read there: CRDs and RBAC. Read at test time, never
// copied into this repository.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../api/schema/meta.js';
import { REPO_ROOT } from './process.js';

let cached: string | undefined;

/** The module directory; fails with the script's advice (what to install) when it cannot be had. */
export function metalOperatorModuleDir(): string {
  if (cached) return cached;
  try {
    const out = execFileSync(
      'bash',
      [join(REPO_ROOT, 'scripts', 'lib', 'metal-operator.sh'), '--module-dir'],
      {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 300_000,
      },
    );
    cached = out.trim().split('\n').pop() ?? '';
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(
      `scripts/lib/metal-operator.sh --module-dir failed:\n${err.stderr?.trim() || err.message}`,
      {
        cause: e,
      },
    );
  }
  return cached;
}

export interface UpstreamCRD extends KubeObject {
  spec: {
    group: string;
    scope: string;
    names: { plural: string; kind: string };
    versions: { name: string; schema?: { openAPIV3Schema?: Record<string, unknown> } }[];
  };
}

/** Every CRD metal-operator's release ships (config/crd/bases), by file name. */
export function upstreamCRDs(moduleDir = metalOperatorModuleDir()): Map<string, UpstreamCRD> {
  const dir = join(moduleDir, 'config', 'crd', 'bases');
  const out = new Map<string, UpstreamCRD>();
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort())
    out.set(file, parseAllDocuments(readFileSync(join(dir, file), 'utf8'))[0]!.toJS() as UpstreamCRD);
  return out;
}

/** The documents of one YAML file of the module (e.g. config/rbac/role.yaml). */
export function moduleManifest(path: string, moduleDir = metalOperatorModuleDir()): KubeObject[] {
  return parseAllDocuments(readFileSync(join(moduleDir, path), 'utf8'))
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => !!o);
}
