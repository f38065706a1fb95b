// Drives scripts/control-plane.sh (the one implementation of the local control plane) from
// TypeScript, and adds what tests need on top: CRD installation, etcd compaction, restarts.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import type { KubeClient } from '../../lib/kube/client.js';
import { Core } from '../../lib/kube/resources.js';
import { isAlreadyExists } from '../../lib/kube/errors.js';
import type { KubeObject } from '../../api/schema/meta.js';

const run = promisify(execFile);

export const REPO_ROOT = resolve(import.meta.dirname, '..', '..');
const SCRIPT = join(REPO_ROOT, 'scripts', 'control-plane.sh');

export interface ControlPlane {
  dir: string;
  kubeconfig: string;
  apiserverPort: number;
  etcdPort: number;
}

/** The API server's client certificate towards webhooks, and the CA that signs it (PEM file paths). */
export interface WebhookClientFiles {
  ca: string;
  cert: string;
  key: string;
}

/**
 * What the control plane in `dir` presents to admission webhooks (scripts/control-plane.sh makes it and
 * names it in the API server's AdmissionConfiguration); undefined for a directory without one.
 */
export function webhookClientFiles(dir: string): WebhookClientFiles | undefined {
  const pki = join(dir, 'pki');
  const files = {
    ca: join(pki, 'webhook-client-ca.crt'),
    cert: join(pki, 'webhook-client.crt'),
    key: join(pki, 'webhook-client.key'),
  };
  return Object.values(files).every((f) => existsSync(f)) ? files : undefined;
}

export function readControlPlane(dir: string): ControlPlane {
  const env = Object.fromEntries(
    readFileSync(join(dir, 'ports.env'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('=') as [string, string]),
  );
  return {
    dir,
    kubeconfig: join(dir, 'kubeconfig'),
    apiserverPort: Number(env.APISERVER_PORT),
    etcdPort: Number(env.ETCD_PORT),
  };
}

/**
 * Starts the control plane in `dir`. `profile: 'cluster'`: an API server that pods run against
 * (scripts/control-plane.sh says what changes).
 */
export async function controlPlaneUp(
  dir: string,
  options: { profile?: 'cluster' } = {},
): Promise<ControlPlane> {
  try {
    await run('bash', [SCRIPT, 'up', dir], {
      maxBuffer: 64 * 1024 * 1024,
      timeout: 20 * 60_000,
      env: {
        ...process.env,
        ...(options.profile ? { CONTROL_PLANE_PROFILE: options.profile } : {}),
      },
    });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`control plane failed to start: ${err.stderr || err.message}`, { cause: e });
  }
  return readControlPlane(dir);
}

/** Synchronous so it can run from process 'exit' handlers. */
export function controlPlaneDownSync(dir: string): void {
  execFileSync('bash', [SCRIPT, 'down', dir], { stdio: 'ignore', timeout: 60_000 });
}

/**
 * Stops the control plane in `dir` when this process exits, unless `stopped()` says its owner already
 * did: it runs in its own session (setsid), so nothing else would.
 */
export function downOnExit(dir: string, stopped: () => boolean): void {
  process.once('exit', () => {
    if (stopped()) return;
    try {
      controlPlaneDownSync(dir);
    } catch {
      // already down
    }
  });
}

/**
 * A scratch directory for a script's own control plane, torn down (processes stopped, directory
 * removed) exactly once: by `teardown()`, on exit, or on SIGINT/SIGTERM (which then exit 130).
 */
export function scratchControlPlaneDir(prefix: string): { dir: string; teardown: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let down = false;
  const teardown = () => {
    if (down) return;
    down = true;
    try {
      controlPlaneDownSync(dir);
    } catch {
      // never started, or already stopped
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', teardown);
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      teardown();
      process.exit(130);
    });
  return { dir, teardown };
}

export async function stopApiserver(dir: string): Promise<void> {
  await run('bash', [SCRIPT, 'stop-apiserver', dir]);
}

export async function startApiserver(dir: string): Promise<void> {
  await run('bash', [SCRIPT, 'start-apiserver', dir], { timeout: 120_000 });
}

/**
 * Compacts etcd's history up to its current revision (through etcd's JSON gateway), so any watch
 * that resumes from an older resourceVersion gets 410 Gone.
 */
export async function compactEtcd(cp: ControlPlane): Promise<number> {
  const base = `http://127.0.0.1:${cp.etcdPort}/v3/kv`;
  const range = (await (
    await fetch(`${base}/range`, {
      method: 'POST',
      body: JSON.stringify({ key: Buffer.from('/').toString('base64') }),
    })
  ).json()) as { header: { revision: string } };
  const revision = Number(range.header.revision);
  const res = await fetch(`${base}/compaction`, {
    method: 'POST',
    body: JSON.stringify({ revision: String(revision), physical: true }),
  });
  if (!res.ok) throw new Error(`etcd compaction failed: ${res.status} ${await res.text()}`);
  return revision;
}

interface CRD extends KubeObject {
  status?: { conditions?: { type: string; status: string }[] };
}

/** Installs (or updates) every CRD in manifests/crds and waits until each is Established. */
export function installCRDs(client: KubeClient, timeoutMs = 60_000): Promise<string[]> {
  const dir = join(REPO_ROOT, 'manifests', 'crds');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .map((f) => join(dir, f));
  return installCRDFiles(client, files, timeoutMs);
}

/** Installs (or updates) the CRD in each file and waits until each is Established; returns their names. */
export async function installCRDFiles(
  client: KubeClient,
  files: readonly string[],
  timeoutMs = 60_000,
): Promise<string[]> {
  const crds = client.resource<CRD>(Core.CustomResourceDefinition);
  const names: string[] = [];
  for (const file of files) {
    const doc = parse(readFileSync(file, 'utf8')) as CRD;
    names.push(doc.metadata.name!);
    try {
      await crds.create(doc);
    } catch (e) {
      if (!isAlreadyExists(e)) throw new Error(`installing ${file}: ${(e as Error).message}`, { cause: e });
      const current = await crds.get(doc.metadata.name!);
      await crds.replace({
        ...doc,
        metadata: { ...doc.metadata, resourceVersion: current.metadata.resourceVersion },
      });
    }
  }
  const deadline = Date.now() + timeoutMs;
  for (const name of names) {
    for (;;) {
      const crd = await crds.get(name);
      if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${name} not Established within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return names;
}
