// What the install tests run: the cached kubectl, helm and PyYAML (each prepared by its
// scripts/lib/*.sh, which fails saying what to install when a tool is missing), cert-manager's CRDs
// from its Go module (our Issuer and Certificate need them), and the files an operator applies.
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { REPO_ROOT } from '../../../e2e/harness/control-plane.js';
import { k8sToolPath } from '../../../e2e/harness/k8s-tools.js';

const run = promisify(execFile);

/** The release our Issuer and Certificate are written for (scripts/lib/cert-manager.sh builds the same). */
export const CERT_MANAGER_VERSION = process.env.CERT_MANAGER_VERSION ?? 'v1.21.2';
export const MANIFESTS = join(REPO_ROOT, 'manifests');
export const CHART = join(REPO_ROOT, 'charts', 'metal-maintenance');

function prepared(script: string): string {
  try {
    return execFileSync('bash', [join(REPO_ROOT, 'scripts', 'lib', script)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 30 * 60_000,
    }).trim();
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`scripts/lib/${script} failed: ${err.stderr || err.message}`, { cause: e });
  }
}

export const helmPath = (): string => join(prepared('helm.sh'), 'helm');
export const pythonPath = (): string => join(prepared('pyyaml.sh'), 'bin', 'python');
export const kubectlPath = (): string => k8sToolPath('kubectl');

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a tool; resolves with its exit code and output whether or not it succeeded. */
export async function tool(
  file: string,
  args: string[],
  input?: string,
  cwd?: string,
  timeoutMs = 180_000,
): Promise<Result> {
  const promise = run(file, args, {
    cwd,
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' },
  });
  if (input !== undefined) promise.child.stdin?.end(input);
  try {
    const { stdout, stderr } = await promise;
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number | string; stdout?: string; stderr?: string; message: string };
    if (typeof err.code !== 'number')
      throw new Error(`${file} ${args.join(' ')}: ${err.message}`, { cause: e });
    return { code: err.code, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

/** Like tool(), but a non-zero exit is an error carrying what the tool said. */
export async function ok(file: string, args: string[], input?: string, cwd?: string): Promise<string> {
  const r = await tool(file, args, input, cwd);
  if (r.code !== 0) throw new Error(`${file} ${args.join(' ')} exited ${r.code}: ${r.stderr || r.stdout}`);
  return r.stdout;
}

/** cert-manager's Issuer and Certificate CRDs, from its module in the Go module cache (downloaded if needed). */
export function certManagerCRDFiles(): string[] {
  let dir: string;
  try {
    const out = execFileSync(
      'go',
      ['mod', 'download', '-json', `github.com/cert-manager/cert-manager@${CERT_MANAGER_VERSION}`],
      { encoding: 'utf8', timeout: 10 * 60_000, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    dir = (JSON.parse(out) as { Dir: string }).Dir;
  } catch (e) {
    throw new Error(
      `cert-manager ${CERT_MANAGER_VERSION}'s CRDs come from its Go module: install Go >= 1.24 ` +
        `(https://go.dev/doc/install) with access to the Go module proxy (${(e as Error).message})`,
      { cause: e },
    );
  }
  return ['issuers', 'certificates'].map((k) => join(dir, 'deploy', 'crds', `cert-manager.io_${k}.yaml`));
}

/**
 * The files `kubectl apply -f` takes for the install, in the order an operator applies them: each
 * kustomization's resources, depth first, from manifests/default (so the list is the kustomization's,
 * not a second one kept here).
 */
export function kustomizationFiles(dir = join(MANIFESTS, 'default')): string[] {
  const k = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as { resources?: string[] };
  return (k.resources ?? []).flatMap((r) =>
    r.endsWith('.yaml') ? [join(dir, r)] : kustomizationFiles(join(dir, r)),
  );
}
