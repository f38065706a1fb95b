// The stand-in kubelet's container runtime: one container is one `node` process started from the
// image's files (dist/) in a mount and UTS namespace of its own (unshare; its hostname is the pod's
// name, as in a pod), where each volume is bind-mounted at
// its mountPath — so two pods of different ServiceAccounts each read their own token at the one path
// in-cluster config knows. /run (and so /var/run, where the token is mounted) is a private tmpfs in
// that namespace; any other mount point is made on the host as an empty directory, since the host's
// filesystem is the container's root here. The readiness prober GETs the probe's path on the pod's
// address.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { PodPlanError, type ContainerPlan } from './pod-plan.js';

/** A mount path the runtime can bind: absolute, below the root, no `..`. */
export function mountable(path: string): boolean {
  return path.startsWith('/') && path !== '/' && !path.split('/').includes('..');
}

// Runs as `sh -c SCRIPT sh SRC DST RO ... -- node ARGS`: the mounts, then exec (the pid stays the node's).
const SCRIPT = [
  'set -e',
  'hostname "$POD_HOSTNAME"',
  'mount -t tmpfs -o mode=0755 tmpfs /run',
  'while [ "$1" != "--" ]; do',
  '  mkdir -p "$2"; mount --bind "$1" "$2"',
  '  if [ "$3" = ro ]; then mount -o remount,bind,ro "$2"; fi',
  '  shift 3',
  'done',
  'shift',
  'exec "$@"',
].join('\n');

export interface ContainerProcess {
  proc: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts one container; `mountSource(volume)` is where that volume's files are on the host. */
export function startContainer(
  plan: ContainerPlan,
  options: { distDir: string; podDir: string; mountSource: (volume: string) => string },
): ContainerProcess {
  const mounts: string[] = [];
  for (const m of plan.mounts) {
    if (!mountable(m.mountPath))
      throw new PodPlanError(
        `container ${plan.name}: mountPath ${m.mountPath} is not an absolute path below /`,
      );
    mounts.push(options.mountSource(m.volume), m.mountPath, m.readOnly ? 'ro' : 'rw');
  }
  const log = openSync(join(options.podDir, `${plan.name}.log`), 'a');
  const proc = spawn(
    'unshare',
    [
      '--mount',
      '--uts',
      '--propagation',
      'private',
      '--',
      'sh',
      '-c',
      SCRIPT,
      'sh',
      ...mounts,
      '--',
      'node',
      ...plan.argv,
    ],
    {
      cwd: options.distDir,
      // The image's environment (NODE_ENV) and the pod's; HOME is the pod's directory, so no kubeconfig
      // of the host's user is found before the in-cluster one.
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        NODE_ENV: 'production',
        HOME: options.podDir,
        ...plan.env,
        // The pod's hostname is its name, set by the script in the container's own UTS namespace.
        POD_HOSTNAME: plan.env.HOSTNAME ?? '',
      },
      stdio: ['ignore', log, log],
    },
  );
  closeSync(log);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { proc, exited };
}

/** Stops a container: SIGTERM, then SIGKILL once `graceMs` passed (0: SIGKILL at once). */
export async function stopContainer(c: ContainerProcess, graceMs: number): Promise<void> {
  if (c.proc.exitCode !== null || c.proc.signalCode !== null) return;
  if (graceMs <= 0) c.proc.kill('SIGKILL');
  else c.proc.kill('SIGTERM');
  const timer = setTimeout(() => c.proc.kill('SIGKILL'), Math.max(graceMs, 0));
  await c.exited;
  clearTimeout(timer);
}

/** One readiness probe: an HTTP GET answered 200–399 within a second. */
export function probe(host: string, port: number, path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host, port, path, timeout: 1000 }, (res) => {
      res.resume();
      resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 400);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}
