// kube-controller-manager and kube-scheduler as processes next to a control plane (control-plane.ts),
// for the clusters the tests build: a tenant's workload cluster (workload-cluster.ts) and the stand-in
// cluster that cluster mode runs against (e2e/stand-in/cluster.ts). Each process logs to
// DIR/<name>.log, is killed when the test process exits whatever happens, and is ready once its
// /healthz answers.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { waitFor } from './env.js';
import { k8sToolPath } from './k8s-tools.js';

const live = new Set<ChildProcess>();
let hooked = false;
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.once('exit', () => {
    for (const p of live) p.kill('SIGKILL');
  });
}

export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Starts `bin` with its output in DIR/<name>.log and the cluster's directory as HOME. */
export function startProcess(dir: string, name: string, bin: string, args: string[]): ChildProcess {
  hookExit();
  const log = openSync(join(dir, `${name}.log`), 'a');
  const proc = spawn(bin, args, {
    cwd: dir,
    // kwok reads ~/.kwok/kwok.yaml: give every process the cluster's directory as HOME.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  live.add(proc);
  proc.once('exit', () => live.delete(proc));
  return proc;
}

/** SIGTERM, then SIGKILL after `timeoutMs`; resolves once the process has exited. */
export async function stopProcess(proc: ChildProcess, timeoutMs = 10_000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  await exited;
  clearTimeout(timer);
}

/** GET https://127.0.0.1:port/healthz of a component serving a self-signed certificate. */
function healthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/healthz', rejectUnauthorized: false, timeout: 2000 },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

export async function waitHealthy(
  name: string,
  proc: ChildProcess,
  port: number,
  dir: string,
): Promise<void> {
  await waitFor(
    `${name} /healthz on 127.0.0.1:${port}`,
    async () => {
      if (proc.exitCode !== null)
        throw new Error(`${name} exited (${proc.exitCode}); see ${dir}/${name}.log`);
      return healthy(port);
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
}

/** One of the two: kube-controller-manager or kube-scheduler, with the admin kubeconfig `k`. */
async function startComponent(
  dir: string,
  name: 'kube-controller-manager' | 'kube-scheduler',
  kubeconfig: string,
  args: string[],
): Promise<{ proc: ChildProcess; ready: () => Promise<void> }> {
  const port = await freePort();
  const certs = join(dir, `${name}-certs`);
  mkdirSync(certs, { recursive: true });
  const proc = startProcess(dir, name, k8sToolPath(name), [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${certs}`,
    '--leader-elect=false',
    '--v=1',
    ...args,
  ]);
  return { proc, ready: () => waitHealthy(name, proc, port, dir) };
}

/**
 * Starts kube-controller-manager running `controllers` (names as in Kubernetes ≥ 1.27) with `args`
 * added; `ready()` waits for its /healthz.
 */
export function startControllerManager(
  dir: string,
  kubeconfig: string,
  controllers: readonly string[],
  args: string[] = [],
): Promise<{ proc: ChildProcess; ready: () => Promise<void> }> {
  return startComponent(dir, 'kube-controller-manager', kubeconfig, [
    `--controllers=${controllers.join(',')}`,
    ...args,
  ]);
}

export function startScheduler(
  dir: string,
  kubeconfig: string,
): Promise<{ proc: ChildProcess; ready: () => Promise<void> }> {
  return startComponent(dir, 'kube-scheduler', kubeconfig, []);
}
