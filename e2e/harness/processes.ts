// Runs our binaries as real processes in tests and the demo, each with its own ServiceAccount
// identity whose RBAC comes from the binary's manifests (so tests exercise least privilege), and
// makes sure none outlives the test run.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseAllDocuments } from 'yaml';
import type { KubeClient } from '../../lib/kube/client.js';
import { Core, type ResourceType } from '../../lib/kube/resources.js';
import { isAlreadyExists, isNotFound } from '../../lib/kube/errors.js';
import type { KubeObject } from '../../api/schema/meta.js';
import { REPO_ROOT, readControlPlane } from './control-plane.js';
import { writeTokenKubeconfig } from './env.js';

export const SYSTEM_NAMESPACE = 'metal-maintenance-system';

const KIND_TO_RESOURCE: Record<string, ResourceType> = {
  Namespace: Core.Namespace,
  ServiceAccount: Core.ServiceAccount,
  ClusterRole: Core.ClusterRole,
  ClusterRoleBinding: Core.ClusterRoleBinding,
  Role: Core.Role,
  RoleBinding: Core.RoleBinding,
  ConfigMap: Core.ConfigMap,
};

/** Creates or replaces each object (of the kinds above) in a multi-document YAML file. */
export async function applyManifest(client: KubeClient, file: string): Promise<KubeObject[]> {
  const objs = parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => !!o);
  for (const obj of objs) {
    const rt = KIND_TO_RESOURCE[obj.kind ?? ''];
    if (!rt) throw new Error(`${file}: applyManifest does not handle kind ${obj.kind}`);
    const res = client.resource(rt);
    try {
      await res.create(obj);
    } catch (e) {
      if (!isAlreadyExists(e))
        throw new Error(`${file}: ${obj.kind} ${obj.metadata.name}: ${(e as Error).message}`, { cause: e });
      const cur = await res.get(obj.metadata.name!, obj.metadata.namespace);
      await res.replace({
        ...obj,
        metadata: { ...obj.metadata, resourceVersion: cur.metadata.resourceVersion },
      });
    }
  }
  return objs;
}

export async function ensureNamespace(client: KubeClient, name: string): Promise<void> {
  try {
    await client.resource(Core.Namespace).create({ metadata: { name } });
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
  }
}

/**
 * Applies `manifests/<binary>/rbac.yaml` (a ServiceAccount plus its roles and bindings) and returns
 * a kubeconfig that authenticates as that ServiceAccount with a real token.
 */
export async function kubeconfigForBinary(
  admin: KubeClient,
  binary: string,
  rbacFile = join(REPO_ROOT, 'manifests', binary, 'rbac.yaml'),
): Promise<{ kubeconfig: string; username: string }> {
  await ensureNamespace(admin, SYSTEM_NAMESPACE);
  const objs = await applyManifest(admin, rbacFile);
  const sa = objs.find((o) => o.kind === 'ServiceAccount');
  if (!sa) throw new Error(`${rbacFile} has no ServiceAccount`);
  const ns = sa.metadata.namespace ?? SYSTEM_NAMESPACE;
  return tokenKubeconfig(admin, ns, sa.metadata.name!);
}

/** A kubeconfig for an existing ServiceAccount, with a token from the TokenRequest API. */
export async function tokenKubeconfig(
  admin: KubeClient,
  namespace: string,
  name: string,
): Promise<{ kubeconfig: string; username: string }> {
  const tr = await admin.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    {
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 7200 },
      },
    },
  );
  const file = writeTokenKubeconfig(admin, name, tr.status.token);
  return { kubeconfig: file, username: `system:serviceaccount:${namespace}:${name}` };
}

export interface RunningBinary {
  name: string;
  proc: ChildProcess;
  /** Parsed JSON log lines (pino) seen so far. */
  logs: Record<string, unknown>[];
  exited: Promise<number | null>;
  /** Resolves with the first log line matching `pred`. */
  waitForLog(
    pred: (line: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const p of running) p.kill('SIGKILL');
  });
}

