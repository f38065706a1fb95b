// The stand-in cluster's network: a network namespace of its own (the rule for servers in tests: on
// 127.0.0.1, or in a network namespace the test makes), where the pods get addresses of a pod range.
// Loopback addresses would do for listening, but the endpoints controllers refuse them (an Endpoints
// address may not be in 127.0.0.0/8), and the API server reaches the webhook through its endpoints.
// The whole range is routed as local, as 127.0.0.0/8 is, so each pod binds an address of its own with
// nothing configured per pod.
import { execFileSync, spawn } from 'node:child_process';

/** Set in the environment of a process that runs inside the stand-in cluster's network namespace. */
export const NETNS_MARK = 'METAL_STAND_IN_NETNS';
/** The pods' addresses: POD_NETWORK.2 and up; POD_NETWORK.1 is the node's. */
export const POD_NETWORK = '10.244.0';
export const NODE_IP = `${POD_NETWORK}.1`;

export const inPrivateNetwork = (env: NodeJS.ProcessEnv = process.env): boolean => env[NETNS_MARK] === '1';

/**
 * Runs this script again inside a new network namespace (unshare, as root), with the same Node flags
 * and arguments; resolves with its exit code. Signals reach it as they reach this process.
 */
export function rerunInPrivateNetwork(script: string, args: readonly string[]): Promise<number> {
  const child = spawn('unshare', ['--net', '--', process.execPath, ...process.execArgv, script, ...args], {
    stdio: 'inherit',
    env: { ...process.env, [NETNS_MARK]: '1' },
  });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => child.kill(sig));
  return new Promise((resolve, reject) => {
    child.once('error', (e) =>
      reject(
        new Error(`unshare --net (a network namespace for the stand-in cluster; needs root): ${e.message}`),
      ),
    );
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

/** Inside the namespace: loopback up, and the pod range local on it. */
export function setUpPodNetwork(): void {
  if (!inPrivateNetwork())
    throw new Error(
      `the stand-in cluster runs only in its own network namespace (${NETNS_MARK}=1; see network.ts)`,
    );
  const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  ip('link', 'set', 'lo', 'up');
  ip('route', 'add', 'local', `${POD_NETWORK}.0/24`, 'dev', 'lo');
}
