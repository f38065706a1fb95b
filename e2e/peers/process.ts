// Peer processes for the Redfish conformance tests: prepare them with our scripts, start them on
// a free loopback port, wait until `GET /redfish/v1/` answers, and stop exactly that PID.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Runs `scripts/lib/<name>` and returns the cache directory it prints; fails loudly with its advice. */
export function preparePeer(script: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      [join(REPO_ROOT, 'scripts', 'lib', script)],
      { env, timeout: 600_000 },
      (err, stdout, stderr) => {
        if (err) {
          reject(
            new Error(`peer preparation ${script} failed (exit ${String(err.code)}):\n${stderr.trim()}`),
          );
          return;
        }
        resolve(stdout.trim().split('\n').pop() ?? '');
      },
    );
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

export interface PeerSpec {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** Base URL; readiness is `GET <url>/redfish/v1/` answering 200. */
  url: string;
  ca?: string;
  readyTimeoutMs?: number;
}

export class PeerProcess {
  readonly name: string;
  readonly pid: number;
  readonly #child: ChildProcess;
  #output = '';
  #exited = false;

  constructor(name: string, child: ChildProcess) {
    this.name = name;
    this.#child = child;
    if (child.pid === undefined) throw new Error(`${name}: could not start`);
    this.pid = child.pid;
    const keep = (b: Buffer): void => {
      this.#output = (this.#output + b.toString()).slice(-4_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.on('exit', () => {
      this.#exited = true;
    });
    LIVE.add(this);
  }

  get exited(): boolean {
    return this.#exited;
  }

  /** The last lines the peer printed, for failure messages. */
  get output(): string {
    return this.#output;
  }

  /** SIGTERM to this PID only; SIGKILL if it is still there after 5 s. */
  async stop(): Promise<void> {
    LIVE.delete(this);
    if (this.#exited) return;
    const gone = new Promise<void>((resolve) => this.#child.once('exit', () => resolve()));
    this.#child.kill('SIGTERM');
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 5_000);
    await gone;
    clearTimeout(timer);
  }

  killNow(): void {
    if (!this.#exited) this.#child.kill('SIGKILL');
  }
}

/** Peers still running; killed when the test process exits, whatever happened to the tests. */
const LIVE = new Set<PeerProcess>();
process.once('exit', () => {
  for (const p of LIVE) p.killNow();
});

async function answers(url: string, dispatcher: Agent): Promise<boolean> {
  try {
    const res = await request(`${url}/redfish/v1/`, { dispatcher, signal: AbortSignal.timeout(1_000) });
    await res.body.dump();
    return res.statusCode === 200;
  } catch {
    return false;
  }
}

export async function startPeer(spec: PeerSpec): Promise<PeerProcess> {
  const child = spawn(spec.command, spec.args, {
    env: { ...process.env, ...spec.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const peer = new PeerProcess(spec.name, child);
  const dispatcher = new Agent({ connect: { ca: spec.ca } });
  const deadline = Date.now() + (spec.readyTimeoutMs ?? 20_000);
  try {
    while (!(await answers(spec.url, dispatcher))) {
      if (peer.exited) throw new Error(`${spec.name} exited before it answered:\n${peer.output}`);
      if (Date.now() > deadline)
        throw new Error(`${spec.name} did not answer ${spec.url}/redfish/v1/ in time:\n${peer.output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (e) {
    await peer.stop();
    throw e;
  } finally {
    await dispatcher.close();
  }
  return peer;
}
