// The running system for the demo and the rollout benchmark: the admission webhook (its harness,
// e2e/harness/webhook.ts) and the controller binaries, each a process under its own ServiceAccount
// (manifests/<name>-controller/rbac.yaml). A controller whose binary or manifests are not in this
// checkout is reported as missing instead of failing the start, so the demo runs with what exists.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import type { KubeClient } from '../../lib/kube/client.js';
import { Core } from '../../lib/kube/resources.js';
import { isAlreadyExists } from '../../lib/kube/errors.js';
import { POLICY_CONFIGMAP } from '../../policies/schema.js';
import { REPO_ROOT } from '../harness/control-plane.js';
import {
  ensureNamespace,
  kubeconfigForBinary,
  spawnBinary,
  stopChild,
  SYSTEM_NAMESPACE,
  type RunningBinary,
} from '../harness/processes.js';
import { startWebhook, type WebhookHandle } from '../harness/webhook.js';
import { setTimeout as sleep } from 'node:timers/promises';

export const LIFECYCLE_CONTROLLERS = ['maintenance', 'approval', 'budget'] as const;
/** What acts 6 and 7 add: BIOS/BMC objects and their Sets, and MaintenancePipelines. */
export const FIRMWARE_CONTROLLERS = ['firmware', 'pipeline'] as const;

/** A controller process, however it was started. */
export interface ControllerProcess {
  pid: number;
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>;
}

export interface StartedController {
  name: string;
  process: ControllerProcess;
  pid: number;
  opsPort: number;
}

/**
 * How controllers run: `tsx` (the TypeScript sources, as tests run them) or `node` (compiled with
 * tsconfig.build.json, as the image runs them: `node dist/controllers/<name>/main.js`). Memory is
 * measured on `node`: tsx's loader alone adds about 80 MiB to a process.
 */
export type Runtime = 'tsx' | 'node';

/** Compiles the product (tsconfig.build.json) under .tmp/, where node_modules resolves; returns the directory. */
export function buildProduct(outDir = join(REPO_ROOT, '.tmp', 'stack-dist')): string {
  try {
    execFileSync(
      process.execPath,
      [
        join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
        '-p',
        'tsconfig.build.json',
        '--outDir',
        outDir,
      ],
      {
        cwd: REPO_ROOT,
        stdio: 'pipe',
      },
    );
  } catch (e) {
    // Type errors elsewhere still emit JavaScript; only a missing entry point is fatal (checked at start).
    const out = String((e as { stdout?: Buffer }).stdout ?? '');
    if (!out.includes('error TS')) throw e;
  }
  return outDir;
}

const children = new Set<ReturnType<typeof spawn>>();
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

/**
 * The node flags a controller's Deployment runs it with (`command: [node, <flags>..., <entry>]` in
 * manifests/<name>-controller/deployment.yaml), so what is measured here is what is shipped.
 */
export function manifestNodeFlags(name: string): string[] {
  const file = join(REPO_ROOT, 'manifests', `${name}-controller`, 'deployment.yaml');
  const deployment = parse(readFileSync(file, 'utf8')) as {
    spec: { template: { spec: { containers: { command?: string[] }[] } } };
  };
  const command = deployment.spec.template.spec.containers[0]?.command ?? [];
  if (command[0] !== 'node') throw new Error(`${file}: the container command does not start with node`);
  return command.slice(1).filter((a) => a.startsWith('--'));
}

