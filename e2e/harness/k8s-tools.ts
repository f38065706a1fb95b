// Where the test tools built by scripts/lib/k8s-tools.sh and scripts/lib/kwok.sh live, and running
// the real kubectl against a cluster.
import { execFile, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './control-plane.js';

const run = promisify(execFile);

export type K8sTool = 'kubectl' | 'kube-controller-manager' | 'kube-scheduler';

const dirs = new Map<string, string>();

/** The cache directory a prep script prints (building it first if the cache is cold). */
export function preparedDir(script: string): string {
  let dir = dirs.get(script);
  if (!dir) {
    try {
      dir = execFileSync('bash', [join(REPO_ROOT, 'scripts', 'lib', script)], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 30 * 60_000,
      }).trim();
    } catch (e) {
      const err = e as { stderr?: string; message: string };
      throw new Error(`scripts/lib/${script} failed: ${err.stderr || err.message}`, { cause: e });
    }
    dirs.set(script, dir);
  }
  return dir;
}

/** Absolute path of kubectl, kube-controller-manager or kube-scheduler at the control plane's version. */
export function k8sToolPath(tool: K8sTool): string {
  return join(preparedDir('k8s-tools.sh'), tool);
}

/** The kwok binary (simulated kubelets) and its node and pod stages, from scripts/lib/kwok.sh. */
export function kwokFiles(): { bin: string; stages: string } {
  const dir = preparedDir('kwok.sh');
  return { bin: join(dir, 'kwok'), stages: join(dir, 'stages.yaml') };
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built kubectl with `--kubeconfig kubeconfig` and `args`; resolves with its exit code and
 * output whether or not it succeeded (a test asserts on both).
 */
export async function kubectl(
  kubeconfig: string,
  args: string[],
  options: { timeoutMs?: number; input?: string } = {},
): Promise<KubectlResult> {
  const promise = run(k8sToolPath('kubectl'), ['--kubeconfig', kubeconfig, ...args], {
    timeout: options.timeoutMs ?? 120_000,
    maxBuffer: 64 * 1024 * 1024,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' },
  });
  if (options.input !== undefined) {
    promise.child.stdin?.end(options.input);
  }
  try {
    const { stdout, stderr } = await promise;
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number | string; stdout?: string; stderr?: string; message: string };
    if (typeof err.code !== 'number')
      throw new Error(`kubectl ${args.join(' ')}: ${err.message}`, { cause: e });
    return { code: err.code, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}
