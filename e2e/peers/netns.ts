// Runs a program whose listeners cannot be kept off all interfaces (metal-operator's registry binds
// `:10000`) in a network namespace of its own that has only loopback: whatever it binds is reachable
// from nowhere but the bridges made here. Host ports the program needs (the API server, BMC mocks) are
// bridged in at the same 127.0.0.1 port; namespace ports the test needs are bridged out to a loopback
// port of the host. Bridges are Unix sockets in a private directory; no address outside 127.0.0.1.
//
//   const p = await startInNetns({ name: 'manager', command, args, inbound: [apiPort], outbound: [10000] });
//   p.hostPort(10000)  // host loopback port that reaches the namespace's 127.0.0.1:10000
//   await p.stop();
//
// Needs util-linux `unshare` (user + network namespaces; root or unprivileged user namespaces) and
// iproute2 `ip`; fails saying so when either is missing.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from './process.js';
import { inSocket, listen, outSocket, pipe, type AgentConfig } from './netns-protocol.js';

export interface NetnsSpec {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  inbound: number[];
  outbound: number[];
  readyTimeoutMs?: number;
}

export interface NetnsProcess {
  name: string;
  /** PID of the program itself (for kill -9), not of the agent around it. */
  pid: number;
  hostPort(namespacePort: number): number;
  /** Every line the program printed (stdout and stderr), in order. */
  lines: string[];
  waitForLine(pred: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  exited: Promise<number | null>;
  /** SIGTERM to the program (through the agent), SIGKILL after `timeoutMs`; closes the bridges. */
  stop(timeoutMs?: number): Promise<void>;
}

function requireTool(tool: string, pkg: string): void {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
  } catch {
    throw new Error(`MISSING TOOL: '${tool}' not found; install ${pkg} (apt-get install ${pkg})`);
  }
}

// Agents and the programs in them, killed when the test process exits, whatever happened to the tests.
const live = new Set<ChildProcess>();
const livePids = new Set<number>();
process.once('exit', () => {
  for (const pid of livePids) killQuietly(pid);
  for (const c of live) c.kill('SIGKILL');
});

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

export async function startInNetns(spec: NetnsSpec): Promise<NetnsProcess> {
  requireTool('unshare', 'util-linux');
  requireTool('ip', 'iproute2');
  const dir = mkdtempSync(join(tmpdir(), 'metal-netns-'));
  const bridges: Server[] = [];
  for (const port of spec.inbound) {
    const s = createServer((c) => pipe(c, createConnection({ host: '127.0.0.1', port })));
    await listen(s, inSocket(dir, port));
    bridges.push(s);
  }
  const config: AgentConfig = {
    dir,
    inbound: spec.inbound,
    outbound: spec.outbound,
    command: spec.command,
    args: spec.args,
    env: spec.env ?? {},
  };
  writeFileSync(join(dir, 'agent.json'), JSON.stringify(config));
  const agent = spawn(
    'unshare',
    [
      '--user',
      '--map-root-user',
      '--net',
      '--',
      'sh',
      '-c',
      'ip link set lo up && exec "$@"',
      'sh',
      process.execPath,
      '--import',
      'tsx',
      join(REPO_ROOT, 'e2e', 'peers', 'netns-agent.ts'),
      join(dir, 'agent.json'),
    ],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  live.add(agent);
  const lines: string[] = [];
  const listeners = new Set<(l: string) => void>();
  createInterface({ input: agent.stderr }).on('line', (l) => {
    if (lines.length < 50_000) lines.push(l);
    for (const f of listeners) f(l);
    if (process.env.METAL_TEST_LOGS) process.stderr.write(`[${spec.name}] ${l}\n`);
  });
  const exited = new Promise<number | null>((resolve) =>
    agent.on('exit', (code) => {
      live.delete(agent);
      for (const b of bridges) b.close();
      rmSync(dir, { recursive: true, force: true });
      resolve(code);
    }),
  );
  const pid = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(new Error(`${spec.name}: namespace agent not ready in time:\n${lines.slice(-20).join('\n')}`)),
      spec.readyTimeoutMs ?? 30_000,
    );
    createInterface({ input: agent.stdout }).on('line', (l) => {
      const msg = JSON.parse(l) as { event: string; pid?: number };
      if (msg.event !== 'ready' || msg.pid === undefined) return;
      clearTimeout(timer);
      resolve(msg.pid);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${spec.name}: exited (${code}) before it started:\n${lines.slice(-20).join('\n')}`));
    });
  });
  livePids.add(pid);
  void exited.then(() => livePids.delete(pid));
  const hostPorts = new Map<number, number>();
  for (const port of spec.outbound) {
    const s = createServer((c) => pipe(c, createConnection(outSocket(dir, port))));
    await listen(s, 0, '127.0.0.1');
    bridges.push(s);
    const addr = s.address();
    hostPorts.set(port, typeof addr === 'object' && addr ? addr.port : 0);
  }
  return {
    name: spec.name,
    pid,
    lines,
    exited,
    hostPort(port) {
      const p = hostPorts.get(port);
      if (p === undefined) throw new Error(`${spec.name}: port ${port} is not bridged out`);
      return p;
    },
    waitForLine(pred, timeoutMs = 30_000) {
      const hit = lines.find(pred);
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const check = (l: string) => {
          if (!pred(l)) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve(l);
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(
            new Error(
              `${spec.name}: no matching line within ${timeoutMs} ms:\n${lines.slice(-10).join('\n')}`,
            ),
          );
        }, timeoutMs);
        listeners.add(check);
      });
    },
    async stop(timeoutMs = 10_000) {
      if (agent.exitCode !== null || agent.signalCode !== null) return;
      agent.kill('SIGTERM');
      const timer = setTimeout(() => {
        killQuietly(pid);
        agent.kill('SIGKILL');
      }, timeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