/** Sends `signal`, then SIGKILL after `timeoutMs`; resolves with the exit code (at once if it exited). */
export async function stopChild(
  proc: ChildProcess,
  exited: Promise<number | null>,
  signal: NodeJS.Signals,
  timeoutMs: number,
): Promise<number | null> {
  if (proc.exitCode !== null || proc.signalCode !== null) return exited;
  proc.kill(signal);
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

/** The file a binary's output goes to when METAL_TEST_LOG_DIR is set (the demo sets it). */
export function binaryLogFile(name: string): string | undefined {
  const dir = process.env.METAL_TEST_LOG_DIR;
  return dir ? join(dir, `${name}.log`) : undefined;
}

/**
 * Starts `entry` (a TypeScript file relative to the repo root) with tsx. stdout is parsed as
 * pino JSON lines; stderr is inherited so crashes show in the test output. With METAL_TEST_LOG_DIR
 * set, stdout and stderr both go to binaryLogFile(name) instead (appended: a restart adds to it).
 */
export function spawnBinary(
  name: string,
  entry: string,
  args: string[],
  env: Record<string, string> = {},
): RunningBinary {
  return spawnNodeProcess(name, ['--import', 'tsx', join(REPO_ROOT, entry), ...args], {
    cwd: REPO_ROOT,
    env,
  });
}

/**
 * Starts `node argv...` in `cwd` as spawnBinary does (its output handled the same way); spawnBinary
 * runs TypeScript through tsx, e2e/harness/deployed.ts the compiled image as a Deployment starts it.
 */
export function spawnNodeProcess(
  name: string,
  argv: string[],
  options: { cwd: string; env?: Record<string, string> },
): RunningBinary {
  installExitHook();
  const proc = spawn(process.execPath, argv, {
    cwd: options.cwd,
    env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', ...options.env },
    stdio: ['ignore', 'pipe', binaryLogFile(name) ? 'pipe' : 'inherit'],
  });
  running.add(proc);
  const logFile = binaryLogFile(name);
  const file = logFile ? createWriteStream(logFile, { flags: 'a' }) : undefined;
  if (file) proc.stderr?.pipe(file, { end: false });
  const logs: Record<string, unknown>[] = [];
  const listeners = new Set<(l: Record<string, unknown>) => void>();
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(line) as Record<string, unknown>;
    } catch {
      parsed = { msg: line };
    }
    logs.push(parsed);
    for (const l of listeners) l(parsed);
    file?.write(`${line}\n`);
    if (process.env.METAL_TEST_LOGS) process.stderr.write(`[${name}] ${line}\n`);
  });
  const exited = new Promise<number | null>((resolve) =>
    proc.on('exit', (code, signal) => {
      running.delete(proc);
      // stdout may still hold lines: end the file after them.
      proc.stdout?.once('close', () => file?.end());
      resolve(code ?? (signal ? 128 : null));
    }),
  );
  return {
    name,
    proc,
    logs,
    exited,
    waitForLog(pred, timeoutMs = 30_000) {
      const hit = logs.find(pred);
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(
            new Error(
              `${name}: no matching log line within ${timeoutMs} ms (last: ${JSON.stringify(logs.slice(-3))})`,
            ),
          );
        }, timeoutMs);
        const check = (l: Record<string, unknown>) => {
          if (!pred(l)) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve(l);
        };
        listeners.add(check);
        void exited.then((code) => {
          if (!listeners.has(check)) return;
          clearTimeout(timer);
          listeners.delete(check);
          reject(new Error(`${name} exited (${code}) before the expected log line`));
        });
      });
    },
    stop: (signal = 'SIGTERM', timeoutMs = 20_000) => stopChild(proc, exited, signal, timeoutMs),
  };
}

/** The admin kubeconfig path of the current run's control plane. */
export function adminKubeconfig(): string {
  const dir = process.env.METAL_TEST_CP_DIR;
  if (!dir) throw new Error('METAL_TEST_CP_DIR is not set: start the control plane first (npm test does)');
  return readControlPlane(dir).kubeconfig;
}

export async function deleteIfExists(
  client: KubeClient,
  rt: ResourceType,
  name: string,
  namespace?: string,
): Promise<void> {
  try {
    await client.resource(rt).delete(name, { namespace });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}