/** Runs compiled JavaScript under node; stdout (pino) is discarded, stderr shows crashes. */
function spawnNode(entry: string, args: string[], nodeFlags: string[] = []): ControllerProcess {
  const proc = spawn(process.execPath, [...nodeFlags, entry, ...args], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.add(proc);
  const exited = new Promise<number | null>((resolve) =>
    proc.on('exit', (code, signal) => {
      children.delete(proc);
      resolve(code ?? (signal ? 128 : null));
    }),
  );
  return {
    pid: proc.pid ?? 0,
    exited,
    stop: (signal = 'SIGTERM', timeoutMs = 10_000) => stopChild(proc, exited, signal, timeoutMs),
  };
}

function fromBinary(b: RunningBinary): ControllerProcess {
  return { pid: b.proc.pid ?? 0, exited: b.exited, stop: (signal, timeoutMs) => b.stop(signal, timeoutMs) };
}

export interface StackOptions {
  admin: KubeClient;
  /** Webhook replicas; 0 runs without the webhook. */
  webhookReplicas: number;
  /** Controller names (directories under controllers/). */
  controllers: readonly string[];
  logLevel?: string;
  /** Extra flags per controller name. */
  controllerArgs?: Record<string, string[]>;
  /** Default tsx. */
  runtime?: Runtime;
  /** Progress messages ("webhook: 2 replicas serving"). */
  say?: (message: string) => void;
  /** The control plane's directory: the webhook then serves only its API server (see startWebhook). */
  controlPlaneDir?: string;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Writes the policy ConfigMap (replacing one that exists) from a policy document. */
export async function applyPolicy(admin: KubeClient, policy: Record<string, unknown>): Promise<void> {
  await ensureNamespace(admin, SYSTEM_NAMESPACE);
  const cm = {
    metadata: { name: POLICY_CONFIGMAP.name, namespace: POLICY_CONFIGMAP.namespace },
    data: { [POLICY_CONFIGMAP.key]: stringify(policy) },
  };
  const res = admin.resource(Core.ConfigMap);
  try {
    await res.create(cm);
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
    const cur = await res.get(cm.metadata.name, cm.metadata.namespace);
    await res.replace({ ...cm, metadata: { ...cm.metadata, resourceVersion: cur.metadata.resourceVersion } });
  }
}

/** Whether this checkout has a controller's binary and manifests. */
export function controllerAvailable(name: string): boolean {
  return (
    existsSync(join(REPO_ROOT, 'controllers', name, 'main.ts')) &&
    existsSync(join(REPO_ROOT, 'manifests', `${name}-controller`, 'rbac.yaml'))
  );
}

/** Peak resident set (VmHWM) and current RSS of a process, in MiB, from /proc. */
export function memoryMiB(pid: number): { hwm: number; rss: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { hwm: kb('VmHWM') / 1024, rss: kb('VmRSS') / 1024 };
  } catch {
    return undefined;
  }
}

export class Stack {
  webhook: WebhookHandle | undefined;
  readonly controllers: StartedController[] = [];
  readonly missing: string[] = [];
  readonly #o: StackOptions;
  #dist: string | undefined;

  private constructor(o: StackOptions) {
    this.#o = o;
  }

  /** Starts the webhook and the controllers; on failure stops what started and rethrows. */
  static async start(o: StackOptions): Promise<Stack> {
    const stack = new Stack(o);
    try {
      if (o.runtime === 'node') {
        o.say?.('compiling the controllers (tsconfig.build.json) to run them as the image does');
        stack.#dist = buildProduct();
      }
      if (o.webhookReplicas > 0) {
        stack.webhook = await startWebhook(o.admin, {
          replicas: o.webhookReplicas,
          ...(o.controlPlaneDir ? { controlPlaneDir: o.controlPlaneDir } : {}),
        });
        o.say?.(`webhook: ${o.webhookReplicas} replica(s) serving at ${stack.webhook.url}`);
      }
      await Promise.all(o.controllers.map((name) => stack.#startController(name)));
    } catch (e) {
      await stack.stop();
      throw e;
    }
    return stack;
  }

  has(name: string): boolean {
    return this.controllers.some((c) => c.name === name);
  }

  async #startController(name: string): Promise<void> {
    if (
      !controllerAvailable(name) ||
      (this.#dist && !existsSync(join(this.#dist, 'controllers', name, 'main.js')))
    ) {
      this.missing.push(name);
      this.#o.say?.(`${name}-controller: not in this checkout; running without it`);
      return;
    }
    const { kubeconfig } = await kubeconfigForBinary(this.#o.admin, `${name}-controller`);
    const opsPort = await freePort();
    const args = [
      `--kubeconfig=${kubeconfig}`,
      '--ops-host=127.0.0.1',
      `--ops-port=${opsPort}`,
      `--log-level=${this.#o.logLevel ?? 'warn'}`,
      ...(this.#o.controllerArgs?.[name] ?? []),
    ];
    const proc = this.#dist
      ? spawnNode(join(this.#dist, 'controllers', name, 'main.js'), args, manifestNodeFlags(name))
      : fromBinary(spawnBinary(`${name}-controller`, join('controllers', name, 'main.ts'), args));
    this.controllers.push({ name, process: proc, pid: proc.pid, opsPort });
    await this.#waitReady(name, proc, opsPort);
    this.#o.say?.(`${name}-controller: ready (pid ${proc.pid}${this.#dist ? ', compiled' : ''})`);
  }

  /** Ready = /readyz answers 200 (caches synced); leadership follows within a retry period. */
  async #waitReady(name: string, proc: ControllerProcess, port: number, timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let exited: number | null | undefined;
    void proc.exited.then((code) => (exited = code));
    while (Date.now() < deadline) {
      if (exited !== undefined) throw new Error(`${name}-controller exited (${exited}) before it was ready`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`);
        if (res.ok) return;
      } catch {
        // not listening yet
      }
      await sleep(200);
    }
    throw new Error(`${name}-controller not ready within ${timeoutMs} ms`);
  }

  /** Prometheus text of a controller's /metrics. */
  async metrics(name: string): Promise<string> {
    const c = this.controllers.find((x) => x.name === name);
    if (!c) throw new Error(`${name}-controller is not running`);
    return (await fetch(`http://127.0.0.1:${c.opsPort}/metrics`)).text();
  }

  /** Stops controllers (SIGTERM, then SIGKILL) and the webhook. Never throws. */
  async stop(): Promise<void> {
    await Promise.all(this.controllers.map((c) => c.process.stop('SIGTERM', 10_000).catch(() => undefined)));
    await this.webhook?.stop();
  }
}
