// Which cluster the e2e suites run against.
//
//   local (default)  Jest's global setup starts a kube-apiserver + etcd; each suite starts the
//                    webhook and controllers it needs as processes (e2e/harness/webhook.ts,
//                    deployed.ts).
//   cluster          E2E_TARGET=cluster and KUBECONFIG: an existing cluster where the system was
//                    installed from manifests/ (or the chart). The suites start nothing of ours: they
//                    find the installed binaries by their Deployments (e2e/harness/installed.ts).
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';

export type E2ETarget = 'local' | 'cluster';

/** A harness call that exists only for one target; names the target and what to use instead. */
export class TargetError extends Error {
  readonly code = 'METAL_E2E_TARGET';
}

export function e2eTarget(env: NodeJS.ProcessEnv = process.env): E2ETarget {
  const t = env.E2E_TARGET ?? 'local';
  if (t !== 'local' && t !== 'cluster')
    throw new TargetError(`E2E_TARGET=${t}: use "local" (the default) or "cluster"`);
  return t;
}

export const inCluster = (env: NodeJS.ProcessEnv = process.env): boolean => e2eTarget(env) === 'cluster';

/** The kubeconfig of the target cluster (cluster mode): $KUBECONFIG, one existing file. */
export function clusterKubeconfig(env: NodeJS.ProcessEnv = process.env): string {
  const file = env.KUBECONFIG;
  if (!file)
    throw new TargetError(
      'E2E_TARGET=cluster needs KUBECONFIG: the kubeconfig of the cluster the system runs in',
    );
  if (file.includes(':'))
    throw new TargetError(`KUBECONFIG=${file}: cluster mode takes one file, not a list`);
  if (!existsSync(file)) throw new TargetError(`KUBECONFIG=${file}: no such file`);
  return file;
}

/**
 * An object whose every property access fails with `why`: what a local-only part of a suite's
 * world (a process handle, its logs) is in cluster mode, so a test that reaches for it fails
 * saying so instead of reading undefined.
 */
export function localOnly<T extends object>(what: string, why: string): T {
  return new Proxy({} as T, {
    get(_t, prop) {
      if (prop === 'then' || typeof prop === 'symbol') return undefined;
      throw new TargetError(`${what}.${String(prop)} exists only with E2E_TARGET=local: ${why}`);
    },
  });
}

/**
 * Cluster mode: the user agent of this test file's admin client, hence the field manager of what it
 * creates (e2e/harness/run-objects.ts finds it by that). Jest evaluates modules once per test file.
 */
export const RUN_MANAGER_PREFIX = 'metal-e2e-run-';
export const RUN_MANAGER = `${RUN_MANAGER_PREFIX}${randomBytes(4).toString('hex')}`;
/** When this test file began, at the API's one-second resolution. */
export const RUN_STARTED = Math.floor(Date.now() / 1000) * 1000;

/**
 * For a test file that runs only against the local control plane: in cluster mode it fails at once,
 * saying why (docs/testing.md lists these files), rather than skipping in silence or running half.
 */
export function localTargetOnly(file: string, why: string, env: NodeJS.ProcessEnv = process.env): void {
  if (inCluster(env))
    throw new TargetError(`${file} runs only with E2E_TARGET=local (docs/testing.md): ${why}`);
}
